"""Copying methods in the app (issue 23): lookup's match-length rule and suffix's knobs on Step through, the
text each drafted branch was copied from, bad knobs as st.error, and the vLLM export of the suffix method."""
import json

from apptools import ok, page

from specviz.engine.workloads import SESSIONS, get_session
from specviz.ui.step_settings import PRESETS


def errors(at) -> list[str]:
    return [e.value for e in at.error]


def play_to_a_copy(at):
    """Play, then open the last step that drafted (Play does): the step detail names where its draft was seen."""
    ok(at.button(key="stp_play").click().run())
    assert errors(at) == []
    dec = at.session_state["stp"]["dec"]
    drafted = [r for r in dec.steps if r.n_drafted]
    assert drafted, "nothing was drafted on a copy-heavy prompt"
    return dec, drafted[-1]


def test_lookup_match_rule_and_its_factor_reach_the_proposer_and_each_draft_names_its_source():
    at = page("step_through")
    at.selectbox(key="stp_method").set_value("lookup").run()         # the page opens on copy-recycle
    at.number_input(key="stp_new").set_value(24).run()
    at.radio(key="stp_krule").set_value("match").run()
    at.number_input(key="stp_factor").set_value(2.0).run()
    at.number_input(key="stp_n").set_value(1).run()
    dec, rec = play_to_a_copy(at)
    assert dec.proposer.k_rule == "match" and dec.proposer.factor == 2.0 and dec.proposer.n_min == 1
    assert rec.seen_in and set(rec.seen_in) <= {"this prompt", "this output"}
    md = " ".join(m.value for m in at.markdown)
    assert "Where it came from: " in md and f"seen in **{rec.seen_in[0]}**" in md


def test_suffix_knobs_reach_the_proposer_and_its_tree_is_drawn_with_where_each_node_was_seen():
    at = page("step_through")
    at.selectbox(key="stp_method").set_value("suffix").run()
    at.number_input(key="stp_new").set_value(24).run()
    for key, value in (("stp_depth", 12), ("stp_sfactor", 3.0), ("stp_minprob", 0.05)):
        at.number_input(key=key).set_value(value).run()
    dec, rec = play_to_a_copy(at)
    p = dec.proposer
    assert (p.max_depth, p.factor, p.min_prob) == (12, 3.0, 0.05)
    assert rec.seen_in and len(rec.seen_in) == rec.n_drafted
    assert "Where it came from: " in " ".join(m.value for m in at.markdown)
    if rec.is_tree:  # the tree drawing tags each node with where it was seen, and says so on hover
        spec = next(el.proto.spec for el in at.get("plotly_chart") if "depth (draft position)" in el.proto.spec)
        hover = " ".join(h for tr in json.loads(spec)["data"] for h in tr.get("hovertext") or [])
        assert f"seen in {rec.seen_in[0]}" in hover


def test_bad_copying_knobs_are_errors_at_once_and_build_no_run():
    for method, key, value, said in (("suffix", "stp_depth", 1, "the depth cap must be between 2 and"),
                                     ("suffix", "stp_minprob", 1.5, "the minimum probability must be between 0 and 1"),
                                     ("suffix", "stp_sfactor", 0.0, "the spec factor must be above 0"),
                                     ("lookup", "stp_factor", -1.0, "the spec factor must be above 0")):
        at = page("step_through")
        at.selectbox(key="stp_method").set_value(method).run()
        if method == "lookup":
            at.radio(key="stp_krule").set_value("match").run()
        at.number_input(key=key).set_value(value).run()
        assert any(said in e for e in errors(at)), (key, errors(at))
        ok(at.button(key="stp_one").click().run())
        assert "stp" not in at.session_state


