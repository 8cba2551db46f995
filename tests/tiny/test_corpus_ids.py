"""The kept corpus (token ids only, uint16), features recomputed by teacher forcing, and draft-vocabulary
sizing, on a tiny random Llama."""
import json
import random

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_file

from specviz.core import costmodel
from specviz.engine.models import tiny_llama
from specviz.train import corpus, vocabsize
from specviz.train.data import load_split, prompt_key


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    target = tiny_llama(vocab_size=96, layers=3, hidden=32, seed=0)
    with torch.no_grad():
        target.model.model.embed_tokens.weight.mul_(20.0)
    r = random.Random(0)
    prompts = [[r.randrange(2, 96) for _ in range(r.randint(6, 16))] for _ in range(48)]
    folder = tmp_path_factory.mktemp("ids") / "c"
    corpus.build_from_ids(target, prompts, [False] * 48, folder, batch=16, max_new=24, sampled_share=0.0,
                          pad_id=1, progress=False)
    return target, folder


def test_shards_hold_uint16_ids_and_no_features(tiny):
    _, folder = tiny
    with safe_open(str(corpus.shards(folder)[0]), "pt") as f:
        assert set(f.keys()) == {"ids", "starts", "prompt_len", "copy", "temperature"}
        assert f.get_tensor("ids").dtype == torch.uint16
    assert json.loads((folder / "meta.json").read_text())["stores"] == "ids"
    assert 49_152 <= 2 ** 16                           # SmolLM2's vocabulary fits the stored ids
    with pytest.raises(ValueError, match="does not fit"):
        corpus.ids_tensor([1, 2], 70_000)


def test_features_are_the_targets_own_teacher_forced_outputs(tiny):
    target, folder = tiny
    with pytest.raises(ValueError, match="token ids only"):
        corpus.load(folder, ("ids", "hidden"))         # no target: a clear message, not a KeyError
    s = corpus.load(folder, ("ids", "hidden", "label", "topv", "topi"), target=target, layers=[0, 2], batch=5)[7]
    with torch.no_grad():
        out = target.model(input_ids=s["ids"].long()[None], output_hidden_states=True)
    assert torch.equal(out.logits[0].argmax(-1).int(), s["label"])
    assert torch.allclose(s["hidden"].float(), out.hidden_states[-1][0], atol=2e-2, rtol=2e-2)
    assert torch.allclose(s["layers"][0].float(), out.hidden_states[1][0], atol=2e-2, rtol=2e-2)  # after layer 0
    assert s["topi"][:, 0].equal(s["label"]) and s["topv"].shape == (len(s["ids"]), 8)
    with pytest.raises(ValueError, match="out of range"):
        corpus.features(target, [s["ids"]], layers=[3])


def _old_folder(tiny, tmp_path):
    """A corpus folder in the format from before: features stored beside the int32 ids."""
    target, folder = tiny
    seqs = corpus.load(folder, ("ids", "hidden", "label", "topv", "topi"), target=target)
    old = tmp_path / "old"
    old.mkdir()
    cat = lambda k: torch.cat([s[k] for s in seqs])  # noqa: E731
    save_file({"ids": cat("ids"), "hidden": cat("hidden"), "label": cat("label"), "topv": cat("topv"),
               "topi": cat("topi"), "starts": torch.tensor([0] + [len(s["ids"]) for s in seqs]).cumsum(0),
               "prompt_len": torch.tensor([s["prompt_len"] for s in seqs], dtype=torch.int32),
               "copy": torch.zeros(len(seqs), dtype=torch.int8), "temperature": torch.tensor([0.0])},
              str(old / "shard_0000.safetensors"))
    return old, seqs


def test_old_shards_with_stored_features_still_load_and_convert(tiny, tmp_path):
    old, seqs = _old_folder(tiny, tmp_path)
    cat = lambda k: torch.cat([s[k] for s in seqs])  # noqa: E731
    back = corpus.load(old, ("ids", "hidden", "label"))                 # stored features: no target needed
    assert all(torch.equal(a["label"], b["label"]) for a, b in zip(back, seqs))
    meta = corpus.keep_ids(old, tmp_path / "kept")
    assert meta["tokens"] == len(cat("ids")) and meta["bytes"] < 0.2 * (old / "shard_0000.safetensors").stat().st_size
    a, b = load_split(str(old), ("ids",)), load_split(str(tmp_path / "kept"), ("ids",))
    assert [prompt_key(s) for s in a[1]] == [prompt_key(s) for s in b[1]]  # the held-out prompts are unchanged


