"""AppTest for Compare, k/n experiments, Is it lossless?, Tokenizers & checkpoints, Walkthrough and
Take it to a server, in test-sized mode (SPECVIZ_TINY=1: tiny random Llamas with the real tokenizer).

Widgets are set, buttons clicked, and the rendered text and plotly figure data (parsed from the
element proto's `spec` JSON) are checked.
"""
import base64
import json

import pytest
from apptools import APP, ok, page
from streamlit.testing.v1 import AppTest


def _values(v):
    if isinstance(v, dict) and "bdata" in v:  # plotly's typed-array encoding
        import numpy as np
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).tolist()
    return v


def texts(at) -> str:
    return "\n".join(m.value for m in at.markdown) + "\n".join(c.value for c in at.caption)


def test_compare_measures_every_method_and_recommends_per_kind():
    at = page("compare")
    assert "lookup" in at.multiselect(key="cmp_methods").value and "draft" in at.multiselect(key="cmp_methods").value
    at.multiselect(key="cmp_ks").set_value([1, 2])
    at.radio(key="cmp_mode").set_value("greedy")
    ok(at.button(key="cmp_run").click().run())
    assert not at.error
    figs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    bars = figs[0]
    # one trace per workload in each of the three panels; x labels name every method and k
    xs = {x for tr in bars["data"] for x in tr["x"]}
    # methods that size their own drafts run once each, at their cap (k = 24), whatever the k values say; the others
    # once per k value (the registry says which is which)
    from specviz.engine.methods import REGISTRY
    chosen = at.multiselect(key="cmp_methods").value
    sized = [m for m in chosen if REGISTRY[m].sizes_own_drafts()]
    fixed = [m for m in chosen if m not in sized]
    assert {"lookup", "suffix"} <= set(sized) and "draft" in fixed
    # each label names what ran: lookup's n from the widget and its cap, the others' k (Setting.describe(short=True))
    from specviz.engine.experiment import Setting
    n = at.number_input(key="cmp_n").value
    runs = [Setting.resolve(m, k, n=n if m == "lookup" else None).describe(short=True)
            for m in ["plain", *sized, *fixed] for k in ((1,) if m == "plain" or m in sized else (1, 2))]
    assert set(runs) <= xs and f"lookup n={n} ≤24" in xs and "draft k=2" in xs and not any("k=24" in x for x in xs)
    assert len({tr["name"] for tr in bars["data"]}) == 2  # one of each kind: two workloads
    speed = [tr for tr in bars["data"] if tr["xaxis"] == "x3"]
    assert all(_values(tr["y"])[tr["x"].index("plain")] == pytest.approx(1.0) for tr in speed)
    timeline = figs[2]
    names = {tr["name"] for tr in timeline["data"]}
    assert names == {"draft", "verify (target pass)"}
    # one subplot per run of the first workload; the draft model's passes show, lookup's search does not
    titles = [a["text"] for a in timeline["layout"]["annotations"]]
    draft_ms = [sum(_values(tr["y"])) for tr in timeline["data"] if tr["name"] == "draft"]
    assert len(titles) == len(draft_ms) == len(runs)
    per_run = dict(zip([t.split(" · ")[1] for t in titles], draft_ms))
    assert per_run["draft k=2"] > 5 * per_run[f"lookup n={n} ≤24"] and per_run["plain"] < per_run["draft k=1"]
    df = at.dataframe[0].value
    assert set(df["setting"]) == set(runs) and len(df) == 2 * len(runs)  # plain rows: medians
    # every row's label is its own run's settings, read from the proposer and DecodeConfig that ran
    kept = at.session_state["cmp_result"]["runs"]
    for w, label in zip(df["workload"], df["setting"]):
        mine = [r for r in kept if r.workload == w and r.label == label]
        assert mine and all(r.setting.method == r.method and r.setting.k == (r.k or 1) for r in mine), label
    plain = df[df["setting"] == "plain"]
    assert set(plain["alpha"]) == {"–"}   # no raw None: a dash, and the caption says why
    assert "None" not in df.to_string() and any("–: α where no draft was tested" in c.value for c in at.caption)
    rec = [m.value for m in at.markdown if m.value.startswith("- **copy-heavy**") or m.value.startswith("- **novel**")]
    assert len(rec) == 2
    # measured runs reach the calculator's store
    assert {"lookup", "draft"} <= set(at.session_state["measured_runs"])