def test_serve_exports_suffix_with_vllm_keys_as_its_source_spells_them():
    at = page("serve")
    at.selectbox(key="srv_method").set_value("suffix").run()
    at.number_input(key="srv_sfx_depth").set_value(32).run()
    at.number_input(key="srv_sfx_minprob").set_value(0.2).run()
    assert errors(at) == []
    cfg = at.session_state["srv_last"]
    assert cfg["method"] == "suffix"
    assert {k: cfg[k] for k in cfg if k.startswith("suffix_")} == {
        "suffix_decoding_max_tree_depth": 32, "suffix_decoding_max_cached_requests": 10000,
        "suffix_decoding_max_spec_factor": 1.0, "suffix_decoding_min_token_prob": 0.2}
    assert any("arctic-inference" in m.value for m in [*at.markdown, *at.warning, *at.caption])
    at.number_input(key="srv_sfx_factor").set_value(0.0).run()
    assert any("suffix_decoding_max_spec_factor" in e for e in errors(at))


def test_a_session_preset_steps_through_its_last_request_with_suffix_cache_on_and_off():
    ses = SESSIONS[0]
    preset = next(p for p in PRESETS if p.startswith(ses.name + " · "))
    at = page("step_through")
    at.selectbox(key="stp_method").set_value("suffix").run()
    at.selectbox(key="stp_preset").set_value(preset).run()
    assert at.text_area(key="stp_prompt").value == ses.requests[-1].prompt
    at.number_input(key="stp_new").set_value(6).run()
    ok(at.button(key="stp_one").click().run())
    assert errors(at) == []
    cache = at.session_state["stp"]["dec"].proposer.cache
    assert len(cache) == len(ses.requests) - 1                # the earlier requests ran, in order, remembered
    assert [q.name for q in cache.seqs] == [f"request {i + 1}" for i in range(len(ses.requests) - 1)]
    at.checkbox(key="stp_cache").set_value(False).run()
    ok(at.button(key="stp_one").click().run())
    assert len(at.session_state["stp"]["dec"].proposer.cache) == 0


def test_compare_runs_a_session_with_the_cache_on_and_off_and_shows_the_measured_numbers():
    at = page("compare")
    at.number_input(key="cmp_sess_new").set_value(4).run()
    ok(at.button(key="cmp_sess_run").click().run())
    assert errors(at) == []
    name, rows, _ = at.session_state["cmp_sess"]
    assert {(r["label"], r["cache"]) for r in rows} == {("suffix, cache on", True), ("suffix, cache off", False),
                                                        ("lookup (match length)", False)}
    table = next(d.value for d in at.dataframe if "cross-request cache" in d.value.columns)
    assert sorted(table["cross-request cache"]) == ["off", "off", "on"]
    assert all(len(r["request_speedups"]) == len(get_session(name).requests) for r in rows)
    md = " ".join(m.value for m in at.markdown)
    assert "When does a suffix cache pay?" in md and "With the cache on the session ran at" in md
    assert any("2.13× with the cache and 2.10× without" in c.value for c in at.caption)


def test_the_k_n_page_sweeps_a_suffix_knob_and_refuses_bad_values():
    at = page("experiments")
    at.selectbox(key="exp_method").set_value("suffix").run()
    at.selectbox(key="exp_knob").set_value("min_prob").run()
    at.text_input(key="exp_vals_min_prob").set_value("0.1, 2").run()
    assert any("the minimum probability must be between 0 and 1; got 2" in e for e in errors(at))
    at.text_input(key="exp_vals_min_prob").set_value("0.05, 0.5").run()
    assert errors(at) == []
    at.slider(key="exp_k").set_value((1, 2)).run()
    at.number_input(key="exp_guess").set_value(0)
    ok(at.button(key="exp_run").click().run())
    assert errors(at) == []
    points = at.session_state["exp_result"]["points"]
    assert {(p.k, p.n, p.axis) for p in points} == {(k, v, "min_prob") for k in (1, 2) for v in (0.05, 0.5)}
    lines = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert {tr["name"] for tr in lines["data"]} == {"min_prob=0.05", "min_prob=0.5"}
    assert "min_prob" in at.dataframe[0].value.columns