def test_features_command_prints_its_rate(capsys):
    from specviz.cli import main
    assert main(["train", "features", "--tiny", "--sequences", "4", "--length", "32", "--layers", "0,2"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["tokens"] == 4 * 32 and out["tokens_per_s"] > 0 and out["layers"] == [0, 2]
    assert main(["train", "features", "--tiny", "--layers", "9"]) == 2
    assert "out of range" in capsys.readouterr().err


def test_vocab_size_table_has_a_row_per_size_and_picks_the_argmax(tiny, tmp_path):
    target, folder = tiny
    res = vocabsize.sweep(target, folder, [8, 24, 96], tmp_path / "run", steps=30, k=2, repeats=2, max_new=8)
    rows = res["rows"]
    assert [r["size"] for r in rows] == [8, 24, 96] and [r["ids"] for r in rows] == [8, 24, 96]
    assert res["chosen"] == max(rows, key=lambda r: r["speedup_greedy"])["size"]
    for r in rows:   # the cost model's own formula, fed the measured alpha, c and v
        assert abs(r["speedup_greedy"] - costmodel.speedup(r["alpha_greedy"], 2, r["c"], res["v"])) < 5e-3
        assert r["c"] > 0 and 0 <= r["alpha_greedy"] <= 1
    assert rows[-1]["sum_min_pq_t08_per_step"][0] >= rows[0]["sum_min_pq_t08_per_step"][0]  # more ids, more mass
    md = (tmp_path / "run" / "vocab_size.md").read_text()
    assert len([x for x in md.splitlines() if x.startswith("| ") and x[2].isdigit()]) == 3
    assert f"Chosen: {res['chosen']:,} ids" in md


def test_vocab_size_command_refuses_bad_sizes(tmp_path, capsys):
    from specviz.cli import main
    assert main(["train", "vocab-size", "--sizes", "4k,8k", "--corpus", str(tmp_path)]) == 2
    assert "comma-separated whole numbers" in capsys.readouterr().err


def test_the_data_card_says_what_each_folder_stores_and_its_size(tiny, tmp_path):
    target, folder = tiny
    old, _ = _old_folder(tiny, tmp_path)
    card = corpus.data_card(f"{folder},{old}")
    row = lambda name: next(r for r in card.splitlines() if r.startswith(f"| {name} |"))  # noqa: E731
    mb = corpus.folder_bytes(folder) / 1e6
    assert f"| ids ({mb:.2f}) |" in row(folder.name) and "| ids + features (" in row("old")
    assert f"(`{folder}`) are meant to be committed" in card
    n = sum(corpus.folder_meta(d)["tokens"] for d in (folder, old))
    seqs = sum(corpus.folder_meta(d)["sequences"] for d in (folder, old))
    assert f"take {corpus.shard_size_bytes(n, seqs) / 1e6:.2f} MB" in card
    assert corpus.shard_size_bytes(1_690_325, 6_576) < 3.5e6          # the shipped heads' corpus, as ids


def test_recomputed_features_are_cached_per_target_and_layers(tiny, tmp_path, monkeypatch):
    target, folder = tiny
    cache = tmp_path / "features"
    first = corpus.load(folder, ("ids", "label"), target=target, cache=cache)
    files = sorted(cache.iterdir())
    assert len(files) == len(corpus.shards(folder))
    with monkeypatch.context() as m:                                           # read back, not recomputed
        m.setattr(corpus, "features", lambda *a, **k: pytest.fail("recomputed despite the cache"))
        again = corpus.load(folder, ("ids", "label"), target=target, cache=cache)
    assert sorted(cache.iterdir()) == files
    assert all(torch.equal(a["label"], b["label"]) for a, b in zip(first, again))
    corpus.load(folder, ("ids",), target=target, layers=[1], cache=cache)      # other layers: their own files
    assert len(list(cache.iterdir())) == 2 * len(files)
    other = tiny_llama(vocab_size=96, layers=3, hidden=32, seed=1)              # another target: recomputed
    relabelled = corpus.load(folder, ("ids", "label"), target=other, cache=cache)
    assert len(list(cache.iterdir())) == 3 * len(files)
    assert any(not torch.equal(a["label"], b["label"]) for a, b in zip(first, relabelled))