def test_compare_bad_input_keeps_earlier_results():
    at = page("compare")
    at.multiselect(key="cmp_ks").set_value([1])
    ok(at.button(key="cmp_run").click().run())
    n_figs = len(at.get("plotly_chart"))
    at.multiselect(key="cmp_ks").set_value([])
    ok(at.button(key="cmp_run").click().run())
    assert any("k" in e.value for e in at.error)
    assert len(at.get("plotly_chart")) == n_figs  # the earlier comparison is still shown


def test_compare_greedy_vs_sampled_check():
    at = page("compare")
    at.number_input(key="cmp_gvs_k").set_value(3)
    ok(at.button(key="cmp_gvs_run").click().run())
    fig = json.loads(at.get("plotly_chart")[-1].proto.spec)
    assert {tr["name"] for tr in fig["data"]} == {"greedy", "sampled T=0.8"}
    assert "greedy" in texts(at) and "sampled T=0.8" in texts(at)


def test_experiments_sweep_draws_lines_and_heatmap():
    at = page("experiments")
    at.selectbox(key="exp_method").set_value("lookup")
    at.slider(key="exp_k").set_value((1, 3))
    at.slider(key="exp_n").set_value((1, 2))
    at.number_input(key="exp_guess").set_value(0)
    ok(at.button(key="exp_run").click().run())
    assert not at.error
    figs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    lines, heat = figs[0], figs[1]
    assert {tr["name"] for tr in lines["data"]} == {"n=1", "n=2"}
    assert all(tr["x"] == [1, 2, 3] for tr in lines["data"])
    assert heat["data"][0]["type"] == "heatmap"
    assert heat["data"][0]["x"] == [1, 2, 3] and heat["data"][0]["y"] == [1, 2]
    assert len(at.dataframe[0].value) == 6
    assert "Fastest measured setting" in texts(at)


def test_experiments_draft_model_sweep_has_no_heatmap():
    at = page("experiments")
    at.selectbox(key="exp_method").set_value("draft")
    at.slider(key="exp_k").set_value((1, 2))
    ok(at.button(key="exp_run").click().run())                   # no guess: nothing runs
    assert "exp_result" not in at.session_state
    assert any("Commit to a guess first" in w.value for w in at.warning)
    at.number_input(key="exp_guess").set_value(2)
    ok(at.button(key="exp_run").click().run())
    figs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    assert len(figs) == 1 and [tr["x"] for tr in figs[0]["data"]][0] == [1, 2]
    points = at.session_state["exp_result"]["points"]
    fastest = max(points, key=lambda p: p.speedup)
    best = fastest.k if fastest.speedup > 1 else 0              # k = 0: no k beat plain
    said = next(x.value for x in [*at.success, *at.info] if "Your guess 2" in x.value)
    assert (f"close to the measured {best}" if best == 2 else f"measured {best} ") in said
    assert "draft at k = 1 and 2 vs plain, greedy, 6 new tokens, one run each" in said
    # the guess names the very settings the sweep ran, and each table row is labelled by its point's own settings
    from specviz.teach.predict import sweep_plan
    plan = at.session_state["exp_result"]["plan"]
    again = sweep_plan("draft", at.selectbox(key="exp_workload").value, [1, 2], None, 0.0, 6)
    assert [p.setting for p in points] == list(plan.settings) == list(again.settings) and plan == again
    assert list(at.dataframe[0].value["setting"]) == ["draft k=1", "draft k=2"]
    assert (fastest.speedup <= 1) == any("the best k is 0" in i.value for i in at.info)


