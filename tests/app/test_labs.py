"""AppTests for the §6 labs: lossy rules (Is it lossless?), break-even per family (Break-even), batch size and the
roofline (Serving reality). Each measures only after a guess."""
from apptools import ok, page


def test_lossless_lossy_rules_are_labelled_and_drift():
    at = page("lossless")
    ok(at.button(key="ly_run").click().run())
    assert "ly_sim" not in at.session_state                                   # no guess: nothing drawn
    at.number_input(key="ly_drift_guess").set_value(0.1)
    ok(at.button(key="ly_run").click().run())
    table = at.dataframe[-1].value
    assert list(table["rule"]) == ["Medusa typical acceptance (lossy)", "SGLang accept thresholds (lossy)",
                                   "exact (lossless)"]
    assert all(float(x) > 0.0 for x in table["TV from p, closed form"][:2])
    assert any("Your guess 0.1" in m.value for m in [*at.success, *at.info])  # scored
    at.selectbox(key="lab_real_method").set_value("draft")                   # part 2 on the (tiny) real model ...
    at.select_slider(key="lab_real_trials").set_value(200)
    ok(at.button(key="lab_real_run").click().run())
    real = [m.value for m in at.markdown if m.value.startswith("**The lossy rules on this p and q**")]
    assert len(real) == 1 and real[0].count("drift **") == 2                 # ... and both lossy rules on its p, q


def test_breakeven_per_family_after_guesses():
    at = page("breakeven")
    names = [w.key for w in at.number_input if w.key and w.key.startswith("fam_") and w.key.endswith("_guess")]
    assert any(n == "fam_lookup_guess" for n in names) and any(n == "fam_layer truncation_guess" for n in names)
    ok(at.button(key="fam_run").click().run())
    assert "fam_c" not in at.session_state                                    # a guess missing: nothing measured
    for n in names:
        at.number_input(key=n).set_value(0.3)
    ok(at.button(key="fam_run").click().run())
    assert "fam_c" in at.session_state
    table = at.dataframe[-1].value
    assert list(table["family"])[0] == "lookup" and list(table["family"])[-1] == "layer truncation"
    assert list(table["break-even α"])[0] == "pays at any α"
    assert len(table) == len(names)                                           # one row per guessed family
    scores = [m.value for m in [*at.success, *at.info] if "Your guess 0.3" in m.value or "Not scored" in m.value]
    assert len(scores) == len(names)                                          # every family's guess scored
    assert any("Your guess 0.3 is high: measured 0 (off by 0.3)" in x for x in scores)  # lookup breaks even at 0


def test_serving_reality_roofline_after_a_guess():
    at = page("serving_reality")
    ok(at.button(key="rf_run").click().run())
    assert "rf_vb" not in at.session_state
    at.number_input(key="rf_s16_guess").set_value(1.0)
    ok(at.button(key="rf_run").click().run())
    assert set(at.session_state["rf_vb"]) == {1, 4, 16}
    assert any(m.label == "achieved bandwidth" for m in at.metric)
    assert any("Wasted compute per pass" in m.value for m in at.markdown)
    assert list(at.dataframe[-1].value["batch"]) == [1, 4, 16]


def test_step_through_max_new_tokens_of_zero_is_an_error_not_a_silent_run():
    at = page("step_through")
    at.number_input(key="stp_new").set_value(0)            # what the field holds after "abc" (its default, 0)
    ok(at.run())
    assert any("Check the settings: max new tokens must be between 1 and" in e.value for e in at.error)  # at once
    ok(at.button(key="stp_one").click().run())
    assert any("max new tokens must be between 1 and" in e.value and "reads as 0" in e.value
               for e in at.error)
    assert "stp" not in at.session_state                                     # no run was built
