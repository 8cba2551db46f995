"""Serving reality's dtype lab (issue 33, item 7): v(24) guessed in bfloat16 and float32, then measured in both
(the target and a cast copy), scored against the experiment the guesses named; a failed measurement is one error."""
from apptools import ok, page

from specviz.core.errors import ModelError
from specviz.teach import dtypes as D


def test_both_dtypes_are_measured_after_both_guesses_and_scored_against_the_named_experiment():
    at = page("serving_reality")
    ok(at.button(key="dt_run").click().run())
    assert "dt_v" not in at.session_state                                     # no guesses: nothing timed
    asked = [w.label for w in at.number_input if w.key in ("dt_bf16_guess", "dt_f32_guess")]
    assert len(asked) == 2 and all("2 interleaved rounds" in a and "32-token random prompt" in a for a in asked)
    at.number_input(key="dt_bf16_guess").set_value(10.0)
    at.number_input(key="dt_f32_guess").set_value(3.0)
    ok(at.button(key="dt_run").click().run())
    v, exp = at.session_state["dt_v"]
    assert set(v) == {"bfloat16", "float32"} and all(x > 0 for x in v.values())
    assert all(exp in a for a in asked)                                       # the run is the one the guesses named
    scored = [m.value for m in [*at.success, *at.info] if "Your guess" in m.value]
    assert len(scored) == 2
    table = at.dataframe[-1].value
    assert list(table["dtype"]) == [*v, *D.AVX2_MEASURED] and sorted(v) == ["bfloat16", "float32"]
    assert f"{v['float32']:.2f}" in list(table[f"v({D.K})"])


def test_a_measurement_that_fails_is_one_error_and_nothing_is_kept(monkeypatch):
    def broken(*a, **k):
        raise ModelError("the context window is too small")
    monkeypatch.setattr(D, "measure_v", broken)
    at = page("serving_reality")
    at.number_input(key="dt_bf16_guess").set_value(10.0)
    at.number_input(key="dt_f32_guess").set_value(3.0)
    ok(at.button(key="dt_run").click().run())
    assert [e.value for e in at.error if "Cannot measure v in both dtypes" in e.value]
    assert "dt_v" not in at.session_state
