"""Acceptance maths (docs/metrics.md) on simulated runs: alpha-hat vs alpha, a_i, E[tau], k = 0.

Every statistical check states its bound (4 standard errors: a false alarm about 1 in 30,000) and
carries a negative control: the same bound applied to the wrong quantity must fail.
"""
import math
import random

import pytest

from specviz.core import costmodel as be
from specviz.core.records import StepRecord, summarize

Z = 4.0  # standard errors


def _step(i: int, k: int, n_acc: int) -> StepRecord:
    drafted = list(range(1, k + 1))
    return StepRecord(index=i, k=k, context_len=10 + i, drafted=drafted,
                      decisions=[True] * n_acc + ([False] if n_acc < k else []),
                      draws=[None] * k, ratios=[1.0] * k, n_accepted=n_acc, next_token=0,
                      next_origin="bonus" if n_acc == k else "correction",
                      emitted=drafted[:n_acc] + [0], draft_s=0.0, verify_s=0.01, logit_top1=[], logit_gap=[])


def _accepted(rng: random.Random, k: int, probs) -> int:
    """Positions accepted in order until the first rejection; probs(i) = chance of accepting i."""
    n = 0
    while n < k and rng.random() < probs(n):
        n += 1
    return n


def _iid_run(alpha: float, k: int, steps: int, seed: int):
    rng = random.Random(seed)
    recs = [_step(i, k, _accepted(rng, k, lambda _: alpha)) for i in range(steps)]
    return recs, summarize("sim", "", [], 10, recs, wall_s=1.0, prefill_s=0.0)


def _bursty_run(k: int, steps: int, seed: int):
    """Whole runs right or wrong: half the steps copy the right passage (each position kept with
    probability 0.95), the other half copy the wrong one (0.1)."""
    rng = random.Random(seed)
    recs = []
    for i in range(steps):
        p = 0.95 if rng.random() < 0.5 else 0.1
        recs.append(_step(i, k, _accepted(rng, k, lambda _: p)))
    return recs, summarize("sim", "", [], 10, recs, wall_s=1.0, prefill_s=0.0)


def _se(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("alpha,k", [(0.3, 4), (0.7, 4), (0.85, 8)])
def test_iid_simulation_recovers_alpha_and_tau(alpha, k):
    recs, s = _iid_run(alpha, k, steps=4000, seed=int(alpha * 100) + k)
    # alpha = accepted / tested is the MLE; its standard error is sqrt(alpha (1 - alpha) / tested)
    assert abs(s.alpha - alpha) <= Z * _se(alpha, s.tested), (s.alpha, alpha, s.tested)
    # negative control: alpha-hat (accepted / drafted) counts untested drafts as failures and misses
    assert abs(s.draft_acceptance_rate - alpha) > Z * _se(alpha, s.tested)
    # E[tau](alpha) matches the simulated tau, within 4 standard errors of both estimates
    per_step = [r.n_emitted for r in recs]
    mean = sum(per_step) / len(per_step)
    sd = math.sqrt(sum((x - mean) ** 2 for x in per_step) / (len(per_step) - 1))
    d_da = (be.expected_tokens_per_pass(alpha + 1e-4, k) - be.expected_tokens_per_pass(alpha - 1e-4, k)) / 2e-4
    bound = Z * math.hypot(sd / math.sqrt(len(per_step)), d_da * _se(alpha, s.tested))
    assert abs(be.expected_tokens_per_pass(s.alpha, k) - s.tokens_per_pass) <= bound
    # negative control: the same formula fed alpha-hat falls far below the simulated tau
    assert s.tokens_per_pass - be.expected_tokens_per_pass(s.draft_acceptance_rate, k) > bound
    # a_i are flat under independence: each within its bound of alpha
    for i, a in enumerate(s.per_position_acceptance):
        reached = sum(1 for r in recs if r.n_accepted >= i)
        assert abs(a - alpha) <= Z * _se(alpha, reached), (i + 1, a)


def test_bursty_simulation_shows_rising_per_position_acceptance():
    recs, s = _bursty_run(k=4, steps=4000, seed=3)
    a = s.per_position_acceptance
    assert len(a) == 4

    def rise(recs, a):  # a_4 - a_1, and 4 standard errors of that difference
        n = [sum(1 for r in recs if r.n_accepted >= i) for i in (0, 3)]
        return a[3] - a[0], Z * math.hypot(_se(a[0], n[0]), _se(a[3], n[1]))

    d, bound = rise(recs, a)
    assert d > bound, a
    for i in range(3):  # and no significant drop anywhere on the way
        assert a[i + 1] > a[i] - bound, a
    # negative control: an i.i.d. run with the same overall alpha shows no such rise
    flat_recs, flat = _iid_run(s.alpha, 4, steps=4000, seed=4)
    d, bound = rise(flat_recs, flat.per_position_acceptance)
    assert abs(d) <= bound, flat.per_position_acceptance


@pytest.mark.parametrize("v", [0.5, 0.9, 1.0, 1.12, 3.0, {1: 0.99, 8: 1.14}, lambda k: 1 + 0.2 * k])
def test_k0_is_plain_decoding_whatever_v(v):
    assert be.v_at(v, 0) == 1.0
    for alpha in (0.0, 0.4, 1.0):
        assert be.speedup(alpha, 0, 0.3, v) == 1.0
    assert be.breakeven_alpha(0, 0.1, v) is None      # no crossing: never faster, never slower
    k, s = be.best_k(0.0, 0.1, v)                     # nothing is ever accepted
    assert (k, s) == (0, 1.0) or s > 1.0              # k = 0 scores 1.0; only a v < 1 beats it
    if be.v_at(v, 1) >= 1.0:
        assert (k, s) == (0, 1.0)


def test_k0_beats_a_losing_k1():
    # the case: v = 1.12 made k = 0 score 1/v = 0.89 and k = 1 win at 0.89
    assert be.best_k(0.0, 0.0, 1.12) == (0, 1.0)
    assert be.speedup(0.0, 1, 0.0, 1.12) == pytest.approx(1 / 1.12)


def test_tau_identity_on_simulated_runs():
    for _recs, s in (_iid_run(0.6, 4, 500, 1), _bursty_run(6, 500, 2)):
        assert s.tokens_per_pass == pytest.approx(be.tau_identity(s.draft_acceptance_rate, s.mean_k))
        # and alpha (tested) in the same identity would be wrong whenever a step rejected
        assert s.tokens_per_pass != pytest.approx(be.tau_identity(s.alpha, s.mean_k))
