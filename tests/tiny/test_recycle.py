"""Token recycling and copy-recycle on tiny random models: greedy output equals plain (float32), the table is filled
from every row of every pass and the prefill, a session keeps it only when told, and sampled output follows the
target's joint distribution over two tokens (resampling from p instead of the residual must fail)."""
import pytest
import torch

from specviz.core import tree as tree_module
from specviz.core.errors import InputError
from specviz.core.sampling import SamplingConfig
from specviz.engine import measure
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.methods import make_proposer
from specviz.engine.models import tiny_llama
from specviz.proposers.gated import Gate
from tests.stats import matches
from tests.tiny import twotoken as T2
from tests.tiny.test_heads import prompt


@pytest.fixture(scope="module")
def target():
    return tiny_llama(vocab_size=96, layers=2, hidden=64, seed=0)


TRIALS = {"recycle dynamic": ("recycle", dict(recycle=dict(nodes=12, dynamic=True))),      # docs/recycling.md
          "copy-recycle union": ("copy-recycle", dict(recycle=dict(nodes=12), union="always")),
          "copy-recycle union when greedy": ("copy-recycle", dict(recycle=dict(nodes=12), union="greedy")),
          "recycle gated": ("recycle", dict(recycle=dict(nodes=12), gate=Gate())),              # proposers/gated.py
          "copy-recycle gated": ("copy-recycle", dict(recycle=dict(nodes=12), gate=Gate())),
          # the pays gate, priced so dearly that it closes: closed steps and probes must leave the output alone
          "recycle pays": ("recycle", dict(recycle=dict(nodes=12), gate=Gate(v=((1, 2.0), (24, 6.0))))),
          "copy-recycle pays": ("copy-recycle", dict(recycle=dict(nodes=12), gate=Gate(v=((1, 2.0), (24, 6.0)))))}


@pytest.mark.parametrize("method,k", [("recycle", 24), ("recycle-chain", 4), ("copy-recycle", 24),
                                      ("recycle dynamic", 24), ("copy-recycle union when greedy", 24),
                                      ("recycle gated", 24), ("copy-recycle gated", 24), ("recycle pays", 24),
                                      ("copy-recycle pays", 24)])
def test_greedy_equals_plain(target, method, k):
    pays, (name, opts) = method.endswith("pays"), TRIALS.get(method, (method, None))
    for seed in range(2):                    # every seed runs the trial's own proposer (name, opts), built anew
        ids = prompt(seed)
        if opts is not None:
            prop = make_proposer(name, target, **opts)
        else:
            prop = make_proposer(name, target, recycle=dict(nodes=12) if name != "recycle-chain" else None)
        s, steps = measure.run(target, prop, ids, DecodeConfig(k=k, max_new_tokens=48, stop_at_eos=False))
        assert torch.equal(torch.tensor(s.token_ids), T2.plain(target, ids, 48))
        assert sum(st.n_accepted for st in steps) > 0                       # the table drafts something kept
        if pays:
            assert prop.closed_steps > 0 and sum(not st.n_drafted for st in steps) >= prop.closed_steps
        if name == "recycle":
            assert any(st.is_tree for st in steps)
            assert all(len(st.seen_in) == st.n_drafted for st in steps if st.n_drafted)


def test_the_table_reads_every_row_and_a_session_keeps_it_only_when_told(target):
    p = make_proposer("recycle", target)
    ids = prompt(4)
    dec = Decoder(target, p, ids, DecodeConfig(k=24, max_new_tokens=6, stop_at_eos=False))
    dec.prefill()
    assert set(torch.nonzero(p.table.written == -1).flatten().tolist()) == set(ids[:-1][-p.prefill_rows:])
    rec = dec.step()
    fed = [rec.last_token, *rec.drafted]
    assert all(int(p.table.written[t]) == 0 for t in fed)                    # every row of the pass, kept or not
    list(dec.run())
    seen = len(p.table)
    dec.reset()                                                             # a repeat starts from nothing
    assert len(p.table) == 0
    list(dec.run())
    p.remember()                                                            # a session: the next request keeps it
    dec2 = Decoder(target, p, prompt(5), DecodeConfig(k=24, max_new_tokens=6, stop_at_eos=False))
    assert len(p.table) == seen
    dec2.reset()
    assert len(p.table) == seen


@pytest.mark.parametrize("union,temperature,merges", [("greedy", 0.0, True), ("greedy", 1.0, False),
                                                      ("never", 0.0, False), ("always", 1.0, True)])
def test_a_one_token_match_drafts_both_trees_only_when_told(target, union, temperature, merges):
    used = []
    p = make_proposer("copy-recycle", target, recycle=dict(nodes=12), union=union)
    propose = p.propose

    def noted(ctx, k):
        d = propose(ctx, k)
        used.append(p.used)
        return d

    p.propose = noted
    for seed in range(3):
        measure.run(target, p, prompt(seed), DecodeConfig(k=24, max_new_tokens=48, stop_at_eos=False, seed=seed,
                                                           sampling=SamplingConfig(temperature=temperature)))
    assert ("copy+recycle" in used) == merges
    assert merges or {"copy", "recycle"} <= set(used)          # otherwise the rule picks one part, each at times
    if union == "never":
        assert make_proposer("copy-recycle", target).union == "never"         # the default: the rule's pick


def test_bad_settings_are_refused(target):
    for n in (0, 65):
        with pytest.raises(InputError, match="tree's size"):
            make_proposer("recycle", target, recycle=dict(nodes=n))


VS = 8
IDS = T2.SESSION_IDS


def first_two(tgt, method, runs=2000):
    cfg = DecodeConfig(k=24, max_new_tokens=3, stop_at_eos=False, sampling=SamplingConfig(temperature=1.0))
    name, extra = TRIALS.get(method, (method, {}))
    extra = dict(extra)                                             # the trial's options at the test's small sizes
    rec = {**extra.pop("recycle", {}), "nodes": 6, "top_k": 3}
    counts, drafted = T2.first_two(tgt, make_proposer(name, tgt, recycle=rec, **extra), IDS, cfg, runs)
    assert drafted >= 2 * runs
    return counts


@pytest.mark.parametrize("method", ["recycle", "copy-recycle", "recycle dynamic", "copy-recycle union", "recycle pays"])
def test_sampling_is_lossless_over_two_tokens(monkeypatch, method):
    tgt = tiny_llama(vocab_size=VS, layers=1, hidden=32, seed=4)
    joint = T2.joint(tgt, IDS)                                                                         # (VS*VS,)
    assert matches(first_two(tgt, method), joint)
    monkeypatch.setattr(tree_module, "residual", lambda r, q: r)      # the broken rule: ignore rejections
    assert not matches(first_two(tgt, method), joint)
