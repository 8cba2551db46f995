"""Lessons measured on the real default model (slow)."""
import pytest

from specviz.core.sampling import SamplingConfig
from specviz.engine import comparisons as E
from specviz.engine.workloads import get


@pytest.mark.slow
def test_lookup_excels_on_copy_and_not_on_sampled_novel_text():
    from specviz.engine.models import load_model

    target = load_model("default", "cpu", "bfloat16")
    # quote-document: a verbatim copy, so lookup's τ is high at any length
    copy_runs = E.compare(target, [get("quote-document")], ["lookup"], [5], max_new_tokens=32)
    novel_runs = E.compare(target, [get("story")], ["lookup"], [5], sampling=SamplingConfig(temperature=0.8),
                           max_new_tokens=32)
    tpp = lambda runs: next(r.summary.tokens_per_pass for r in runs if r.method == "lookup")  # noqa: E731
    assert tpp(novel_runs) < 1.3 < 1.6 < tpp(copy_runs)
