"""Training pipeline on a tiny random Llama: corpus -> Medusa / EAGLE / drafter / LoRA, in seconds."""
import random
import warnings

import pytest
import torch

from specviz.engine import artifacts
from specviz.engine.models import tiny_llama
from specviz.train import corpus, jobs


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny target and a greedy corpus it wrote itself from random prompts."""
    target = tiny_llama(vocab_size=96, layers=2, hidden=32, seed=0)
    with torch.no_grad():   # sharper logits than the 0.02 init: text with structure to learn
        target.model.model.embed_tokens.weight.mul_(20.0)
    r = random.Random(0)
    prompts = [[r.randrange(2, 96) for _ in range(r.randint(6, 16))] for _ in range(48)]
    folder = tmp_path_factory.mktemp("corpus")
    meta = corpus.build_from_ids(target, prompts, [False] * len(prompts), folder, batch=16, max_new=40,
                                 sampled_share=0.0, temperature=1.0, pad_id=1, eos_id=None, progress=False)
    return target, folder, meta


def test_corpus_is_labelled_and_resumable(tiny):
    target, folder, meta = tiny
    assert meta["sequences"] == 48 and meta["reply_tokens"] == 48 * 40
    seqs = corpus.load(folder, ("ids", "hidden", "label"), target=target)
    s = seqs[0]
    with torch.no_grad():   # the stored label is the target's argmax given the true prefix
        logits = target.model(input_ids=s["ids"].long()[None]).logits[0]
    assert torch.equal(logits.argmax(-1).int(), s["label"])
    again = corpus.build_from_ids(target, [[5, 6]] * 48, [False] * 48, folder, batch=16, max_new=40,
                                  pad_id=1, progress=False)   # every shard exists: nothing regenerated
    assert again["tokens"] == meta["tokens"]


def test_corpus_stops_between_shards_when_out_of_time_and_resumes(tiny, tmp_path):
    target, _, _ = tiny
    prompts = [[5, 6, 7]] * 32
    out = corpus.build_from_ids(target, prompts, [False] * 32, tmp_path, batch=16, max_new=8,
                                pad_id=1, progress=False, max_minutes=0.0)   # out of time before the first shard
    assert out["sequences"] == 0 and corpus.shards(tmp_path) == []
    out = corpus.build_from_ids(target, prompts, [False] * 32, tmp_path, batch=16, max_new=8,
                                pad_id=1, progress=False)                   # a rerun resumes and finishes
    assert out["sequences"] == 32 and len(corpus.shards(tmp_path)) == 2


def _fell(card, before_key, after_key, i=None):
    b, a = card["heldout_before"][before_key], card["heldout"][after_key]
    return (b[i], a[i]) if i is not None else (b, a)


def test_medusa_learns_and_ships(tiny, tmp_path):
    target, folder, _ = tiny
    c = jobs.medusa(target, folder, tmp_path / "run", tmp_path / "models", steps=300, tokens=256, lr=5e-3,
                    vocab=96, progress=False)
    b, a = _fell(c, "heldout_loss_per_head", "heldout_loss_per_head", 0)
    assert a <= 0.7 * b, (b, a)
    assert c["heldout"]["heldout_top1_per_head"][0] > c["heldout"]["most_frequent_token_top1"]
    assert c["target_fingerprint"] == target.fingerprint() and c["bytes"] > 0
    assert artifacts.available(tmp_path / "models")["medusa"]
    p = artifacts.load_medusa(target, tmp_path / "models")
    assert p.needs_hidden and len(p.heads.blocks) == 4
    assert p.heads.blocks[0].linear is not p.heads.blocks[1].linear


def test_eagle_learns_and_ships(tiny, tmp_path):
    target, folder, _ = tiny
    c = jobs.eagle(target, folder, tmp_path / "run", tmp_path / "models", steps=150, tokens=256, lr=3e-3,
                   vocab=96, progress=False)
    b, a = _fell(c, "heldout_loss_per_step", "heldout_loss_per_step", 0)
    assert a <= 0.7 * b, (b, a)
    assert c["heldout"]["heldout_top1_per_step"][0] > c["heldout"]["most_frequent_token_top1"]
    artifacts.load_eagle(target, tmp_path / "models")


def test_drafter_learns_ships_and_loads_as_a_causal_lm(tiny, tmp_path):
    target, folder, _ = tiny
    c = jobs.drafter(target, folder, tmp_path / "run", tmp_path / "models", steps=150, tokens=256, lr=3e-3,
                     vocab=96, progress=False)
    b, a = c["heldout_before"]["heldout_loss"], c["heldout"]["heldout_loss"]
    assert a <= 0.7 * b, (b, a)
    assert c["heldout"]["heldout_top1"] > c["heldout"]["most_frequent_token_top1"]
    d = artifacts.load_drafter(target, tmp_path / "models")
    assert d.vocab_size == target.vocab_size
    out = d.model(input_ids=torch.tensor([[3, 4, 5]])).logits       # (1, 3, V): an ordinary causal LM
    assert out.shape == (1, 3, 96)


def test_training_resumes_from_its_checkpoint(tiny, tmp_path):
    target, folder, _ = tiny
    kw = dict(tokens=128, lr=3e-3, vocab=96, progress=False)
    jobs.medusa(target, folder, tmp_path / "a", tmp_path / "m1", steps=20, **kw)
    half = jobs.medusa(target, folder, tmp_path / "b", tmp_path / "m2", steps=20, max_minutes=0.0, **kw)
    assert half["steps"] == 1 and half["stopped_early"]          # interrupted after one step
    done = jobs.medusa(target, folder, tmp_path / "b", tmp_path / "m2", steps=20, **kw)
    assert done["steps"] == 20
    from safetensors.torch import load_file
    a, b = load_file(str(tmp_path / "m1/medusa.safetensors")), load_file(str(tmp_path / "m2/medusa.safetensors"))
    assert all(torch.allclose(a[k].float(), b[k].float(), atol=1e-2) for k in a)


def test_lora_makes_another_checkpoint_and_heads_warn(tiny, tmp_path):
    target, folder, _ = tiny
    r = random.Random(1)
    chunks = [torch.tensor([r.choice([7, 8, 9]) if i % 2 else 10 for i in range(16)]) for _ in range(40)]
    c = jobs.lora(target, tmp_path / "run", tmp_path / "models", steps=60, batch=4, lr=1e-2, rank=4,
                  alpha=8.0, chunks=(chunks[4:], chunks[:4]), progress=False)
    assert c["docs_heldout_loss"] < 0.7 * c["docs_heldout_loss_base"]
    jobs.medusa(target, folder, tmp_path / "run2", tmp_path / "models", steps=5, tokens=64, vocab=96,
                progress=False)
    ft = artifacts.load_finetuned_target(target, tmp_path / "models")
    assert ft.fingerprint() != target.fingerprint()
    assert ft.model is not target.model
    with pytest.warns(artifacts.CheckpointMismatch):
        artifacts.load_medusa(ft, tmp_path / "models")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        artifacts.load_medusa(target, tmp_path / "models")   # its own checkpoint: no warning


def test_sum_min_is_the_overlap_of_p_and_q():
    from specviz.proposers.vocab import SubsetHead
    from specviz.train.overlap import sum_min
    g = torch.Generator().manual_seed(0)
    w, h = torch.randn(50, 8, generator=g), torch.randn(6, 8, generator=g)     # (V, H), (n, H)
    full = SubsetHead(w, torch.arange(50))
    p = torch.softmax(h @ w.T / 0.8, -1)                                        # (n, V)
    assert torch.allclose(sum_min(h, h @ w.T, full), torch.ones(6), atol=1e-5)  # q = p: always kept
    q_logits = torch.randn(6, 50, generator=g)
    brute = torch.minimum(p, torch.softmax(q_logits / 0.8, -1)).sum(-1)
    assert torch.allclose(sum_min(h, q_logits, full, chunk=4), brute, atol=1e-6)
    sub = SubsetHead(w, torch.tensor([3]))                                      # q one-hot on token 3
    assert torch.allclose(sum_min(h, torch.zeros(6, 1), sub), p[:, 3], atol=1e-6)


def test_eagle_kl_learns_the_targets_distribution(tiny, tmp_path, monkeypatch):
    target, folder, _ = tiny
    monkeypatch.setattr("sys.argv", ["/x/specviz/__main__.py", "train", "eagle", "--loss", "kl"])
    c = jobs.eagle(target, folder, tmp_path / "run", tmp_path / "models", steps=150, tokens=256, lr=3e-3,
                   vocab=96, progress=False, mode="kl")
    b, a = _fell(c, "heldout_sum_min_pq_t08_per_step", "heldout_sum_min_pq_t08_per_step", 0)
    assert c["loss"] == "kl" and 0 <= b < a <= 1, (b, a)
    assert c["heldout"]["heldout_top1_per_step"][0] > c["heldout"]["most_frequent_token_top1"]
    from specviz.train import readme
    text = readme.write(tmp_path / "models", eval_dir=tmp_path / "no-eval", notes="NOTES")
    row = next(r for r in text.splitlines() if r.startswith("| eagle |"))
    assert "kl loss" in row and str(c["heldout"]["heldout_sum_min_pq_t08_per_step"]) in row
    assert "NOTES" in text and "bench/results.md" in text and (tmp_path / "models" / "README.md").exists()
    assert f"# {folder}: no command recorded" in text and "\npython -m specviz train eagle --loss kl\n" in text


def test_a_corpus_may_span_several_folders(tiny, tmp_path):
    target, folder, meta = tiny
    other = corpus.build_from_ids(target, [[5, 6, 7]] * 16, [False] * 16, tmp_path, batch=16, max_new=8,
                                  pad_id=1, progress=False)
    both = f"{folder},{tmp_path}"
    assert len(corpus.load(both, ("ids",))) == meta["sequences"] + other["sequences"]
    info = jobs._corpus_info(both)
    assert info["sequences"] == meta["sequences"] + other["sequences"] and len(info["seeds"]) == 2


def test_data_card_names_each_folder_and_the_total(tiny, tmp_path):
    target, folder, meta = tiny
    card = corpus.data_card(str(folder))
    n = len(corpus.prompt_keys(folder))
    assert 0 < n <= meta["sequences"]
    assert folder.name in card
    assert f"| **total** | | {n:,} distinct | {meta['sequences']:,} | {meta['tokens']:,} |" in card
    from specviz.cli import main
    assert main(["train", "card", "--corpus", str(tmp_path / "none"), "--out", str(tmp_path / "c.md")]) == 2
    assert main(["train", "card", "--corpus", str(folder), "--out", str(tmp_path / "c.md")]) == 0
    from specviz.engine import artifacts
    shipped = {n: artifacts.card(n) for n, ok in artifacts.available().items() if ok}
    assert (tmp_path / "c.md").read_text() == corpus.data_card(str(folder), shipped)


def test_data_card_says_which_artifacts_trained_on_each_folder(tiny):
    _, folder, meta = tiny
    cards = {"eagle": {"corpus": {"folders": [f"runs/{folder.name}", "runs/other"]}},
             "medusa": {"corpus": {"seeds": [meta["seed"], 7]}},          # a card from before "folders"
             "drafter": {"corpus": {"folders": ["runs/other"]}}, "lora": {"corpus": None}}
    row = next(r for r in corpus.data_card(str(folder), cards).splitlines() if r.startswith(f"| {folder.name} |"))
    assert row.endswith("| eagle, medusa |")
