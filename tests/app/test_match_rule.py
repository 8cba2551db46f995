"""AppTest for k / n experiments' match rule beside fixed k: guess -> run -> score, each row named by its run."""
from apptools import ok, page


def test_match_rule_beside_fixed_k_guess_run_score():
    at = page("experiments")
    ok(at.button(key="mr_run").click().run())
    assert "mr_result" not in at.session_state                           # no guess: nothing run
    at.number_input(key="mr_guess").set_value(0.5)
    ok(at.button(key="mr_run").click().run())
    rows = at.session_state["mr_result"]["rows"]
    assert [r["option"].k_rule for r in rows[:2]] == ["match", "fixed"] and rows[2]["label"] == "plain decoding"
    assert rows[0]["run"].startswith("lookup drafting as far as the match goes")
    assert rows[1]["run"].startswith("lookup k = 4, n = 3 vs plain")
    table = [d.value for d in at.dataframe][-1]
    assert list(table["run"]) == [r["run"] for r in rows]                 # each row labelled with its describe()
    said = [m.value for m in [*at.success, *at.info] if "Your guess 0.5" in m.value]
    assert len(said) == 1 and "Scored against: lookup drafting as far as the match goes" in said[0]
    gain = rows[0]["tau"] - rows[1]["tau"]
    assert f"measured {gain:.3g}" in said[0] or "close to the measured" in said[0]


def test_step_through_says_what_k_means_under_the_match_rule():
    at = page("step_through")
    at.selectbox(key="stp_method").set_value("lookup").run()         # the page opens on copy-recycle
    at.radio(key="stp_krule").set_value("match")
    ok(at.run())
    said = [c.value for c in at.caption if c.value.startswith("k for this run")]
    assert len(said) == 1 and "a cap of 24 tokens a step" in said[0]
    assert "lookup drafting as far as the match goes (4 × the matched length, at most 24 tokens" in said[0]
    assert at.number_input(key="stp_k").value == 4                       # the field still reads 4 ...
    at.radio(key="stp_krule").set_value("fixed")
    ok(at.run())
    assert not [c for c in at.caption if c.value.startswith("k for this run")]   # ... and is the draft length here
    at.selectbox(key="stp_method").set_value("suffix")
    ok(at.run())
    said = [c.value for c in at.caption if c.value.startswith("k for this run")]
    assert len(said) == 1 and "suffix (at most" in said[0] and "up to 24 nodes" in said[0]
