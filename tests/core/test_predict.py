"""Predict first: what each lesson's guess is scored against, computed from records and rows made by hand."""
from types import SimpleNamespace

import pytest

from specviz.core.records import StepRecord
from specviz.teach import acceptance as A, predict as P
from specviz.teach.guess import Guess, score


def step(i, k, n, emitted=None, cache=(0, 0, 0)):
    """Chain step i that drafted k and kept n (a rejection tested unless all were kept)."""
    dec = [True] * n + ([False] if n < k else [])
    return StepRecord(index=i, k=k, context_len=10 + i, drafted=list(range(k)), decisions=dec,
                      draws=[None] * len(dec), ratios=[1.0] * len(dec), n_accepted=n, next_token=0,
                      next_origin="bonus" if n == k else "correction",
                      emitted=[0] * (n + 1 if emitted is None else emitted), draft_s=0.0, verify_s=0.0,
                      logit_top1=[], logit_gap=[], parents=list(range(-1, k - 1)), tested=list(range(len(dec))),
                      path=list(range(n)), target_cache=cache)


def test_a_score_names_the_experiment_locked_in_not_todays_settings():
    g = Guess("τ", "tau", experiment="lookup, greedy, k = 4, 48 new tokens, one run")
    assert score(g, 2.0, {"tau": 2.0}).text.endswith("Scored against: lookup, greedy, k = 4, 48 new tokens, one run.")
    assert "k = 8" in score(g, 2.0, {"tau": 2.0}, "lookup, greedy, k = 8").text        # the one locked in wins
    assert "Scored against" not in score(Guess("τ", "tau"), 2.0, {"tau": 2.0}).text   # older guesses unchanged


def test_the_three_step_table_by_hand_and_as_vllm_logs_it():
    steps = [step(0, 4, 4), step(1, 4, 4), step(2, 4, 1), step(3, 4, 0), step(4, 4, 2, emitted=1)]
    three = P.pick_three(steps)
    # step 5 was cut short (EOS / length): never dealt; step 3 rejects early (so α ≠ α̂) and is always in
    assert [s.index for s in three] == [0, 1, 2]
    rows = P.hand_rows(three)
    assert rows[2] == {"step": 3, "d1": P.KEPT, "d2": P.REJECTED, "d3": P.UNTESTED, "d4": P.UNTESTED}
    bh = P.by_hand(rows)
    assert (bh.accepted, bh.tested, bh.drafted, bh.passes) == (9, 10, 12, 3)
    assert bh.alpha == pytest.approx(0.9) and bh.alpha_hat == pytest.approx(0.75) and bh.tau == pytest.approx(4.0)
    v = A.server_view(three)                       # the same passes through the server view of the records
    assert v.draft_acceptance_rate == pytest.approx(bh.alpha_hat)
    assert v.mean_acceptance_length == pytest.approx(bh.tau)
    assert sum(s.n_emitted for s in three) / 3 == pytest.approx(bh.tau)     # τ really is tokens per pass here
    assert v.alpha == pytest.approx(bh.alpha)
    names = {r["vLLM logs"]: r for r in P.vllm_names(bh, v)}
    assert names["Avg Draft acceptance rate"]["value"] == "75.0%"
    assert names["Mean acceptance length"]["value"] == "4.00"
    # α from vLLM's counters: 9 ÷ (9 + 3 × (1 − rate_4)), rate_4 = 2 of 3 passes kept all four
    assert names["–"]["value"].endswith("= 9 ÷ (9 + 3 × (1 − 0.667))") and 9 / (9 + 3 * (1 - 2 / 3)) == 0.9


def test_the_table_prefers_a_step_with_untested_drafts_wherever_it_is():
    steps = [step(0, 4, 4), step(1, 4, 3), step(2, 4, 4), step(3, 4, 4), step(4, 4, 0)]
    assert [s.index for s in P.pick_three(steps)] == [0, 1, 4]      # step 5 kept nothing: d2–d4 never tested
    assert len(P.pick_three([step(0, 4, 4), step(1, 0, 0)])) == 1   # a pass with no draft is no row


def test_anatomy_truth_is_the_cache_growth_the_step_measured():
    rec = step(6, 3, 1, cache=(40, 44, 42))
    g = P.anatomy_guess(rec, "draft")
    assert "fed 4 tokens and wrote 4 entries" in g.prompt and g.hi == 4
    assert P.anatomy_truth(rec) == {"kept": 2}                       # root + the one accepted draft
    assert score(g, 2, P.anatomy_truth(rec)).close and not score(g, 3, P.anatomy_truth(rec)).close


def test_best_k_is_zero_when_no_k_beats_plain():
    pts = [SimpleNamespace(k=k, speedup=s) for k, s in ((1, 0.9), (2, 0.97), (3, 0.8))]
    assert P.best_k_or_zero(pts) == 0
    pts.append(SimpleNamespace(k=4, speedup=1.05))
    assert P.best_k_or_zero(pts) == 4


def test_tree_and_heads_truths():
    rows = [SimpleNamespace(tokens_per_pass=2.0), SimpleNamespace(tokens_per_pass=2.6)]
    assert P.tree_truth(rows)["tau_gain"] == pytest.approx(0.6)
    swap = [{"target": "base", "method": "medusa", "tokens_per_pass": 2.5},
            {"target": "base", "method": "lookup", "tokens_per_pass": 1.5},
            {"target": "fine-tuned", "method": "medusa", "tokens_per_pass": 1.75}]
    assert P.heads_truth(swap, "medusa") == {"tau_lost": 0.75}


def test_every_new_guess_names_mode_method_k_tokens_and_repeats():
    gs = [P.tree_guess("eagle", "eagle-tree", 4, 0.8, 48, "story"),
          P.heads_guess("eagle", "story", 4, 48),
          P.kzero_guess(P.sweep_plan("lookup", "story", [1, 2, 3], [2, 3], 0.0, 24), 3)]
    for g in gs:
        ex = g.experiment
        assert ("greedy" in ex or "T = 0.8" in ex) and "k = " in ex and "new tokens" in ex and "run" in ex, ex
    assert "lookup at k = 1, 2 and 3 × n = 2 and 3 vs plain" in gs[2].experiment
