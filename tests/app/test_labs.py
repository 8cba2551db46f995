"""AppTests for the §6 labs: lossy rules (Is it lossless?), break-even per family (Break-even), batch size and the
roofline (Serving reality). Each measures only after a guess."""
import json

import pytest
from apptools import ok, page

from specviz.teach import roofline as T


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


def test_serving_reality_roofline_guess_measure_score():
    at = page("serving_reality")
    ok(at.button(key="rf_run").click().run())
    assert "rf_lab" not in at.session_state                                   # no guess: nothing measured
    assert at.radio(key="rf_free_guess").options == ["1", "2", "4", "beyond 4"]
    at.radio(key="rf_free_guess").set_value("4")
    ok(at.button(key="rf_run").click().run())
    lab = at.session_state["rf_lab"]
    assert list(lab.vb) == [1, 2, 4] and lab.peaks.bandwidth > 0 and lab.peaks.peak > 0
    labels = {m.label for m in at.metric}
    assert {"bandwidth (copy)", "ridge point here", "ridge of an H100 SXM"} <= labels
    answer = T.nearly_free_until(lab)
    said = [m.value for m in [*at.success, *at.info] if "“4”" in m.value]
    assert len(said) == 1 and ("is what the measurement shows" in said[0]) == (answer["measured"] == "4")
    assert "k = 4" in said[0]                                                 # scored naming its experiment
    cost, served = at.dataframe[-2].value, at.dataframe[-1].value
    assert list(cost["batch B"]) == [1, 2, 4] == list(served["batch B"])
    assert "v_B(4) roofline" in cost and "v_B(4) measured" in cost and "tokens/s speculating" in served
    spec = json.loads(at.get("plotly_chart")[-1].proto.spec)
    xs = [t for t in spec["data"] if t.get("name", "").startswith("verify pass")][0]["x"]
    assert xs == pytest.approx([lab.step.intensity(b, 4) for b in (1, 2, 4)])   # each step at its intensity
    assert spec["layout"]["xaxis"]["type"] == "log" and spec["layout"]["yaxis"]["type"] == "log"
    assert any(m.value.startswith("**The gap.**") for m in at.markdown)


def test_serving_reality_roofline_bad_batch_sizes_one_line():
    at = page("serving_reality")
    at.text_input(key="rf_batches").set_value("1, zero").run()
    errs = [e.value for e in at.error]
    assert errs == ["batch sizes must be whole numbers from 1 to 256, separated by commas; got 'zero'"]
    assert not [b for b in at.button if b.key == "rf_run"]                    # nothing to measure with


def test_breakeven_drafter_sizing_guess_run_score():
    at = page("breakeven")
    ok(at.button(key="ds_run").click().run())
    assert "ds_rows" not in at.session_state                                  # no guess: nothing run
    options = at.radio(key="ds_fast_guess").options
    assert options[0] == "first 1 of 2 layers" and any(o.startswith("draft model") for o in options)
    at.radio(key="ds_fast_guess").set_value(options[0])
    ok(at.button(key="ds_run").click().run())
    rows, ran = at.session_state["ds_rows"]
    assert [r.drafter.label for r in rows] == options and "k = 4" in ran and "vs plain" in ran
    assert all(r.speedup > 0 and r.c > 0 for r in rows)
    fastest = max(rows, key=lambda r: r.speedup).drafter.label
    said = [m.value for m in [*at.success, *at.info] if "first 1 of 2 layers" in m.value and "guess" in m.value]
    assert len(said) == 1 and ("is what the measurement shows" in said[0]) == (fastest == options[0])
    table = at.dataframe[-1].value
    assert list(table["drafter"]) == options and table["c priced from its parameters"][0] != "–"
    spec = json.loads(at.get("plotly_chart")[-1].proto.spec)
    stars = [t for t in spec["data"] if t.get("marker", {}).get("symbol") == "star"]
    assert len(stars) == sum(r.alpha is not None for r in rows)              # each measured drafter placed


def test_breakeven_drafter_sizing_bad_layers_one_line():
    at = page("breakeven")
    at.text_input(key="ds_layers").set_value("1, 7").run()
    assert [e.value for e in at.error] == ["layer counts must be whole numbers from 1 to 1, separated by commas; "
                                           "got '7'"]
    assert not [b for b in at.button if b.key == "ds_run"]


def test_step_through_max_new_tokens_of_zero_is_an_error_not_a_silent_run():
    at = page("step_through")
    at.number_input(key="stp_new").set_value(0)            # what the field holds after "abc" (its default, 0)
    ok(at.run())
    assert any("Check the settings: max new tokens must be between 1 and" in e.value for e in at.error)  # at once
    ok(at.button(key="stp_one").click().run())
    assert any("max new tokens must be between 1 and" in e.value and "reads as 0" in e.value
               for e in at.error)
    assert "stp" not in at.session_state                                     # no run was built