def test_lossless_lab_converges_to_p_and_refuses_bad_input():
    at = page("lossless")
    at.selectbox(key="lab_preset").set_value("q far from p").run()
    assert at.text_input(key="lab_q").value.startswith("0.50")
    at.select_slider(key="lab_trials").set_value(3000)
    ok(at.button(key="lab_run").click().run())          # no guess yet: nothing is drawn
    assert any("guess first" in w.value for w in at.warning) and not at.get("plotly_chart")
    at.number_input(key="lab_kept_guess").set_value(0.7)
    ok(at.button(key="lab_run").click().run())
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Σ min(p, q) = P(draft kept)"] == "0.400"
    assert metrics["P(reject) = 1 − Σ min(p, q)"] == metrics["total variation distance p ↔ q"] == "0.600"
    assert any("Your guess 0.7 is high: measured 0.4" in m.value for m in at.info)  # scored against Σ min
    figs = [json.loads(el.proto.spec) for el in at.get("plotly_chart")]
    hist, conv = figs[1], figs[2]
    emp = next(tr for tr in hist["data"] if tr["name"].startswith("speculative output"))
    p = next(tr for tr in hist["data"] if tr["name"] == "p (target)")
    assert max(abs(a - b) for a, b in zip(_values(emp["y"]), _values(p["y"]))) < 0.04
    to_p, to_q = (_values(tr["y"]) for tr in conv["data"])
    assert to_p[-1] < 0.05 < 0.3 < to_q[-1]
    assert len(figs) == 3  # p/q/residual, histogram, convergence
    # the histogram as the count grows: after 10 trials it is a coarse, 10-sample picture
    ok(at.select_slider(key="lab_at").set_value(10).run())
    early = next(tr for tr in json.loads(at.get("plotly_chart")[1].proto.spec)["data"]
                 if tr["name"].startswith("speculative output"))
    assert early["name"] == "speculative output (10 trials)"
    assert all(abs(v * 10 - round(v * 10)) < 1e-6 for v in _values(early["y"]))
    # bad input: an error, and the earlier simulation stays on the page
    at.text_input(key="lab_p").input("0.2, x").run()
    ok(at)
    assert any("numbers" in e.value for e in at.error)
    assert len(at.get("plotly_chart")) == 3


def test_lossless_break_the_rule_drifts_away_from_p():
    at = page("lossless")
    at.selectbox(key="lab_preset").set_value("q far from p").run()
    at.number_input(key="lab_kept_guess").set_value(0.4)
    at.radio(key="lab_rule").set_value("resample from p")
    at.select_slider(key="lab_trials").set_value(3000)
    ok(at.button(key="lab_run").click().run())
    assert any(s.value.startswith("✓ Your guess 0.4 is close") for s in at.success)
    conv = json.loads(at.get("plotly_chart")[2].proto.spec)
    to_p = _values(conv["data"][0]["y"])
    assert to_p[-1] > 0.1                               # the broken rule does not converge to p
    assert any("instead of p" in w.value for w in at.warning)


def test_lossless_guess_names_what_the_chosen_rule_keeps():
    at = page("lossless")
    at.selectbox(key="lab_preset").set_value("q far from p").run()
    at.radio(key="lab_rule").set_value("accept every draft").run()
    label = at.number_input(key="lab_kept_guess").label
    assert "Σ min" not in label and "this rule keeps" in label
    at.number_input(key="lab_kept_guess").set_value(1.0)
    at.select_slider(key="lab_trials").set_value(300)
    ok(at.button(key="lab_run").click().run())
    assert any(s.value.startswith("✓ Your guess 1 is close to the measured 1") for s in at.success)


def test_lossless_a_broken_rule_shows_its_drift_before_any_draw():
    at = page("lossless")                                  # the default preset: q close to p
    at.radio(key="lab_rule").set_value("accept every draft").run()
    drift = [w.value for w in at.warning if "from p in total variation" in w.value]
    assert drift and "0.60" not in drift[0].split("On")[0] and "0.60" in drift[0]   # small here, 0.60 on far
    ok(at.button(key="lab_use_far").click().run())
    assert at.selectbox(key="lab_preset").value == "q far from p"
    assert at.text_input(key="lab_q").value.startswith("0.50")
    assert any("**0.60** from p" in w.value for w in at.warning)


def test_lossless_tree_sampling_by_hand():
    at = page("lossless")
    ok(at.button(key="tsb_run").click().run())                # no guess: nothing drawn
    assert "tsb_sim" not in at.session_state
    at.number_input(key="tsb_some_guess").set_value(0.7)
    ok(at.button(key="tsb_run").click().run())
    assert any(s.value.startswith("✓ Your guess 0.7 is close") for s in at.success)   # p(E) + p(D) = 0.70
    table = at.dataframe[-1].value
    assert list(table["candidate"]) == ["E", "D", "(none kept)"]
    assert list(table["tested against"])[1].split(", ")[4] == "0.00"                # E removed after its rejection
    assert any("p mass the candidates cover (0.700)" in m.value for m in at.markdown)
    at.radio(key="tsb_rule").set_value("against p")
    ok(at.button(key="tsb_run").click().run())
    assert any("however many draws" in w.value for w in at.warning)                 # the broken rule drifts
    ok(at.text_input(key="tsb_cands").input("Z").run())
    assert any("not a token of the toy vocabulary" in e.value for e in at.error)


