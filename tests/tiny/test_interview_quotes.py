"""The walkthrough quotes a measured v(k) only when its spread is smaller than the effect it shows."""
import pytest

from specviz.engine.passcost import VTable
from specviz.teach import interview as I


def answer_for(monkeypatch, v: dict, spread: dict) -> dict:
    monkeypatch.setattr(I, "measure_v", lambda *a, **kw: VTable(v, spread, rounds=7))
    return I.verify_cost(None, None, small=True)


def test_a_steady_v_is_quoted_with_its_spread(monkeypatch):
    out = answer_for(monkeypatch, {1: 1.02, 4: 1.30, 8: 1.60}, {1: 0.01, 4: 0.05, 8: 0.08})
    assert out["v4"].startswith("1.30") and "spread 0.05" in out["v4"]
    assert out["cost4"] == "1.30 plain steps"
    assert out["gain4"] == f"{2.7731 / 1.30:.2f}"


def test_a_noisy_v_is_refused(monkeypatch):
    # the issue's own example: v(8) below v(1), with spreads larger than the differences from 1
    out = answer_for(monkeypatch, {1: 1.22, 4: 1.32, 8: 1.05}, {1: 0.40, 4: 0.45, 8: 0.30})
    for k in ("v1", "v4", "v8"):
        assert out[k].startswith("too noisy to quote"), out[k]
    assert "too noisy" in out["cost4"] and "1.32" not in out["cost4"]


# -- every guess names its experiment; an unmeasured value is not scored -------------------------------
def test_a_guess_against_nothing_measured_is_not_scored():
    from specviz.teach.guess import score

    s = score(I.GUESS_CHAT_ACC, 0.3, {"acc_s_x": None})       # α̂ n/a: nothing drafted
    assert not s.close and s.text.startswith("Not scored") and "measured 0" not in s.text


def test_decoding_guesses_name_mode_k_and_tokens():
    runs = {I.lookup_vs_draft, I.lookup_on_chat, I.lookup_on_translation, I.lookup_sweep}
    from specviz.teach.guess import asked as shown
    asked = [(s.question + " " + shown(I.guess_for(s, False, True))) for s in I.STOPS if s.measure in runs]
    asked += [(q.text + " " + shown(I.guess_for(q, False, True))) for q in I.QUESTIONS if q.measure in runs and q.guess]
    assert len(asked) >= 5
    for text in asked:
        assert ("greedy" in text or "T = 0.8" in text) and "k" in text and "new tokens" in text, text
    stop3 = next(s for s in I.STOPS if s.measure is I.lookup_sweep)
    assert stop3.guess.truth == "best_k_x" and "best k" in stop3.guess.prompt   # asks for a k, scores a k
    stop5 = next(s for s in I.STOPS if s.measure is I.lookup_vs_draft)
    assert "samples" in stop5.question and "{draft_copy_times}" in stop5.answer
    assert "T = 0.8" in I.guess_for(stop5, False, True).experiment


def test_the_best_k_says_whether_it_sits_at_the_edge_of_the_grid(monkeypatch):
    from types import SimpleNamespace as NS

    def fake_sweep(best):
        return lambda *a, **kw: ([NS(k=k, speedup=2.0 if k == best else 1.0) for k in I.SWEEP_KS], [])

    monkeypatch.setattr(I.SW, "sweep", fake_sweep(10))
    out = I.lookup_sweep(None, None, small=False)
    assert out["best_k_x"] == 10.0 and "inside the grid" in out["edge"]
    monkeypatch.setattr(I.SW, "sweep", fake_sweep(max(I.SWEEP_KS)))
    assert "largest k tried" in I.lookup_sweep(None, None, small=False)["edge"]


def test_the_heads_question_asks_for_tau_lost_and_says_when_nothing_was_measured(monkeypatch):
    q = next(q for q in I.QUESTIONS if q.key == "heads_cost")
    assert q.guess.truth == "tau_lost_x" and "τ" in q.guess.prompt and "KB" not in q.guess.prompt
    monkeypatch.setattr(I, "trained_available", lambda: {"eagle": False, "medusa": False, "lora": False})
    monkeypatch.setattr(I, "heads_cost", lambda *a, **kw: {"run": "", "heads_mb": "none"})
    out = I.heads_on_finetune(None, None, small=True)
    assert out["tau_lost_x"] is None and out["run"].startswith("nothing measured")
    rows = [{"target": "base", "method": "eagle", "tokens_per_pass": 1.8},
            {"target": "fine-tuned", "method": "eagle", "tokens_per_pass": 1.2}]
    monkeypatch.setattr(I, "trained_available", lambda: {"eagle": True, "lora": True})
    monkeypatch.setattr(I.CK, "checkpoint_swap", lambda *a, **kw: (rows, {}))
    import specviz.engine.artifacts as artifacts
    monkeypatch.setattr(artifacts, "load_finetuned_target", lambda t: t)
    out = I.heads_on_finetune(None, None, small=True)
    assert out["tau_lost_x"] == pytest.approx(0.6) and out["share_lost"] == "75%"
    assert "0.60" in I.answer(q.answers["senior"], dict(out, target_mb="1", kv_kb="1", drafter_mb="1"))


def test_greedy_verdict_calls_a_small_gap_about_the_same():
    assert I.greedy_verdict("1.09", "1.00").startswith("about the same")      # the case: gap <= 0.1
    assert I.greedy_verdict("1.60", "1.00").startswith("higher")
    assert I.greedy_verdict("1.00", "1.40").startswith("lower")
    assert "no higher" not in I.greedy_verdict("1.00", "1.40")
