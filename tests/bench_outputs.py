"""What every `bench --quick` run must write (shared by tests/tiny and tests/real)."""
import json

import pytest

from specviz.engine.device import describe_machine
from specviz.engine.experiment import Setting


def check_outputs(out, dtype):
    res = json.loads((out / "results.json").read_text())
    assert res["meta"]["dtype"] == dtype and res["meta"]["quick"]
    m = res["meta"]["machine"]                                       # every number names its machine
    assert m["dtype"] == dtype and m["cpu"] and m["capability"] and m["threads"] >= 1 and m["torch"]
    assert f"Machine: {describe_machine(m)}" in (out / "results.md").read_text()
    sp = res["speedup"]["greedy"]["per_workload"]
    for label in ("plain", "hf plain", "lookup", "suffix", "lookup (recording off)", "hf lookup k=10"):
        assert set(sp[label]) == {"summarise-passage", "story"}, label
    assert all(x == 1.0 for x in sp["plain"].values())
    assert set(res["speedup"]["sampled"]["per_workload"]["lookup"]) == {"story"}  # novel only
    assert {(c["mode"], c["kind"]) for c in res["chosen"] if c["method"] == "lookup"} == \
        {("greedy", "copy-heavy"), ("greedy", "novel"), ("sampled", "novel")}
    assert not any(t["method"] in ("lookup", "suffix") for t in res["tuning"])    # the copying methods: defaults
    lookup = Setting.resolve("lookup")                               # the registry's default: the match rule
    assert {c["setting"] for c in res["chosen"] if c["method"] == "lookup"} == {lookup.describe(short=True)}
    assert lookup.k_rule == "match" and lookup.describe(short=True) == f"lookup n={lookup.n} ≤{lookup.k}"
    # copying methods side by side, transformers' τ from its forward passes
    cp = {r["method"]: r for r in res["copying"]}
    assert set(cp) == {"lookup", "suffix", "hf lookup k=10"}
    assert cp["hf lookup k=10"]["tau"] >= 1.0 and cp["hf lookup k=10"]["vs_hf_lookup"] == pytest.approx(1.0)
    assert cp["lookup"]["k_bar"] is not None and cp["lookup"]["c"] is not None
    hf_plain = res["per_run"]["greedy"]["hf plain"]["summarise-passage"]
    assert hf_plain["tokens_per_pass"] == pytest.approx(1.0)         # one forward pass per token
    # the session phase: plain, suffix with the cache on and off, lookup, over every request
    sess = {r["label"]: r for r in res["sessions"]}
    assert set(sess) == {"suffix (cache on)", "suffix (cache off)", "lookup"}
    for r in sess.values():
        n = len(r["requests"])
        assert n >= 2 and len(r["request_speedups"]) == n and r["speedup"] > 0
        # float32: every request's greedy text is plain's. bfloat16 may part at a near-tie (the full bench's
        # sessions: 3 or 4 of 4-5 requests identical); a session does not keep the logits to tell which.
        assert dtype != "float32" or r["same_as_plain"] == [True] * n, r["same_as_plain"]
    assert sess["suffix (cache on)"]["cache"] is True and sess["suffix (cache off)"]["cache"] is False
    names = [t["target"] for t in res["targets"]]
    for part in ("§4 default lookup on copy-heavy", "§4 default lookup ÷ hf lookup k=10", "§4 suffix ÷ lookup on every",
                 "§4 suffix (cross-request cache on)", "§4 default lookup on each sampled novel"):
        assert any(x.startswith(part) for x in names), part
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
    assert "## Copying methods side by side" in md and "## Sessions" in md and "suffix (cache on)" in md
    assert "plotly" in (out / "results.html").read_text()
    return res