def test_lossless_sampled_siblings_guess_draw_score_and_one_line_errors():
    at = page("lossless")
    ok(at.button(key="ssb_run").click().run())
    assert "ssb_sim" not in at.session_state                                  # no guess: nothing drawn
    at.radio(key="ssb_mode").set_value("without replacement, q unadjusted")
    at.number_input(key="ssb_tv_guess").set_value(0.15)
    ok(at.button(key="ssb_run").click().run())
    sim = at.session_state["ssb_sim"]
    assert sim["law"].tolist() == [pytest.approx(0.1, abs=1e-6), pytest.approx(0.45, abs=1e-6),
                                   pytest.approx(0.45, abs=1e-6)]             # the example, closed form
    said = [s.value for s in at.success if "Your guess 0.15" in s.value]
    assert said and "2 siblings drawn without replacement, q unadjusted" in said[0]   # scored, naming its run
    table = at.dataframe[-1].value
    assert list(table["TV from p"]) == ["0.000", "0.000", "0.150"]
    assert any("Renormalise q" in w.value for w in at.warning)
    at.text_input(key="ssb_q").input("0.6, x, 0.2").run()                    # bad input: one clear line
    ok(at)
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and "number" in errs[0]
    at.text_input(key="ssb_q").input("0.5, 0.5, 0").run()
    at.number_input(key="ssb_n").set_value(3).run()
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and "cannot be drawn without replacement" in errs[0]


def test_trees_tree_calculator_guess_measure_score_and_bad_budget():
    at = page("trees")
    at.selectbox(key="tc_method").set_value("suffix")
    ok(at.button(key="tc_shape_run").click().run())
    assert "tc_run" not in at.session_state                                   # no guess: nothing measured
    at.selectbox(key="tr_preset").set_value("edit-code · copy-heavy")       # where the tiny model's loops match
    at.number_input(key="tr_new").set_value(64)
    at.radio(key="tc_shape_guess").set_value("chain")
    ok(at.button(key="tc_shape_run").click().run())
    run = at.session_state["tc_run"]
    assert run["method"] == "suffix" and run["passes"] > 0
    scored = [x.value for x in [*at.success, *at.info] if "You guessed" in x.value or "Your guess" in x.value]
    assert run["b"] and run["b"][0] > 0                   # the tiny model's greedy loops give suffix matches
    from specviz.engine.experiment import Setting
    said = Setting.resolve("suffix", at.number_input(key="tr_k").value).describe()   # the run the guess names
    assert scored and f"b_j from {said}, greedy, 64 new tokens, one run, on 'edit-code'" in scored[0]
    table = at.dataframe[-1].value
    assert list(table["shape"]) == ["chain", "two per level", "star (all at depth 1)", "best tree (grown)"]
    best = max(float(x) for x in table["E[τ]"])
    assert float(table["E[τ]"].iloc[-1]) == best                             # the grown tree is the best
    at.number_input(key="tc_n").set_value(0).run()
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and "node budget must be between 1 and 24, got 0" in errs[0]


def test_derivations_temperature_sweep_after_a_guess():
    from specviz.teach import temperature as TT

    at = page("derivations")
    ok(at.button(key="tt_trend_run").click().run())
    assert "tt_rows" not in at.session_state                                  # no guess: nothing measured
    at.radio(key="tt_trend_guess").set_value("falls")
    ok(at.button(key="tt_trend_run").click().run())
    first, rows, _ = at.session_state["tt_rows"]
    methods = list(dict.fromkeys(r["method"] for r in rows))
    assert first == methods[0] and "lookup" in methods
    assert len(rows) == len(methods) * (len(TT.TEMPS) + len(TT.TOP_PS))
    said = [x.value for x in [*at.success, *at.info] if "falls" in x.value and "Scored against" in x.value]
    from specviz.engine.experiment import Setting
    ran = Setting.resolve(first, 4, k_rule="fixed").describe()               # the Setting every point runs
    assert said and f"Scored against: {ran}, " in said[0] and "new tokens, one run per point" in said[0]
    assert any(m.value.startswith("Measured: ") and TT.trend(rows, first) in m.value for m in at.markdown)


def test_derivations_mismatched_warping_drifts_and_refuses_bad_logits():
    from specviz.core import warping as W

    at = page("derivations")
    at.radio(key="wp_case").set_value(W.P_RAW)
    at.number_input(key="wp_tv_guess").set_value(0.2)
    ok(at.button(key="wp_run").click().run())
    sim = at.session_state["wp_sim"]
    law = W.output(sim["w"])
    assert W.tv(law, sim["w"].target) > 0.05                                  # the drift, in closed form
    assert any("Your guess 0.2" in x.value and "p tested at T = 1" in x.value for x in [*at.success, *at.info])
    assert any("Build both with one function" in w.value for w in at.warning)
    at.text_input(key="wp_zq").input("1.0, two, 0.0").run()                  # bad input: one clear line
    ok(at)
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and "numbers separated by commas" in errs[0]


def test_lossless_shows_the_rule_as_the_engine_runs_it():
    import inspect

    from specviz.core import verify

    at = page("lossless")
    code = [c.value for c in at.code]
    engine = inspect.getsource(verify.verify).strip()                   # read from the module at run time
    assert any(engine in c and "def residual" in c for c in code)
    assert any("def verify_tree" in c for c in code)                                        # the siblings' verifier
