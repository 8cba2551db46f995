"""`bench --quick` on the real default model (slow)."""
import pytest
from bench_outputs import check_outputs

from specviz.cli import main

pytestmark = pytest.mark.slow


def test_quick_bench_on_the_default_model(tmp_path):
    out = tmp_path / "bench"
    assert main(["bench", "--quick", "--dtype", "bfloat16", "--out", str(out)]) == 0  # fails when equality fails
    res = check_outputs(out, "bfloat16")
    assert all(e["ok"] for e in res["equality"])
    # the shipped heads run as chains and as trees, side by side, and trees are checked for equality too
    sp = res["speedup"]["greedy"]["per_workload"]
    for chain, tree in (("medusa", "medusa-tree"), ("eagle", "eagle-tree")):
        assert chain in sp and tree in sp
        assert any(e["method"].startswith(tree) and e["dtype"] == "float32" for e in res["equality"])
    assert res["v_tree"]
    md = (out / "results.md").read_text()
    assert "## Learned proposers beside lookup; chain vs tree" in md
    assert "## What the learned targets would take" in md and "| eagle | " in md.split("would take")[1]
