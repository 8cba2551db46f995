"""`bench --quick` on the real default model (slow)."""
import pytest

from bench_outputs import check_outputs
from specviz.cli import main

pytestmark = pytest.mark.slow


def test_quick_bench_on_the_default_model(tmp_path):
    out = tmp_path / "bench"
    assert main(["bench", "--quick", "--out", str(out)]) == 0  # fails when equality fails
    res = check_outputs(out, "bfloat16")
    assert all(e["ok"] for e in res["equality"])