def test_lossless_real_model_with_a_drafter():
    at = page("lossless")
    at.selectbox(key="lab_real_method").set_value("draft")
    at.select_slider(key="lab_real_trials").set_value(500)
    ok(at.button(key="lab_real_run").click().run())
    assert not at.error
    fig = json.loads(at.get("plotly_chart")[-1].proto.spec)
    assert fig["data"][0]["x"][-1].startswith("(the other ") and "last bar" in texts(at)
    assert "the same number" in texts(at)  # P(reject) beside the total variation distance
    assert "49152 token ids" in texts(at)


def test_pitfalls_shows_the_refusal_and_the_ids():
    at = page("pitfalls")
    ok(at.text_input(key="pit_text").input("Alice Martin lives in Lyon.").run())
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["target's token ids"] == "49,152" and metrics["this drafter's token ids"] == "600"
    # the refusal, shown as the intended outcome (an info box), not as an app failure (no red error box)
    assert not at.error and any("49152" in i.value and "600" in i.value and "as intended" in i.value for i in at.info)
    df = at.dataframe[0].value
    assert list(df["target id"]) != list(df["drafter id"])
    at.text_input(key="pit_text").input("   ").run()
    assert any("Type some text" in w.value for w in at.warning)
    ok(at)


def test_walkthrough_steps_and_measures():
    at = page("walkthrough")
    assert at.button(key="wt_prev").disabled
    assert "1. The rule is lossless" in [h.value for h in at.subheader]
    ok(at.button(key="wt_next").click().run())
    assert "2. Why speculation can help at all" in [h.value for h in at.subheader]
    ok(at.button(key="wt_prev").click().run())
    ok(at.button(key="wt_run").click().run())                      # no guess: nothing is measured
    assert not at.success and any("guess first" in w.value for w in at.warning)
    assert not any("Commit to a guess" in i.value for i in at.info)  # one box says what to do, not two
    at.number_input(key="stop:lossless_toy_guess").set_value(0.9)
    ok(at.button(key="wt_run").click().run())
    assert "Stop 1 of 10 · 1 measured" in at.get("progress")[0].proto.text  # counted on the run that measured
    measured = at.session_state["wt_measured"]["stop:lossless_toy"]
    assert measured["kept"] in at.success[-1].value and "from p" in at.success[-1].value
    assert any(i.value.startswith("✗ Your guess 0.9 is high: measured 0.4") for i in at.info)  # scored
    ok(at.button(key="wt_next").click().run())
    ok(at.button(key="wt_prev").click().run())                     # the progress and the result stay
    assert at.session_state["wt_stop"] == 0 and "Stop 1 of 10 · 1 measured" in at.get("progress")[0].proto.text


def test_interview_answers_quote_the_measured_numbers():
    at = page("walkthrough")
    at.radio(key="wt_mode").set_value("Interview prep").run()
    assert at.radio(key="iv_level").options == ["junior", "middle", "senior", "principal"]
    at.radio(key="iv_level").set_value("senior").run()
    at.radio(key="q:tokenizer_check_guess").set_value("refused")
    ok(at.button(key="iv_run_tokenizer").click().run())
    answer = next(m.value for m in at.markdown if m.value.startswith("*senior:*"))
    ids = at.session_state["wt_measured"]["q:tokenizer_check"]["target_ids"]
    assert ids in answer
    assert "refus" in answer.lower() or "tokenizers differ" in answer
    assert any("Your guess, “refused”" in x.value for x in at.success)
    at.radio(key="iv_level").set_value("middle").run()
    at.number_input(key="q:lookup_on_chat_guess").set_value(0.5)
    ok(at.button(key="iv_run_lookup_chat").click().run())
    measured = at.session_state["wt_measured"]["q:lookup_on_chat"]
    answer = [m.value for m in at.markdown if m.value.startswith("*middle:*")][-1]
    assert measured["acc_s"] in answer and measured["speedup_s"] in answer
    assert any(m.value.startswith("**Follow-up:**") and measured["acc_g"] in m.value for m in at.markdown)
    assert not any("Near zero, always" in m.value for m in at.markdown)


