"""The walkthrough quotes a measured v(k) only when its spread is smaller than the effect it shows."""
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
