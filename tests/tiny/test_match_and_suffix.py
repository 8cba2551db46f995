"""Lookup's match-length rule and the suffix proposer on tiny random models (float32): greedy output equals
plain decoding's, a session's earlier requests are drafted from, and sampled output follows the target's
joint distribution over two tokens (with a negative control)."""
from dataclasses import replace

import pytest
import torch

from specviz.core import tree as tree_module
from specviz.core.dtypechoice import ShapeTimes
from specviz.core.errors import InputError
from specviz.core.sampling import SamplingConfig
from specviz.core.suffix import SessionCache
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.experiment import Setting
from specviz.engine.measure import run
from specviz.engine.methods import make_proposer
from specviz.engine.models import tiny_llama
from specviz.proposers.lookup import PromptLookup, match_lookup
from specviz.proposers.suffix import SuffixProposer
from tests.stats import matches
from tests.tiny import twotoken as T2

V = 96


@pytest.fixture(scope="module")
def target():
    return tiny_llama(vocab_size=V, layers=2, hidden=64, seed=0)


def prompt(seed=0, length=48, alphabet=8):
    """A block of random tokens from a small alphabet, repeated: the tail matches long (the repeats) and
    short (the small alphabet), so drafts are long and short, chains and branches."""
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(2, 2 + alphabet, (16,), generator=g).tolist() * 4)[:length]


@pytest.mark.parametrize("factor,n_min,k,sole", [(1.0, 1, 24, False), (0.5, 2, 24, False), (2.0, 3, 6, False),
                                                 (1.0, 2, 24, True)])
def test_lookup_match_rule_greedy_equals_plain(target, factor, n_min, k, sole):
    for seed in range(3):
        ids = prompt(seed)
        s, steps = run(target, PromptLookup(n_min=n_min, k_rule="match", factor=factor, sole=sole), ids,
                            DecodeConfig(k=k, max_new_tokens=48, stop_at_eos=False))
        assert torch.equal(torch.tensor(s.token_ids), T2.plain(target, ids, 48))
        assert s.drafted > 0
        full = ids + s.token_ids
        for st in steps:                                                    # each draft as long as its match says
            k_step = min(k, 48 - (st.context_len - len(ids)) - 1)
            want, _ = match_lookup(full[: st.context_len], n_min, 24, k_step, factor, sole=sole)
            assert st.drafted == want


def test_the_default_lookup_with_sole_and_follow_greedy_equals_plain(target):
    """The registry's lookup (sole and follow on; its draft depends on the steps before, so no per-step check)."""
    for seed in range(3):
        ids = prompt(seed)
        lk = make_proposer("lookup", target)
        assert lk.sole and lk.follow
        s, steps = run(target, lk, ids, DecodeConfig(k=24, max_new_tokens=48, stop_at_eos=False))
        assert torch.equal(torch.tensor(s.token_ids), T2.plain(target, ids, 48))
        assert s.drafted > 0


@pytest.mark.parametrize("opts,k", [({}, 24), (dict(factor=2.0, min_prob=0.0), 8), (dict(max_depth=6), 4)])
def test_suffix_greedy_equals_plain(target, opts, k):
    trees = 0
    for seed in range(3):
        ids = prompt(seed)
        s, steps = run(target, SuffixProposer(**opts), ids, DecodeConfig(k=k, max_new_tokens=48, stop_at_eos=False))
        assert torch.equal(torch.tensor(s.token_ids), T2.plain(target, ids, 48))
        assert s.drafted > 0 and all(st.n_drafted <= k for st in steps)
        assert all(st.seen_in is not None and len(st.seen_in) == st.n_drafted for st in steps if st.n_drafted)
        trees += sum(st.is_tree for st in steps)
    assert trees > 0                                                        # really trees, not only chains


