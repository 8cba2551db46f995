"""Tree verification on tiny random models: greedy output equals plain (float32), the cache is
compacted to the accepted path exactly, and sampled output follows the target's joint distribution."""
import pytest
import torch

from specviz.core import tree as tree_module
from specviz.core.sampling import SamplingConfig
from specviz.engine import measure
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.models import tiny_llama
from specviz.proposers.eagle import Eagle, EagleHead
from specviz.proposers.eagle_tree import EagleTree
from specviz.proposers.medusa import MedusaHeads, MedusaTree
from specviz.proposers.vocab import SubsetHead
from tests.stats import matches
from tests.tiny.test_heads import SUBSET, V, prompt, randomize


@pytest.fixture(scope="module")
def target():
    return tiny_llama(vocab_size=V, layers=2, hidden=64, seed=0)


def medusa_tree(t, seed=1):
    torch.manual_seed(seed)
    heads = randomize(MedusaHeads(t.model.config.hidden_size, 4), seed)
    return MedusaTree(heads, SubsetHead(t.model.get_output_embeddings().weight, SUBSET))


def eagle_tree(t, seed=2, ids=SUBSET, layers=(), **kw):
    """EAGLE-2's tree from a random head; layers=(...): the EAGLE-3 head reading those target layers."""
    torch.manual_seed(seed)
    head = randomize(EagleHead.for_target(t.model.config, layers).identity_init(), seed, 0.02)
    return EagleTree(head, t.model.get_input_embeddings(), SubsetHead(t.model.get_output_embeddings().weight, ids),
                     **kw)


def eagle3_tree(t, seed=2, ids=SUBSET, **kw):
    return eagle_tree(t, seed, ids, layers=tuple(range(t.model.config.num_hidden_layers)), **kw)


def plain(t, ids, n):
    s, _ = measure.run(t, None, ids, DecodeConfig(k=1, max_new_tokens=n, stop_at_eos=False))
    return torch.tensor(s.token_ids)


@pytest.mark.parametrize("make", [medusa_tree, eagle_tree, eagle3_tree])
@pytest.mark.parametrize("k", [2, 4, 5])
def test_tree_greedy_equals_plain(target, make, k):
    for seed in range(2):
        ids = prompt(seed)
        s, steps = measure.run(target, make(target), ids, DecodeConfig(k=k, max_new_tokens=40, stop_at_eos=False))
        assert torch.equal(torch.tensor(s.token_ids), plain(target, ids, 40))
        assert any(st.is_tree for st in steps)                        # really a tree, not a chain
        assert all(st.depth <= k and len(st.parents) == len(st.drafted) for st in steps)


def test_off_first_branch_acceptances_happen_and_cache_is_exact(target):
    """Accepting a node that is not on the first branch moves its cache entries; the cache must then
    equal a fresh prefill of the committed text (a wrong gather would show here)."""
    p = eagle_tree(target, width=4, nodes=12)
    dec = Decoder(target, p, prompt(3), DecodeConfig(k=4, max_new_tokens=40, stop_at_eos=False))
    branched = 0
    for rec in dec.run():
        branched += any(i != j for j, i in enumerate(rec.path))      # a path that is not nodes 0, 1, 2 ...
    assert branched > 0
    with torch.no_grad():
        fresh = target.model(input_ids=dec.ids[:-1][None]).logits[0, -1]
        cached = target.model(input_ids=dec.ids[-1:][None], past_key_values=dec.cache).logits[0, -1]
    assert dec.cache.get_seq_length() == len(dec.ids)
    assert torch.allclose(fresh, target.model(input_ids=dec.ids[None]).logits[0, -2], atol=1e-5)
    full = target.model(input_ids=dec.ids[None]).logits[0, -1]
    assert torch.allclose(cached, full, atol=1e-4)


