"""The EAGLE-3-style head (issue 24 §1) on tiny random models: greedy output equals plain (float32), the decode
loop taps the target's layers only for it, the artifact round-trips, the trainer learns, bad layers are refused."""
import pytest
import torch

from specviz.cli import main
from specviz.core.errors import InputError, ModelError
from specviz.engine import artifacts, measure
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.models import tiny_llama
from specviz.proposers.eagle import Eagle, EagleHead, check_feature_layers, default_feature_layers
from specviz.proposers.eagle_tree import EagleTree
from specviz.proposers.hybrid import Hybrid
from specviz.proposers.lookup import PromptLookup
from specviz.proposers.vocab import SubsetHead
from specviz.teach import anatomy
from specviz.train import jobs
from tests.tiny.test_heads import SUBSET, V, prompt, randomize
from tests.tiny.test_train import tiny  # noqa: F401  (the module's tiny target and the corpus it wrote)

LAYERS = (0, 2, 3)


@pytest.fixture(scope="module")
def target():
    return tiny_llama(vocab_size=V, layers=4, hidden=64, seed=0)


def head3(t, seed=2, layers=LAYERS):
    torch.manual_seed(seed)
    return randomize(EagleHead.for_target(t.model.config, layers).identity_init(), seed, 0.05)


def eagle3(t, seed=2, layers=LAYERS):
    return Eagle(head3(t, seed, layers), t.model.get_input_embeddings(),
                 SubsetHead(t.model.get_output_embeddings().weight, SUBSET), name="eagle3")


def eagle3_tree(t, seed=2, layers=LAYERS):
    return EagleTree(head3(t, seed, layers), t.model.get_input_embeddings(),
                     SubsetHead(t.model.get_output_embeddings().weight, SUBSET), name="eagle3-tree")


def hybrid3(t):
    return Hybrid(eagle3(t), n_min=2, n_max=3)


def run(t, proposer, ids, k, n=40):
    s, steps = measure.run(t, proposer, ids, DecodeConfig(k=k, max_new_tokens=n, stop_at_eos=False))
    return torch.tensor(s.token_ids), s, steps


@pytest.mark.parametrize("make", [eagle3, eagle3_tree, hybrid3])
@pytest.mark.parametrize("k", [1, 3, 5])
def test_greedy_equals_plain(target, make, k):
    for seed in range(2):
        ids = prompt(seed)
        ref, _, _ = run(target, None, ids, 1)
        out, s, steps = run(target, make(target), ids, k)
        assert torch.equal(out, ref)
        assert s.drafted > 0 and s.target_passes == len(steps)
        assert all(r.feature_layers == list(LAYERS) for r in steps)      # the record says what the head read


def test_the_head_reads_the_tapped_layers_and_its_cache_matches_a_fresh_head(target):
    """Context.features holds the named layers' outputs at every committed position (against one full forward
    with output_hidden_states); after rejections and rollbacks, drafting equals drafting from scratch."""
    p = eagle3(target)
    dec = Decoder(target, p, prompt(7), DecodeConfig(k=4, max_new_tokens=30, stop_at_eos=False))
    for _ in range(6):
        dec.step()
    ctx = dec.context()
    assert ctx.hidden is None and ctx.features.shape == (len(ctx.ids) - 1, 3 * 64)
    with torch.no_grad():
        hs = target.model(input_ids=ctx.ids[:-1][None], output_hidden_states=True).hidden_states
    # hidden_states[0] is the embeddings, [i + 1] layer i's output; transformers gives the last layer's after
    # the final norm, while the head reads every layer's own output (before that norm)
    low = torch.cat([hs[i + 1][0] for i in LAYERS[:-1]], -1)               # (T-1, 2H)
    assert torch.allclose(ctx.features[:, :128], low, atol=1e-4)
    with torch.no_grad():
        assert torch.allclose(target.model.model.norm(ctx.features[:, 128:]), hs[-1][0], atol=1e-4)
    cached = p.propose(ctx, 4)
    fresh = eagle3(target)
    fresh.reset(dec.prompt)
    again = fresh.propose(ctx, 4)
    assert torch.equal(cached.tokens, again.tokens) and torch.allclose(cached.q, again.q)


