"""The calculator's formulas (pure) and filling them from step records."""
import math

import pytest

from specviz.core import costmodel as be
from specviz.core.records import StepRecord, summarize


def test_check_values_from_the_issue():
    # alpha = 0.8, k = 4: 1 + .8 + .64 + .512 + .4096 = 3.3616; cost 1 + 4*0.05 = 1.2 -> 2.8013
    assert be.expected_tokens_per_pass(0.8, 4) == pytest.approx(3.3616, abs=1e-9)
    assert round(be.expected_tokens_per_pass(0.8, 4), 2) == 3.36
    assert round(be.speedup(0.8, 4, 0.05, 1.0), 2) == 2.80


def test_expected_tokens_edges_and_continuity():
    assert be.expected_tokens_per_pass(0.0, 7) == 1.0            # only the target's own token
    assert be.expected_tokens_per_pass(1.0, 5) == 6.0            # every draft accepted + bonus
    assert be.expected_tokens_per_pass(1 - 1e-7, 5) == pytest.approx(6.0, rel=1e-5)
    assert be.expected_tokens_per_pass(0.5, 0) == 1.0
    for a in (0.1, 0.37, 0.9):                                   # the closed form equals the series
        assert be.expected_tokens_per_pass(a, 6) == pytest.approx(sum(a ** i for i in range(7)))
    with pytest.raises(ValueError):
        be.expected_tokens_per_pass(1.2, 3)


def test_v_from_a_table_is_interpolated():
    table = {1: 0.99, 2: 1.01, 4: 1.04, 8: 1.14}
    assert be.v_at(table, 4) == pytest.approx(1.04)
    assert be.v_at(table, 6) == pytest.approx(1.09)              # halfway between 4 and 8
    assert be.v_at(table, 0) == 1.0
    assert be.v_at(lambda k: 1 + 0.1 * k, 3) == pytest.approx(1.3)
    # a table changes the answer the way it should: a costlier verify lowers the speedup
    assert be.speedup(0.8, 8, 0.05, table) > be.speedup(0.8, 8, 0.05, {8: 1.5})


def test_breakeven_alpha_is_where_speedup_is_one():
    a = be.breakeven_alpha(4, 0.05, 1.0)
    # 1 + a + a^2 + a^3 + a^4 = 1.2  ->  a ~ 0.1668
    assert 0.16 < a < 0.17
    assert be.speedup(a, 4, 0.05, 1.0) == pytest.approx(1.0, abs=1e-6)
    assert be.speedup(a - 0.01, 4, 0.05, 1.0) < 1 < be.speedup(a + 0.01, 4, 0.05, 1.0)
    assert be.breakeven_alpha(4, 0.0, 0.95) == 0.0               # cheaper than a plain step: always pays
    assert be.breakeven_alpha(2, 1.0, 1.0) is None               # cost 3 = the most a pass can give


def test_tau_needed_and_the_alpha_that_reaches_it():
    # goal 1.5x at v(2) = 1.17 and c = 0.075 per drafted token: 1.5 * (1.17 + 0.15) = 1.98
    assert be.tau_needed(1.5, 2, 0.075, {2: 1.17}) == pytest.approx(1.98)
    # the inverse of E[tau]: 1 + a + a^2 = 1.75 at a = 0.5
    assert be.alpha_for_tau(1.75, 2) == pytest.approx(0.5, abs=1e-6)
    for a, k in ((0.3, 4), (0.61, 2), (0.9, 8)):
        assert be.alpha_for_tau(be.expected_tokens_per_pass(a, k), k) == pytest.approx(a, abs=1e-6)
    assert be.alpha_for_tau(1.0, 3) == 0.0                       # plain's one token needs nothing
    assert be.alpha_for_tau(3.5, 2) is None                      # more than k + 1 per pass: unreachable


def test_best_k_against_hand_values():
    # alpha .8, c .05, v 1: k=7 -> 4.1611/1.35 = 3.082, k=8 -> 4.3289/1.40 = 3.092, k=9 -> 4.4631/1.45 = 3.078
    k, s = be.best_k(0.8, 0.05, 1.0)
    assert k == 8 and s == pytest.approx(3.0921, abs=1e-3)
    # a draft that costs half a plain step per token with poor acceptance: don't speculate
    assert be.best_k(0.3, 0.5, 1.0) == (0, 1.0)
    # the ceiling applies
    assert be.best_k(0.99, 0.0, 1.0, k_max=5)[0] == 5