def test_a_session_drafts_from_earlier_requests_and_stays_exact(target):
    """Request 2 repeats request 1's prompt: its output can be drafted from request 1's output (the
    cache), and the output is still plain decoding's."""
    ids = prompt(7, length=24, alphabet=40)
    p = SuffixProposer(cache=SessionCache(max_requests=4))
    s1, _ = run(target, p, ids, DecodeConfig(k=24, max_new_tokens=40, stop_at_eos=False))
    p.remember()
    s2, steps = run(target, p, ids, DecodeConfig(k=24, max_new_tokens=40, stop_at_eos=False))
    assert torch.equal(torch.tensor(s2.token_ids), T2.plain(target, ids, 40)) and s2.token_ids == s1.token_ids
    seen = {o for st in steps for o in (st.seen_in or [])}
    assert any("request 1 output" in o for o in seen)
    # without remember() nothing carries over: a fresh proposer on request 2 drafts from this request only
    _, alone = run(target, SuffixProposer(), ids, DecodeConfig(k=24, max_new_tokens=40, stop_at_eos=False))
    assert not any("request" in o for st in alone for o in (st.seen_in or []))


def test_make_proposer_builds_both_and_refuses_bad_settings(target):
    assert make_proposer("suffix", target, spec_factor=2.0, suffix=dict(max_depth=8)).factor == 2.0
    lk = make_proposer("lookup", target, n=2, k_rule="match", spec_factor=0.5)
    assert (lk.k_rule, lk.n_min, lk.n_max, lk.factor) == ("match", 2, 24, 0.5)
    default = make_proposer("lookup", target)                             # the app's, CLI's and bench's lookup
    assert (default.k_rule, default.n_min, default.sole) == ("match", 2, True)     # a sole short match drafts k
    assert make_proposer("lookup", target, n=3, k_rule="fixed").k_rule == "fixed"    # the k/n sweep's
    wide = lambda v: replace(target, pass_times=ShapeTimes(step=0.05, chain=0.09, tree=0.05 * v, prefill=0.5))  # noqa: E731
    avx2, amx = make_proposer("lookup", wide(2.3)), make_proposer("lookup", wide(1.3))
    assert (avx2.sole, amx.sole) == (False, True)                        # by what a 25-row pass costs there
    assert "costs 2.30 one-token steps" in avx2.sole_reason and "not timed" in default.sole_reason
    cfg = DecodeConfig(k=24)        # the machine's rule, like its dtype, is said beside a run, not in its settings:
    assert Setting.of(avx2, cfg).describe() == Setting.of(amx, cfg).describe() == Setting.resolve("lookup").describe()
    for kw in (dict(k_rule="longest"), dict(k_rule="match", spec_factor=-1.0)):
        with pytest.raises(InputError):
            make_proposer("lookup", target, **kw)
    with pytest.raises(InputError, match="probability"):
        make_proposer("suffix", target, suffix=dict(min_prob=2.0))


def first_two_counts(tgt, make, ids, runs):
    """Counts of the first two sampled tokens; three are generated, so the first step may draft two nodes."""
    cfg = DecodeConfig(k=3, max_new_tokens=3, stop_at_eos=False, sampling=SamplingConfig(temperature=1.0))
    counts, drafted = T2.first_two(tgt, make(), ids, cfg, runs)
    assert drafted > 0
    return counts


SESSION_IDS = T2.SESSION_IDS


@pytest.mark.parametrize("make", [lambda: SuffixProposer(min_prob=0.0),
                                  lambda: PromptLookup(n_min=1, k_rule="match", factor=1.0)],
                         ids=["suffix", "lookup-match"])
def test_sampling_is_lossless_over_two_tokens(monkeypatch, make):
    vs = 8
    tgt = tiny_llama(vocab_size=vs, layers=1, hidden=32, seed=4)
    ids = SESSION_IDS
    joint = T2.joint(tgt, ids)                                                                         # (vs*vs,)
    d = make().propose(Decoder(tgt, make(), ids, DecodeConfig(k=2)).context(), 2)
    assert len(d.tokens) == 2                                     # the first step drafts two nodes
    assert matches(first_two_counts(tgt, make, ids, 2000), joint)
    monkeypatch.setattr(tree_module, "residual", lambda r, q: r)  # the broken rule: ignore rejections
    assert not matches(first_two_counts(tgt, make, ids, 2000), joint)