def test_serve_builds_valid_configs_and_flags_bad_ones():
    from specviz.teach import serving

    at = page("serve")
    cfg = json.loads(at.code[0].value)
    assert cfg["method"] == "ngram" and serving.validate(cfg) == []
    at.number_input(key="srv_k").set_value(7)
    at.number_input(key="srv_nmin").set_value(1)
    at.number_input(key="srv_nmax").set_value(3).run()
    cfg = json.loads(at.code[0].value)
    assert cfg == {"method": "ngram", "num_speculative_tokens": 7, "prompt_lookup_min": 1, "prompt_lookup_max": 3}
    assert "--speculative-config" in at.code[1].value
    at.number_input(key="srv_nmin").set_value(5).run()
    assert at.error and json.loads(at.code[0].value) == cfg  # refused, the last valid config kept
    at.selectbox(key="srv_method").set_value("eagle3").run()
    assert any("needs a model" in w.value for w in at.warning)
    at.text_input(key="srv_model").input("org/eagle3-head").run()
    cfg = json.loads(at.code[0].value)
    assert cfg == {"method": "eagle3", "num_speculative_tokens": 7, "model": "org/eagle3-head"}
    assert any("EAGLE-3" in w.value for w in at.warning)  # what does not carry over
    at.number_input(key="srv_temp").set_value(0.8).run()
    assert json.loads(at.code[0].value)["draft_sample_method"] == "probabilistic"
    assert any("probabilistic" in i.value and "greedy" in i.value for i in at.info)
    at.selectbox(key="srv_method").set_value("medusa").run()
    assert any("no longer serves" in e.value and "0.33.0" in e.value for e in at.error)
    assert [c.value[:4] for c in at.code] == ["http"] and not at.success   # the link only: no other method's
                                                                            # config, no green check under Medusa
    ok(at.button(key="srv_use_nearest").click().run())
    assert at.selectbox(key="srv_method").value == "eagle3"
    at.selectbox(key="srv_method").set_value("mtp").run()   # SmolLM2 has no MTP layers: no green check
    assert json.loads(at.code[0].value)["method"] == "mtp"
    assert not at.success and any("no multi-token-prediction layers" in w.value for w in at.warning)


def test_serve_measures_greedy_and_probabilistic_drafting_after_a_guess():
    at = page("serve")
    ok(at.button(key="srv_ds_run").click().run())
    assert "srv_ds" not in at.session_state                  # no guess: nothing measured
    at.radio(key="srv_ds_guess").set_value("greedy keeps more")
    ok(at.button(key="srv_ds_run").click().run())
    ds = at.session_state["srv_ds"]
    assert ds["rows"] and set(ds["tau"]) == {"greedy", "probabilistic"} and all(t >= 1.0 for t in ds["tau"].values())
    assert all(0.0 <= r["greedy: p(argmax q)"] <= 1.0 and 0.0 <= r["probabilistic: Σ min(p, q)"] <= 1.0
               for r in ds["rows"])
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["kept, greedy drafting"] == f"{ds['mean_greedy']:.2f}"
    scored = [x.value for x in at.success] + [x.value for x in at.info]
    assert any("greedy keeps more" in v for v in scored) and any("T = 0.8, k = 4" in c.value for c in at.caption)


def test_serve_measures_both_lookup_rules_after_a_guess():
    at = page("serve")
    ok(at.button(key="srv_rules_run").click().run())
    assert "srv_rules" not in at.session_state  # no guess: nothing measured
    at.radio(key="srv_rules_guess").set_value("earliest (vLLM)")
    ok(at.button(key="srv_rules_run").click().run())
    _, res = at.session_state["srv_rules"]
    assert set(res) == {"recent", "earliest"} and all(r["passes"] > 0 for r in res.values())
    rows = at.dataframe[-1].value
    assert list(rows["rule"]) == ["recent", "earliest"]
    scored = [m.value for m in at.success] + [m.value for m in at.info]
    assert any("Your guess, “earliest (vLLM)”" in v or "You guessed “earliest (vLLM)”" in v for v in scored)