def _taps_seen(target, proposer):
    """Run a short decode; per call of each target decoder layer, the forward hooks on it beyond those it had
    before the run (ours and transformers' own), and every keyword the decoder body was called with."""
    layers = target.model.get_decoder().layers
    seen, kwargs = [], {}
    mine = [layer.register_forward_hook(lambda m, a, o, i=i: seen.append((i, len(m._forward_hooks) - base[i])))
            for i, layer in enumerate(layers)]
    base = [len(layer._forward_hooks) for layer in layers]
    mine.append(target.model.get_decoder().register_forward_pre_hook(
        lambda m, a, kw: kwargs.update(kw), with_kwargs=True))
    try:
        dec = Decoder(target, proposer, [5, 6, 7, 8, 5, 6, 7, 8, 5, 6], DecodeConfig(k=3, max_new_tokens=8,
                                                                                     stop_at_eos=False))
        list(dec.run())
    finally:
        for h in mine:
            h.remove()
    return dec, seen, kwargs


@pytest.mark.parametrize("make", [lambda t: None, lambda t: PromptLookup(n_min=1, n_max=3)], ids=["plain", "lookup"])
def test_plain_and_lookup_decoding_tap_no_layer_and_ask_for_no_hidden_states(target, make):
    dec, seen, kwargs = _taps_seen(target, make(target))
    assert seen and all(n == 0 for _, n in seen)                          # no hook of the decode loop's
    assert not kwargs.get("output_hidden_states")
    assert dec.features is None and dec.hidden is None and all(r.feature_layers is None for r in dec.steps)
    # the control: the same probe sees the decode loop's hooks on exactly the EAGLE-3 head's layers
    dec, seen, kwargs = _taps_seen(target, eagle3(target))
    assert {i for i, n in seen if n} == set(LAYERS) and not kwargs.get("output_hidden_states")
    _, seen, _ = _taps_seen(target, None)
    assert all(n == 0 for _, n in seen)                                   # and they were removed afterwards


def test_the_anatomy_says_which_layers_the_head_was_fed(target):
    dec = Decoder(target, eagle3_tree(target), prompt(3), DecodeConfig(k=4, max_new_tokens=12, stop_at_eos=False))
    rec = dec.step()
    text = anatomy.drafter_text(anatomy.of(rec), "eagle3-tree")
    assert "layers 0, 2 and 3" in text and "EAGLE-3" in text
    old = Decoder(target, None, prompt(3), DecodeConfig(k=4, max_new_tokens=4, stop_at_eos=False)).step()
    assert old.feature_layers is None


def test_a_head_for_layers_the_target_lacks_is_refused(target):
    with pytest.raises(InputError, match="layer 7 does not exist"):
        EagleHead.for_target(target.model.config, (1, 7))
    small = tiny_llama(vocab_size=V, layers=2, hidden=64, seed=0)
    with pytest.raises(InputError, match="layers 0-1"):
        Decoder(small, eagle3(target), prompt(1), DecodeConfig())


def test_layer_settings_are_checked():
    assert default_feature_layers(30) == (2, 15, 29) and default_feature_layers(2) == (1,)
    assert check_feature_layers("2, 15,29", 30) == (2, 15, 29)
    for bad, why in (("2,x", "whole numbers"), ("", "at least one"), ("3,3", "repeat"), ("-1", "does not exist"),
                     ("30", "layers 0-29")):
        with pytest.raises(InputError, match=why):
            check_feature_layers(bad, 30)