def test_records_carry_the_tree(target):
    dec = Decoder(target, medusa_tree(target), prompt(5), DecodeConfig(k=4, max_new_tokens=12, stop_at_eos=False))
    rec = dec.step()
    assert rec.is_tree and len(rec.q_top) == len(rec.drafted) and len(rec.p_top) == len(rec.drafted) + 1
    assert len(rec.tested) == len(rec.decisions) and rec.path == [i for i, ok in zip(rec.tested, rec.decisions) if ok]
    for a, b in zip([-1] + rec.path, rec.path):                       # the path follows parent links
        assert rec.parents[b] == a
    assert rec.emitted[: rec.n_accepted] == [rec.drafted[i] for i in rec.path]


def joint_counts(tgt, proposer, ids, runs, vs):
    counts = torch.zeros(vs * vs)
    dec = Decoder(tgt, proposer, ids, DecodeConfig(k=3, max_new_tokens=2, stop_at_eos=False,
                                                   sampling=SamplingConfig(temperature=1.0)))
    for seed in range(runs):
        dec.cfg.seed = seed
        dec.reset()
        list(dec.run())
        a, b = dec.new_tokens
        counts[a * vs + b] += 1
    return counts


@pytest.mark.parametrize("layers,chain", [((), False), ((0,), False), ((0,), True)],
                         ids=["eagle-tree", "eagle3-tree", "eagle3"])
def test_tree_sampling_is_lossless_over_two_tokens(monkeypatch, layers, chain):
    """The first two sampled tokens (a joint over vs² pairs) follow the target's exact joint distribution
    under the EAGLE-2 tree (from the old head and from the EAGLE-3 head) and the EAGLE-3 chain; resampling
    from p instead of the residual after a rejection must fail."""
    vs = 8
    tgt = tiny_llama(vocab_size=vs, layers=1, hidden=32, seed=4)       # p spread over several tokens
    ids = [2, 5, 7, 3]
    with torch.no_grad():
        p1 = tgt.model(input_ids=torch.tensor([ids])).logits[0, -1].softmax(-1)          # (vs,)
        nxt = torch.stack([tgt.model(input_ids=torch.tensor([ids + [a]])).logits[0, -1].softmax(-1)
                           for a in range(vs)])                                            # (vs, vs)
    joint = (p1[:, None] * nxt).flatten()                                                  # (vs*vs,)
    def make():
        p = eagle_tree(tgt, seed=5, ids=torch.arange(vs), layers=layers, depth=3, width=2, nodes=6)
        return Eagle(p.head, p.embed, p.out, name="eagle3") if chain else p
    good = joint_counts(tgt, make(), ids, 2000, vs)
    assert matches(good, joint)
    monkeypatch.setattr(tree_module, "residual", lambda r, q: r)     # the broken rule: ignore rejections
    bad = joint_counts(tgt, make(), ids, 2000, vs)
    assert not matches(bad, joint)


def test_measure_v_feeds_trees_through_the_decode_loop(target):
    from specviz.engine.passcost import RandomDraft, measure_v

    d = RandomDraft(V, tree=True).propose(None, 6)
    assert d.parents == [-1, 0, 0, 1, 1, 2]
    v = measure_v(target, ks=(6,), context=20, repeats=1, tree=True)
    assert set(v) == {6} and v[6] > 0


def test_tree_figures_follow_the_record(target):
    from specviz.viz import tree as vt

    dec = Decoder(target, eagle_tree(target), prompt(3), DecodeConfig(k=4, max_new_tokens=30, stop_at_eos=False))
    rec = next(r for r in dec.run() if r.is_tree and r.n_accepted >= 1)
    states = vt.node_states(rec)
    assert [i for i, s in enumerate(states) if s == "accepted"] == sorted(rec.path)
    assert states.count("rejected") == rec.decisions.count(False)
    fig = vt.tree_figure(rec, str)
    drawn = {tr.name: len(tr.x) for tr in fig.data if tr.mode == "markers+text"}
    assert drawn.get("accepted", 0) == rec.n_accepted and sum(drawn.values()) == rec.n_drafted + 1
    z = vt.mask_figure(rec, str).data[0].z
    n = rec.n_drafted + 1
    assert len(z) == n and sum(v > 0 for row in z for v in row) == n + sum(tree_module.depths(rec.parents))
    assert sum(v == 2 for row in z for v in row) == (rec.n_accepted + 1) * (rec.n_accepted + 2) // 2  # path: causal