def _step(i, drafted, n_acc, draft_s, verify_s, k=4):
    emitted = drafted[:n_acc] + [7]
    return StepRecord(index=i, k=k, context_len=10 + i, drafted=drafted,
                      decisions=[True] * n_acc + ([False] if n_acc < len(drafted) else []),
                      draws=[None] * len(drafted), ratios=[1.0] * len(drafted), n_accepted=n_acc,
                      next_token=7, next_origin="bonus" if n_acc == len(drafted) else "correction",
                      emitted=emitted, draft_s=draft_s, verify_s=verify_s, logit_top1=[], logit_gap=[])


def test_run_checks_from_records():
    # a bursty run: either the whole draft of 4 is right or none of it (lookup-like)
    steps = [_step(i, [3, 4, 5, 6], 4 if i % 2 == 0 else 0, draft_s=0.002, verify_s=0.05) for i in range(10)]
    plain = [_step(i, [], 0, draft_s=0.0, verify_s=0.04) for i in range(30)]
    s = summarize("lookup", "", [], 10, steps, wall_s=sum(x.verify_s + x.draft_s for x in steps), prefill_s=0)
    ps = summarize("plain", "", [], 10, plain, wall_s=sum(x.verify_s for x in plain), prefill_s=0)
    ch = be.run_checks("lookup", s, steps, ps, plain, v={4: 1.25}, k=4)
    # alpha-hat = 20 / 40 drafted; alpha = 20 / (20 accepted + 5 rejections) tested
    assert ch.draft_acceptance_rate == 0.5 and ch.alpha == 0.8 and ch.tau == 3.0 and ch.k_bar == 4.0
    assert ch.per_position == [0.5, 1.0, 1.0, 1.0]             # rising: bursty
    assert ch.t1 == pytest.approx(0.04)
    assert ch.c == pytest.approx(0.002 / 4 / 0.04)               # 0.0125 per drafted token
    # measured: 30 tokens in 0.52 s vs 30 tokens in 1.2 s
    assert ch.measured == pytest.approx(1.2 / 0.52)
    assert ch.predicted == pytest.approx(3.0 / (1.25 + 4 * 0.0125))
    # independence at alpha = 0.8 predicts (1 - .8^5)/.2 = 3.3616 tokens per pass; the bursty run made 3
    assert ch.tau_iid == pytest.approx(3.3616)
    assert ch.independence_gap == pytest.approx(3.3616 / 3 - 1)
    assert math.isclose(ch.error, ch.predicted / ch.measured - 1)


def test_a_run_whose_draft_length_varies_is_priced_pass_by_pass():
    """Lookup on novel text: three passes draft nothing (plain steps, v(0) = 1), one drafts 8. The check prices
    the passes it ran, v̄ = (1 + 1 + 1 + v(8)) / 4 = 1.2, not one pass of the mean length, v(k̄ = 2) ≈ 1.457."""
    v = {1: 1.4, 8: 1.8}
    assert be.mean_v([0, 0, 0, 8], v) == pytest.approx(1.2)
    assert be.v_at(v, 2.0) == pytest.approx(1.4 + 0.4 / 7)
    assert be.mean_v([4, 4, 4], v) == pytest.approx(be.v_at(v, 4))          # a fixed k: v̄ = v(k)
    assert be.mean_v([], v) == 1.0
    steps = [_step(i, [], 0, 0.0, 0.04) for i in range(3)] + [_step(3, [1] * 8, 8, draft_s=0.0008, verify_s=0.072)]
    plain = [_step(i, [], 0, draft_s=0.0, verify_s=0.04) for i in range(12)]
    s = summarize("lookup", "", [], 12, steps, wall_s=sum(x.verify_s + x.draft_s for x in steps), prefill_s=0)
    ps = summarize("plain", "", [], 12, plain, wall_s=sum(x.verify_s for x in plain), prefill_s=0)
    ch = be.run_checks("lookup", s, steps, ps, plain, v=v)
    assert ch.k_bar == 2.0 and ch.tau == 3.0 and ch.v == pytest.approx(1.2)
    c = 0.0008 / 8 / 0.04
    assert ch.predicted == pytest.approx(3.0 / (1.2 + 2.0 * c))
    # the passes' own times say the same: 12 tokens in 3 × 0.04 + 0.0728 s against 12 plain steps of 0.04 s
    assert ch.measured == pytest.approx(ch.predicted)


def test_run_checks_without_plain_has_no_costs():
    steps = [_step(0, [1, 2], 1, 0.001, 0.05)]
    s = summarize("lookup", "", [], 5, steps, wall_s=0.051, prefill_s=0)
    ch = be.run_checks("lookup", s, steps, v=1.0)
    assert ch.c is None and ch.measured is None and ch.predicted is None and ch.error is None
    assert ch.alpha == 0.5 and ch.tau_iid == pytest.approx(1.75)