def test_serve_prefills_from_the_measured_recommendation():
    import dataclasses

    from specviz.core.records import RunSummary
    from specviz.engine import comparisons as E, measure

    def run(method, k, tpp, tps):
        s = RunSummary(method=method, text="", token_ids=[], prompt_tokens=1, target_passes=10, drafted=10,
                       accepted=5, draft_acceptance_rate=0.5, tested=8, alpha=5 / 8, tokens_per_pass=tpp,
                       per_position_acceptance=[],
                       wall_s=1.0, tokens_per_s=tps, prefill_s=0.1, draft_s=0.0, verify_s=0.9, mean_k=1.0)
        plain = dataclasses.replace(s, method="plain", tokens_per_s=10.0)
        return E.Run("csv-to-json", "copy-heavy", E.setting_of(method, k, 2 if method == "lookup" else None), 0,
                     measure.Repeat(s, [], plain, []))

    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.session_state["cmp_result"] = {"runs": [run("plain", 0, 1.0, 10.0), run("lookup", 6, 2.8, 25.0),
                                               run("lookup", 3, 2.0, 18.0)], "mode": "greedy"}
    at.switch_page("pages/serve.py").run()
    ok(at)
    assert json.loads(at.code[0].value) == {"method": "ngram", "num_speculative_tokens": 6,
                                            "prompt_lookup_min": 2, "prompt_lookup_max": 2}
    assert any("Pre-filled from your comparison" in c.value for c in at.caption)


def test_pitfalls_checkpoint_section_measures_both_targets(monkeypatch, tmp_path):
    """The heads-vs-fine-tune section on the tiny target, through the real loader: Medusa heads saved for
    the page's tiny target (its fingerprint on the card) load silently on it and, on a fine-tune of
    another checkpoint, with the loader's own warning, which the page shows."""
    from saved_heads import save_medusa_for

    from specviz.engine import artifacts, methods as M
    from specviz.engine.models import tiny_llama
    from specviz.ui import loadjobs

    save_medusa_for(loadjobs._load("tiny:0", "auto", "float32"), tmp_path, n_heads=4)  # the page's target

    def tuned_of(target):
        m = tiny_llama(vocab_size=target.vocab_size, seed=5, max_positions=2048)
        m.tokenizer = target.tokenizer
        return m

    monkeypatch.setattr(artifacts, "MODELS_DIR", tmp_path)      # where the loader looks, not what it says
    monkeypatch.setattr(M, "trained_available", lambda: {**artifacts.available(), "lora": True})
    monkeypatch.setattr(artifacts, "load_finetuned_target", tuned_of)  # the fine-tune: another tiny checkpoint
    at = page("pitfalls")
    at.number_input(key="pit_k").set_value(2)
    ok(at.button(key="pit_heads_run").click().run())             # no guess: nothing is measured
    assert "pit_swap" not in at.session_state
    at.number_input(key="pit_heads_guess").set_value(0.3)
    ok(at.button(key="pit_heads_run").click().run())
    assert not at.error, [e.value for e in at.error]              # section (a)'s refusal is an info, as intended
    warned = [w.value for w in at.warning if w.value.startswith("Loading ")]
    assert len(warned) == 1 and warned[0].startswith(
        "Loading medusa on the fine-tuned target — warned: the medusa artifact was trained for another checkpoint")
    fig = json.loads(at.get("plotly_chart")[-1].proto.spec)
    assert [tr["name"] for tr in fig["data"]] == ["base target", "fine-tuned target"]
    assert all(tr["x"] == ["medusa", "lookup"] for tr in fig["data"])
    assert any(m.value.startswith("Measured: medusa: τ") for m in at.markdown)
    assert len(at.dataframe[-1].value) == 6
    tau = {r["target"]: r["tokens_per_pass"] for r in at.session_state["pit_swap"][0] if r["method"] == "medusa"}
    said = next(x.value for x in [*at.success, *at.info] if "Your guess 0.3" in x.value)
    assert f"{tau['base'] - tau['fine-tuned']:.3g}" in said     # scored on the τ the heads lost here
    assert "medusa k = 2 vs plain, greedy" in said and "on the base target and on its fine-tune" in said


@pytest.mark.parametrize("shipped,missing,present", [
    ({"medusa": False, "eagle": False, "lora": True}, "medusa or eagle heads", "the fine-tuned target"),
    ({"medusa": True, "eagle": False, "lora": False}, "the fine-tuned target", "medusa or eagle heads")])
def test_pitfalls_names_the_missing_artefacts(monkeypatch, shipped, missing, present):
    from specviz.engine import methods as M

    monkeypatch.setattr(M, "trained_available", lambda: shipped)
    at = page("pitfalls")
    said = " ".join(i.value for i in at.info if "not in models/ yet" in i.value)
    assert missing in said and present not in said, said
    assert not [b for b in at.button if b.key == "pit_heads_run"]  # nothing to measure with