def test_bad_layers_on_the_command_line_give_one_line_and_exit_2(capsys):
    assert main(["train", "eagle3", "--layers", "2,fifteen,29"]) == 2      # refused before any model loads
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("specviz: error:") and "whole numbers" in err[0]
    assert main(["train", "eagle", "--reg", "-1"]) == 2                     # the old head's loss weight, likewise
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--reg must be >= 0" in err[0]
    for job in ("eagle", "eagle3"):   # both take the loss, the init and a warm start (checked before any model loads)
        assert main(["train", job, "--loss", "kl", "--init", "identity", "--warm-from", "no/such/folder"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "no EAGLE head to start from: no/such/folder/eagle.safetensors" in err[0]


def test_the_method_says_when_no_artifact_is_shipped(target, monkeypatch):
    from specviz.engine import methods

    monkeypatch.setattr(artifacts, "available", lambda folder=None: {n: False for n in artifacts.NAMES})
    for m in ("eagle3", "eagle3-tree"):
        with pytest.raises(InputError, match=r"no trained eagle3 artifact in models/ \(python -m specviz train "
                                             r"eagle3\)"):
            methods.make_proposer(m, target)
    assert "eagle3" not in methods.available_methods() and "eagle3" in methods.REGISTRY


def test_eagle3_learns_ships_and_round_trips(tiny, tmp_path):  # noqa: F811
    """Token objective only, on features recomputed from the ids: the held-out loss of step 1 falls, Σ min(p, q)
    rises, top-1 beats the most frequent token; the artifact (safetensors + json) loads back to the same head."""
    target, folder, _ = tiny
    c = jobs.eagle3(target, folder, tmp_path / "run", tmp_path / "models", steps=150, tokens=256, lr=3e-3,
                    vocab=96, layers="0,1", progress=False)
    b, a = c["heldout_before"]["heldout_loss_per_step"][0], c["heldout"]["heldout_loss_per_step"][0]
    assert a <= 0.7 * b, (b, a)
    b, a = c["heldout_before"]["heldout_sum_min_pq_t08_per_step"][0], c["heldout"]["heldout_sum_min_pq_t08_per_step"][0]
    assert 0 <= b < a <= 1, (b, a)
    assert c["heldout"]["heldout_top1_per_step"][0] > c["heldout"]["most_frequent_token_top1"]
    assert len(c["heldout"]["heldout_top1_per_step"]) == 3 and c["loss"] == "kl"
    assert c["kind"] == "eagle3" and c["feature_layers"] == [0, 1]
    assert artifacts.available(tmp_path / "models")["eagle3"] and not artifacts.available(tmp_path / "models")["eagle"]
    assert artifacts.card("eagle3", tmp_path / "models")["feature_layers"] == [0, 1]
    p = artifacts.load_eagle(target, tmp_path / "models", kind="eagle3")
    assert p.name == "eagle3" and p.feature_layers == (0, 1) and not p.needs_hidden
    from safetensors.torch import load_file
    saved = load_file(str(tmp_path / "models" / "eagle3.safetensors"))
    assert {"head.fuse.weight", "head.norm.weight"} <= set(saved)
    assert all(torch.equal(v, saved[f"head.{k}"].to(v.dtype)) for k, v in p.head.state_dict().items())
    t = artifacts.load_eagle(target, tmp_path / "models", tree=True, kind="eagle3")
    assert isinstance(t, EagleTree) and t.name == "eagle3-tree"
    with pytest.warns(artifacts.CheckpointMismatch), pytest.raises(ModelError, match="eagle3 artifact reads target "
                                                                                       "layers"):  # a shallower target
        artifacts.load_eagle(tiny_llama(vocab_size=96, layers=1, hidden=32, seed=0), tmp_path / "models",
                             kind="eagle3")
    from specviz.train import readme
    row = next(r for r in readme.write(tmp_path / "models", eval_dir=tmp_path / "no-eval").splitlines()
               if r.startswith("| eagle3 |"))
    assert "reads target layers 0, 1" in row and str(c["heldout"]["heldout_sum_min_pq_t08_per_step"]) in row
    ids = [5, 6, 7, 8, 9, 10]                                    # and it drafts, losslessly, from what it learned
    ref, _, _ = run(target, None, ids, 1, 20)
    out, s, _ = run(target, p, ids, 3, 20)
    assert s.accepted > 0 and torch.equal(out, ref)


def test_bad_layers_for_the_trainer_are_one_clear_error(tiny, tmp_path):  # noqa: F811
    target, folder, _ = tiny
    with pytest.raises(InputError, match="layer 5 does not exist: this target has layers 0-1"):
        jobs.eagle3(target, folder, tmp_path / "run", tmp_path / "models", steps=1, layers="0,5", progress=False)


def test_train_evaluate_measures_the_new_head_beside_the_old_once_shipped(target, monkeypatch):
    from specviz.train import evaluate

    shipped = {n: True for n in artifacts.NAMES}
    monkeypatch.setattr(artifacts, "available", lambda folder=None: shipped)
    for part, want in (("greedy", {"eagle k=1", "eagle k=2", "eagle3 k=1", "eagle3 k=2"}),
                       ("sampled", {"eagle k=2", "eagle3 k=2"})):
        _, methods, *_ = evaluate.plan(part, target)
        assert want <= set(methods)
    shipped["eagle3"] = False                                              # none ships yet: rows as before
    assert not any(m.startswith("eagle3") for m in evaluate.plan("greedy", target)[1])


def test_the_lab_builds_the_eagle3_heads_first_draft_as_the_decode_loop_does(target):
    """teach.lab.real_case taps the same layers: its q is the first q of a real decode step."""
    from specviz.core.sampling import SamplingConfig
    from specviz.teach.lab import real_case

    ids, sampling = prompt(4), SamplingConfig(temperature=0.8)
    case = real_case(target, eagle3(target), ids, sampling)
    dec = Decoder(target, eagle3(target), ids, DecodeConfig(k=1, max_new_tokens=2, stop_at_eos=False,
                                                            sampling=sampling))
    dec.prefill()
    q = dec.proposer.propose(dec.context(), 1).q[0]
    assert case is not None and torch.allclose(case.q, q, atol=1e-5)


def test_a_warm_start_begins_where_the_shipped_head_ends(tiny, tmp_path):  # noqa: F811
    """--warm-from: the old-design head restarts exactly from the shipped weights (same held-out loss before a
    step); the fused head takes its layer and reads the top layer alone through a fitted per-dimension scale,
    which lands far nearer the old head than a fresh fused head does; a folder without a head is one clear error."""
    target, folder, _ = tiny
    old = jobs.eagle(target, folder, tmp_path / "run-old", tmp_path / "old", steps=120, tokens=256, lr=3e-3,
                     vocab=96, n_passes=2, mode="kl", progress=False)
    again = jobs.eagle(target, folder, tmp_path / "run-again", tmp_path / "again", steps=1, tokens=256, lr=1e-9,
                       vocab=96, n_passes=2, mode="kl", reg=0.0, warm_from=tmp_path / "old", progress=False)
    # the shipped file holds bfloat16 weights, so the restart agrees to bfloat16's rounding
    assert again["heldout_before"]["heldout_loss_per_step"] == pytest.approx(old["heldout"]["heldout_loss_per_step"],
                                                                              rel=0.02)
    assert again["warm_from"] == str(tmp_path / "old")
    fresh = jobs.eagle3(target, folder, tmp_path / "run-f", tmp_path / "f", steps=1, tokens=256, lr=1e-9, vocab=96,
                        n_passes=2, layers="0,1", progress=False)
    warm = jobs.eagle3(target, folder, tmp_path / "run-w", tmp_path / "w", steps=1, tokens=256, lr=1e-9, vocab=96,
                       n_passes=2, layers="0,1", warm_from=tmp_path / "old", progress=False)
    o = old["heldout"]["heldout_loss_per_step"][0]
    f, w = (c["heldout_before"]["heldout_loss_per_step"][0] for c in (fresh, warm))
    assert w < f and w - o < 0.5 * (f - o), (o, f, w)
    with pytest.raises(InputError, match="no EAGLE head to start from"):
        jobs.eagle(target, folder, tmp_path / "run-x", tmp_path / "x", steps=1, vocab=96,
                   warm_from=tmp_path / "nothing",
                   progress=False)
