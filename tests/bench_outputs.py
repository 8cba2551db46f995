"""What every `bench --quick` run must write (shared by tests/tiny and tests/real)."""
import json

import pytest


def check_outputs(out, dtype):
    res = json.loads((out / "results.json").read_text())
    assert res["meta"]["dtype"] == dtype and res["meta"]["quick"]
    sp = res["speedup"]["greedy"]["per_workload"]
    for label in ("plain", "hf plain", "lookup", "lookup (recording off)", "hf lookup k=10"):
        assert set(sp[label]) == {"summarise-passage", "story"}, label
    assert all(x == 1.0 for x in sp["plain"].values())
    assert set(res["speedup"]["sampled"]["per_workload"]["lookup"]) == {"story"}  # novel only
    assert {(c["mode"], c["kind"]) for c in res["chosen"] if c["method"] == "lookup"} == \
        {("greedy", "copy-heavy"), ("greedy", "novel"), ("sampled", "novel")}
    f32 = [e for e in res["equality"] if e["dtype"] == "float32"]
    assert f32 and all(e["identical"] for e in f32)
    assert any(e["method"] == "hf plain" for e in f32)  # specviz plain == transformers' greedy
    assert res["cost_model"]
    for c in res["cost_model"]:  # each row is the greedy speedup table's number and the calculator's formula
        assert c["measured"] == pytest.approx(sp[c["method"]][c["workload"]])
        assert c["predicted"] == pytest.approx(c["tau"] / (c["v"] + c["k_bar"] * c["c"]), rel=0.01)  # JSON rounds
        if c["alpha"] is not None:
            assert c["alpha"] >= c["draft_acceptance_rate"]             # untested drafts are not failures
    assert any(t["target"].startswith("recording overhead") for t in res["targets"])
    md = (out / "results.md").read_text()
    assert "## Targets" in md and "## Cost-model check" in md
    assert "plotly" in (out / "results.html").read_text()
    return res