def test_gap_terms_name_the_verify_cost_the_run_paid():
    """A run whose passes cost 1.2 plain steps, checked with v = 1: redoing the prediction with the run's own
    verify cost closes the gap, so v(k̄) is the term that missed."""
    from types import SimpleNamespace as NS

    from specviz.core import costmodel as cm

    t1 = 0.01
    steps = [NS(verify_s=0.012, draft_s=0.004, n_drafted=4) for _ in range(10)]
    summary = NS(draft_s=0.04, verify_s=0.12, wall_s=0.2, prefill_s=0.02)
    ch = cm.CostCheck(method="m", alpha=0.5, draft_acceptance_rate=0.5, per_position=[], tau=2.0, k_bar=4.0, k=4,
                      c=0.1, t1=t1, v=1.0, measured=2.0 / 1.6, predicted=2.0 / 1.4, tau_iid=None)
    g = cm.gap_terms(ch, summary, steps)
    assert g["v_run"] == pytest.approx(1.2) and g["predicted_with_v_run"] == pytest.approx(2.0 / 1.6)
    assert g["gap_with_v_run"] == pytest.approx(0.0, abs=1e-12) and abs(ch.error) > 0.1
    assert g["outside_share"] == pytest.approx(0.2) and g["prefill_share"] == pytest.approx(0.1)
    # a run that drafted on one pass in four: its passes cost (3 × 1.0 + 1.8) / 4 = 1.2 plain steps on average,
    # though its median pass is a plain step
    mixed = [NS(verify_s=0.01, draft_s=0.0, n_drafted=0)] * 3 + [NS(verify_s=0.018, draft_s=0.004, n_drafted=8)]
    assert cm.run_v(mixed, t1) == pytest.approx(1.2)


def _tree_step(i, parents, path, rejected):
    """A tree step: `path` accepted (root's child first), then the `rejected` nodes tested below its end."""
    drafted = [10 + j for j in range(len(parents))]
    tested = list(path) + list(rejected)
    return StepRecord(index=i, k=4, context_len=10, drafted=drafted,
                      decisions=[True] * len(path) + [False] * len(rejected), draws=[None] * len(tested),
                      ratios=[1.0] * len(tested), n_accepted=len(path), next_token=7,
                      next_origin="correction" if rejected else "bonus",
                      emitted=[drafted[j] for j in path] + [7], draft_s=0.0, verify_s=0.01, logit_top1=[],
                      logit_gap=[], parents=parents, tested=tested, path=list(path))


def test_per_position_acceptance_of_a_tree_does_not_count_a_shallow_leaf_as_a_failure():
    from specviz.core.records import per_position_acceptance
    # root -> 0 (a leaf), root -> 1 -> 2: depth 2. Step a keeps the leaf 0: nothing was drafted below it.
    parents = [-1, -1, 1]
    a = _tree_step(0, parents, [0], [])
    b = _tree_step(1, parents, [1, 2], [])               # kept the deep branch whole
    c = _tree_step(2, parents, [1], [2])                 # kept 1, rejected 2 at depth 2
    assert per_position_acceptance([a, b, c]) == [1.0, 0.5]   # depth 2 reached by b and c only
    # negative control: the old reading (every step with depth > i and i kept) would count a as a miss
    reached_old = [s for s in (a, b, c) if s.depth > 1 and s.n_accepted >= 1]
    assert sum(s.n_accepted > 1 for s in reached_old) / len(reached_old) == pytest.approx(1 / 3)
    # a chain keeps its old reading: [-1, 0, 1], first two kept, third rejected
    ch = _tree_step(3, [-1, 0, 1], [0, 1], [2])
    assert per_position_acceptance([ch]) == [1.0, 1.0, 0.0]


# -- what a measured run hands the calculator's k (issue 34 §3) --------------------------------------
def test_a_run_hands_the_chain_law_a_k_it_can_take():
    from specviz.core.costmodel import calculator_k
    assert calculator_k("draft", 4, 3.2, 2.1, 1.3, tree=False, self_sized=False) == (4, "")
    k, note = calculator_k("lookup", 24, 7.4, 3.0, 2.0, tree=False, self_sized=True)
    assert k == 7 and "sizes its own drafts" in note and "7.40" in note
    k, note = calculator_k("lookup", 24, 21.6, 9.0, 3.0, tree=False, self_sized=True)
    assert k == 16 and "beyond 16" in note                                   # rounded into range, and said so
    k, note = calculator_k("suffix", 24, 11.0, 2.5, 1.8, tree=True, self_sized=True)
    assert k is None and "does not apply" in note and "τ = 2.50" in note and "1.80×" in note
