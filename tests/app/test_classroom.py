"""A class on one server (issue 37): recorded runs downloaded and reopened, bad files refused, runs computed
once for every session, shareable links. Test-sized mode (SPECVIZ_TINY=1: the tiny random target)."""
import dataclasses
import json

import pytest
from apptools import APP, ok, page
from streamlit.testing.v1 import AppTest

from specviz.core import recording as R
from specviz.ui import lecture, loadjobs, memory, step_settings as SS, stepping as S


def errors(at):
    ok(at)
    return [e.value for e in at.error]


def target_model():
    """The tiny target the app's sessions share (loaded by the first page that needs it)."""
    key = ("tiny:0", "auto", "float32")
    loadjobs.job(key)["done"].wait()
    return loadjobs._JOBS[key]["result"].model


class Forwards:
    """Counts the target's forward passes: a hook on its decoder body (the decode loop calls the body and the
    LM head apart), nothing mocked."""

    def __init__(self, model):
        self.n = 0
        self.handle = model.get_decoder().register_forward_hook(lambda *a: setattr(self, "n", self.n + 1))

    def close(self):
        self.handle.remove()


def played(at: AppTest, **numbers) -> AppTest:
    for key, value in numbers.items():
        at.number_input(key=key).set_value(value).run()
    at.button(key="stp_play").click().run()
    assert errors(at) == []
    return at


def upload(at: AppTest, key: str, name: str, data: bytes) -> AppTest:
    at.file_uploader(key=key).set_value((name, data, "application/json")).run()
    return at


def test_step_recording_downloaded_reopened_and_replayed_with_equal_records():
    a = played(page("step_through"), stp_new=12, stp_temp=0.8, stp_seed=3)
    run = a.session_state["stp"]
    assert [b.label for b in a.get("download_button")] == ["Download this run"]
    data = R.dumps(S.recording_of(run)).encode()                  # what the button hands out
    live = memory.lean(run["dec"].steps)

    b = page("step_through")
    fw = Forwards(target_model())
    try:
        upload(b, "stp_upload", "run.json", data)
        assert errors(b) == [] and "Replaying a recording made at" in " ".join(i.value for i in b.info)
        b.button(key="stp_one").click().run()
        assert len(b.session_state["stp"]["dec"].steps) == 1
        b.button(key="stp_play").click().run()
        assert errors(b) == []
        dec = b.session_state["stp"]["dec"]
        assert dec.finished and dec.steps == live                  # every record equal, sampled run included
        assert dec.summary().text == run["dec"].summary().text
        assert fw.n == 0                                           # replayed with no target pass
    finally:
        fw.close()


BAD = {
    "truncated": lambda good: good[: len(good) // 2],
    "oversized": lambda good: good + b" " * (R.MAX_BYTES + 1 - len(good)),
    "wrong version": lambda good: good.replace(b'"version":1', b'"version":7', 1),
    "tampered": lambda good: tamper_kept(good),
    "not json": lambda good: b"\x80\x04\x95 pickle bytes",
}


def tamper_kept(good: bytes) -> bytes:
    """A step whose kept tokens do not match its decisions: the first drafting step claims one more kept draft."""
    doc = json.loads(good)
    st = next(s for s in doc["runs"][0]["steps"] if s["drafted"] and not all(s["decisions"]))
    st["emitted"] = st["drafted"][: len(st["emitted"])]
    return json.dumps(doc).encode()


@pytest.fixture(scope="module")
def good_recording():
    at = page("step_through")
    at.selectbox(key="stp_method").set_value("lookup").run()         # the page opens on copy-recycle (no n)
    at = played(at, stp_new=16, stp_n=1)
    return R.dumps(S.recording_of(at.session_state["stp"])).encode()


@pytest.mark.parametrize("kind", list(BAD))
def test_bad_file_one_error_nothing_loaded_earlier_run_kept(good_recording, kind):
    at = played(page("step_through"), stp_new=6)
    before = at.session_state["stp"]
    upload(at, "stp_upload", "bad.json", BAD[kind](good_recording))
    errs = errors(at)
    assert len(errs) == 1 and errs[0].startswith("Cannot open this recording"), errs
    assert at.session_state["stp"]["dec"] is before["dec"] and not S.opened_file(at.session_state["stp"])


def test_a_gated_recording_says_its_gate_and_which_steps_it_held(good_recording):
    """A run recorded by `generate --gate` (its settings keep the gate's rule; a step the gate held back carries why:
    tests/tiny/test_cli.py makes one): Step through says the gate beside the recording and at the held step, never
    that lookup found no match."""
    doc = json.loads(good_recording)
    doc["settings"]["gate_rule"] = "off while α̂ of its last 8 drafts < 0.3 (a probe every 4 steps)"
    steps = doc["runs"][0]["steps"]
    i = next(j for j, s in enumerate(steps) if not s["drafted"])
    steps[i]["held"] = "the gate was shut: α̂ of its last 8 drafts was below 0.3; the next probe drafts within 4 steps"
    at = upload(page("step_through"), "stp_upload", "gated.json", json.dumps(doc).encode())
    assert errors(at) == []
    assert "It drafted behind a gate (`--gate`): off while α̂ of its last 8 drafts" in " ".join(x.value for x in at.info)
    at.button(key="stp_play").click().run()
    at.slider(key="stp_show").set_value(i + 1).run()
    said = " ".join(m.value for m in at.markdown)
    assert errors(at) == [] and "No draft (the gate was shut: α̂ of its last 8 drafts was below 0.3" in said
    assert "lookup found no earlier occurrence" not in said


def test_comparison_downloaded_reopened_shows_the_same_table():
    a = page("compare")
    a.multiselect(key="cmp_methods").set_value(["lookup"])
    a.multiselect(key="cmp_ks").set_value([1])
    ok(a.button(key="cmp_run").click().run())
    assert [b.label for b in a.get("download_button")] == ["Download this comparison"]
    from specviz.ui import recordings
    with_state = a.session_state["cmp_result"]
    data = R.dumps(recordings.compare_recording(target_shared(), {}, with_state["runs"], with_state["mode"],
                                                with_state["shared"])).encode()
    table = a.dataframe[0].value

    b = page("compare")
    upload(b, "cmp_upload", "cmp.json", data)
    assert errors(b) == []
    assert "From a recording made at" in " ".join(i.value for i in b.info)
    assert b.dataframe[0].value.equals(table)
    runs = b.session_state["cmp_result"]["runs"]
    assert [memory.lean(r.steps) for r in runs] == [memory.lean(r.steps) for r in with_state["runs"]]
    upload(b, "cmp_upload", "step.json", data.replace(b'"kind":"compare"', b'"kind":"step"', 1))
    errs = errors(b)
    assert len(errs) == 1 and "Cannot open this recording" in errs[0]
    assert b.dataframe[0].value.equals(table)                     # the opened comparison is still shown


@pytest.fixture
def handed_out(monkeypatch):
    """What every download button hands out, by key: the real bytes (st.download_button wrapped, not replaced)."""
    import streamlit
    got, real = {}, streamlit.download_button

    def capture(label, data, *a, **kw):
        got[kw.get("key")] = data.encode() if isinstance(data, str) else data
        return real(label, data, *a, **kw)
    monkeypatch.setattr(streamlit, "download_button", capture)
    return got


def test_sweep_downloaded_parses_back_equal_and_reopens_the_same_table(handed_out):
    from specviz.ui import recordings
    a = page("experiments")
    a.slider(key="exp_k").set_value((1, 2))
    a.number_input(key="exp_guess").set_value(1)
    ok(a.button(key="exp_run").click().run())
    assert [b.label for b in a.get("download_button")] == ["Download this sweep"]
    res = a.session_state["exp_result"]
    rec = R.loads(handed_out["exp_download"])                     # the file parses back with the loader ...
    assert rec.kind == "sweep" and rec.settings["ks"] == [1, 2]
    points, plains = recordings.sweep_points(rec)                  # ... and equals the run
    assert [(p.k, p.n, p.speedup) for p in points] == [(p.k, p.n, p.speedup) for p in res["points"]]
    assert [p.steps for p in points] == [p.steps for p in res["points"]] and all(p.steps for p in points)
    assert [p.summary.as_dict() for p in points] == [p.summary.as_dict() for p in res["points"]]
    assert plains[0].as_dict() == res["points"][0].plain.as_dict()
    table = a.dataframe[0].value

    b = page("experiments")
    upload(b, "exp_upload", "sweep.json", handed_out["exp_download"])
    assert errors(b) == [] and "From a recording made at" in " ".join(i.value for i in b.info)
    assert b.dataframe[0].value.equals(table)
    upload(b, "exp_upload", "cmp.json", handed_out["exp_download"].replace(b'"kind":"sweep"', b'"kind":"compare"', 1))
    errs = errors(b)
    assert len(errs) == 1 and "Cannot open this recording" in errs[0]
    assert b.dataframe[0].value.equals(table)                      # the opened sweep is still shown


def test_histogram_run_downloaded_reopens_the_same_histogram(handed_out):
    from specviz.teach import acceptance as A
    a = page("derivations")
    a.selectbox(key="sv_method").set_value("draft")             # the tiny drafter: it always drafts
    a.number_input(key="sv_zero_guess").set_value(0.5)
    ok(a.button(key="sv_run").click().run())
    view = a.session_state["sv_view"][2]
    rec = R.loads(handed_out["sv_download"])                     # the file parses back with the loader ...
    assert rec.kind == "step" and rec.settings["method"] == "draft" and rec.settings["k"] == 4
    assert A.server_view(rec.runs[0].steps) == view and view.num_drafts > 0   # ... and is the run drawn

    def histogram(at):
        return next(json.loads(el.proto.spec)["data"] for el in at.get("plotly_chart") if "accepted length" in
                    el.proto.spec)
    b = page("derivations")
    upload(b, "sv_upload", "run.json", handed_out["sv_download"])
    assert errors(b) == [] and b.session_state["sv_view"][2] == view
    assert histogram(b) == histogram(a)
    assert "from a recording made at" in " ".join(c.value for c in b.caption)

    c = played(page("step_through"), stp_new=6)                  # a measured run has no top tokens to step through:
    before = c.session_state["stp"]                               # one error there, the earlier run kept
    upload(c, "stp_upload", "run.json", handed_out["sv_download"])
    errs = errors(c)
    assert len(errs) == 1 and "carries no top tokens" in errs[0], errs
    assert c.session_state["stp"]["dec"] is before["dec"] and not S.opened_file(c.session_state["stp"])


def target_shared():
    key = ("tiny:0", "auto", "float32")
    return loadjobs._JOBS[key]["result"]


@pytest.fixture
def run_cache(monkeypatch):
    from specviz.engine import runcache
    cache = runcache.RunCache()
    monkeypatch.setattr(runcache, "RUNS", cache)
    return cache


def test_second_session_gets_the_run_at_once_with_no_target_pass(run_cache, capsys):
    from specviz.engine.decode import TARGET_PASSES
    fw = Forwards(target_model())
    try:
        counted = TARGET_PASSES.n
        a = played(page("step_through"), stp_new=12, stp_temp=0.8, stp_seed=5)
        made = fw.n
        assert made > 0 and len(run_cache) == 1
        assert TARGET_PASSES.n - counted == made                   # the engine's own count: every target forward
        assert f"target_passes={TARGET_PASSES.n} run_cache=on hits=0 misses=1 stored=1" in capsys.readouterr().err
        first = a.session_state["stp"]["dec"]
        b = played(page("step_through"), stp_new=12, stp_temp=0.8, stp_seed=5)
        assert fw.n == made                                        # the second session: no target pass at all
        assert "from a recording; target_passes" in capsys.readouterr().err and run_cache.hits == 1
        second = b.session_state["stp"]["dec"]
        assert second.steps == memory.lean(first.steps) and second.summary().text == first.summary().text
        note = " ".join(i.value for i in b.info)
        assert "on this server (replayed)" in note and "recording's" in note
        assert "(the recording's times)" in " ".join(c.value for c in b.caption)
        # negative control: another seed is another run, made live
        c = played(page("step_through"), stp_new=12, stp_temp=0.8, stp_seed=6)
        assert fw.n > made and not S.served(c.session_state["stp"])
        # Measure again: the served run, live now: the same records (seeded), new target passes
        before = fw.n
        b.button(key="stp_again").click().run()
        assert errors(b) == [] and fw.n > before
        again = b.session_state["stp"]["dec"]
        assert not S.served(b.session_state["stp"]) and memory.lean(again.steps) == [
            dataclasses.replace(r, draft_s=x.draft_s, verify_s=x.verify_s) for r, x in zip(second.steps, again.steps)]
    finally:
        fw.close()


def test_cache_off_every_session_makes_its_own_run(monkeypatch):
    from specviz.engine import runcache
    monkeypatch.setenv(runcache.ENV, "off")
    monkeypatch.setattr(runcache, "RUNS", runcache.RunCache.from_env())
    fw = Forwards(target_model())
    try:
        played(page("step_through"), stp_new=8, stp_seed=2)
        made = fw.n
        b = played(page("step_through"), stp_new=8, stp_seed=2)
        assert fw.n == 2 * made and not S.served(b.session_state["stp"]) and len(runcache.RUNS) == 0
    finally:
        fw.close()


# -- shareable links ------------------------------------------------------------------------------
def link_of(at: AppTest) -> dict:
    """The "Link to this experiment" URL's parameters, as a fresh AppTest takes them."""
    from urllib.parse import parse_qs, urlsplit
    urls = [c.value for c in at.get("code") if c.value.startswith("http")]
    assert len(urls) == 1, urls
    q = parse_qs(urlsplit(urls[0]).query)
    return {k: v[0] if len(v) == 1 else v for k, v in q.items()}


def opened(page_name: str, query: dict) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params = dict(query)
    at.switch_page(f"pages/{page_name}.py").run()
    return ok(at)


def test_step_link_round_trip_same_settings_same_step():
    a = page("step_through")
    a.selectbox(key="stp_method").set_value("lookup").run()         # the page opens on copy-recycle (no k rule)
    a.number_input(key="stp_k").set_value(3).run()
    a.radio(key="stp_krule").set_value("fixed").run()
    a.number_input(key="stp_n").set_value(1).run()
    played(a, stp_new=10, stp_temp=0.7, stp_seed=9)
    a.slider(key="stp_show").set_value(2).run()
    q = link_of(a)
    assert q["step"] == "2" and q["stp_seed"] == "9" and q["stp_krule"] == "fixed"
    b = opened("step_through", q)
    assert [w.value for w in b.warning] == [] and errors(b) == []
    for key in ("stp_k", "stp_new", "stp_temp", "stp_seed", "stp_n"):
        assert b.number_input(key=key).value == a.number_input(key=key).value, key
    assert b.radio(key="stp_krule").value == "fixed" and b.slider(key="stp_show").value == 2
    shown = b.session_state["stp"]["dec"].steps
    assert len(shown) == 2
    assert [(r.drafted, r.decisions, r.emitted) for r in shown] == [
        (r.drafted, r.decisions, r.emitted) for r in a.session_state["stp"]["dec"].steps[:2]]


@pytest.mark.parametrize("name,settle,keys", [
    ("compare", lambda at: (at.multiselect(key="cmp_ks").set_value([1, 3]), at.radio(key="cmp_mode").set_value(
        "greedy"), at.number_input(key="cmp_max_new").set_value(12)),
     [("multiselect", "cmp_ks"), ("radio", "cmp_mode"), ("number_input", "cmp_max_new")]),
    ("experiments", lambda at: (at.slider(key="exp_k").set_value((2, 4)), at.selectbox(key="exp_workload").set_value(
        "story"), at.number_input(key="exp_max_new").set_value(10)),   # a workload is shown by label, linked by name
     [("slider", "exp_k"), ("selectbox", "exp_workload"), ("number_input", "exp_max_new")]),
    ("trees", lambda at: (at.number_input(key="tr_k").set_value(3), at.number_input(key="tr_temp").set_value(0.5)),
     [("number_input", "tr_k"), ("number_input", "tr_temp")]),
    ("lossless", lambda at: (at.text_input(key="lab_p").input("1, 2, 3"), at.radio(key="lab_rule").set_value(
        at.radio(key="lab_rule").options[-1]), at.number_input(key="lab_real_temp").set_value(0.6),
        at.number_input(key="ly_eps").set_value(0.2), at.text_input(key="ssb_q").input("0.2, 0.2, 0.6")),
     [("text_input", "lab_p"), ("text_input", "lab_q"), ("radio", "lab_rule"), ("number_input", "lab_real_temp"),
      ("number_input", "ly_eps"), ("text_input", "ssb_q"), ("text_input", "tsb_p")]),
    ("derivations", lambda at: (at.slider(key="der_k").set_value(7), at.selectbox(key="sv_work").set_value(
        at.selectbox(key="sv_work").options[-1]), at.text_input(key="wp_zq").input("0, 1, 2, 3, 4"),
        at.number_input(key="wp_t").set_value(1.3)),
     [("slider", "der_k"), ("slider", "der_alpha"), ("selectbox", "sv_work"), ("text_input", "wp_zq"),
      ("number_input", "wp_t")]),
    ("pitfalls", lambda at: (at.text_input(key="pit_text").input("A different sentence, shared by link."),),
     [("text_input", "pit_text")]),
    ("serving_reality", lambda at: (at.number_input(key="sr_mem").set_value(80.0), at.number_input(
        key="sr_ctx").set_value(1024), at.slider(key="rf_alpha").set_value(0.6)),
     [("number_input", "sr_mem"), ("number_input", "sr_ctx"), ("slider", "rf_alpha"), ("number_input", "rf_c")]),
    ("serve", lambda at: (at.selectbox(key="srv_method").set_value("suffix"), at.number_input(key="srv_k").set_value(
        7), at.number_input(key="srv_temp").set_value(0.7), at.radio(key="srv_verify").set_value("block")),
     [("selectbox", "srv_method"), ("number_input", "srv_k"), ("number_input", "srv_temp"), ("radio", "srv_verify"),
      ("text_input", "srv_target")]),
])
def test_link_round_trip(name, settle, keys):
    a = page(name)
    settle(a)
    ok(a.run())
    b = opened(name, link_of(a))
    assert [w.value for w in b.warning if "link" in w.value] == []
    for kind, key in keys:
        assert getattr(b, kind)(key=key).value == getattr(a, kind)(key=key).value, key
    assert link_of(b) == link_of(a)


def test_bad_parameters_one_warning_naming_them_defaults_used():
    b = opened("step_through", {"stp_k": "99", "stp_method": "telepathy", "colour": "red", "stp_seed": "7"})
    warns = [w.value for w in b.warning]
    assert len(warns) == 1 and "stp_k=99" in warns[0] and "stp_method=telepathy" in warns[0] and "colour" in warns[0]
    assert errors(b) == []
    assert b.number_input(key="stp_k").value == SS.DEFAULTS["stp_k"]
    from specviz.bench.results import default_method
    from specviz.engine.device import machine
    assert b.selectbox(key="stp_method").value == default_method(machine(None))[0]   # the default (Home says why)
    assert b.number_input(key="stp_seed").value == 7                 # the good one is kept
    c = opened("compare", {"cmp_max_new": "100000", "cmp_mode": "greedy"})
    warns = [w.value for w in c.warning]
    assert len(warns) == 1 and "cmp_max_new=100000" in warns[0]
    assert c.number_input(key="cmp_max_new").value == 8 and c.radio(key="cmp_mode").value == "greedy"


def test_walkthrough_link_opens_the_same_stop_and_mode():
    a = page("walkthrough")
    a.button(key="wt_next").click().run()
    a.button(key="wt_next").click().run()
    title = a.subheader[0].value
    q = link_of(a)
    assert q["stop"] == "3" and title.startswith("3. ")
    b = opened("walkthrough", q)
    assert [w.value for w in b.warning] == [] and b.session_state["wt_stop"] == 2 and b.subheader[0].value == title
    a.radio(key="wt_mode").set_value("Interview prep").run()
    a.radio(key="iv_level").set_value(a.radio(key="iv_level").options[-1]).run()
    c = opened("walkthrough", link_of(a))
    assert c.radio(key="wt_mode").value == "Interview prep" and c.radio(key="iv_level").value == a.radio(
        key="iv_level").value


@pytest.mark.parametrize("name,query,bad,key,default", [
    ("lossless", {"lab_trials": "7", "lab_rule": "exact"}, "lab_trials=7", ("select_slider", "lab_trials"), 1000),
    ("derivations", {"der_k": "99", "der_alpha": "0.5"}, "der_k=99", ("slider", "der_k"), 4),
    ("pitfalls", {"pit_colour": "red"}, "pit_colour", ("text_input", "pit_text"), None),
    ("serving_reality", {"sr_ctx": "-5", "sr_mem": "80"}, "sr_ctx=-5", ("number_input", "sr_ctx"), 4096),
    ("serve", {"srv_k": "0", "srv_temp": "0.5"}, "srv_k=0", ("number_input", "srv_k"), 4),
    ("walkthrough", {"stop": "99"}, "stop=99", None, None),
])
def test_bad_link_parameter_one_warning_default_used(name, query, bad, key, default):
    b = opened(name, query)
    warns = [w.value for w in b.warning if "This link's" in w.value]
    assert len(warns) == 1 and bad in warns[0], [w.value for w in b.warning]
    assert errors(b) == []
    if key is not None and default is not None:
        assert getattr(b, key[0])(key=key[1]).value == default
    if name == "walkthrough":
        assert b.session_state["wt_stop"] == 0
    good = {k: v for k, v in query.items() if not bad.startswith(k)}    # the good ones are kept
    for k, v in good.items():
        assert str(b.session_state[k]) == v or f"{b.session_state[k]:g}" == v, k


# -- lecture mode ---------------------------------------------------------------------------------
def test_lecture_mode_replays_a_folder_with_no_model(tmp_path, monkeypatch, good_recording):
    (tmp_path / "run.json").write_bytes(good_recording)
    (tmp_path / "broken.json").write_bytes(good_recording[:100])
    monkeypatch.setenv("SPECVIZ_LECTURE", str(tmp_path))
    def no_model(key):
        raise AssertionError(f"lecture mode asked for a model: {key}")
    monkeypatch.setattr(loadjobs, "job", no_model)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert errors(at) == [] and [i.value for i in at.info] == [f"**Home** {lecture.NEEDS_MODEL}"]  # one line
    at.switch_page("pages/step_through.py").run()
    assert errors(at) == []
    at.button(key="stp_play").click().run()                        # no recording open: says so, nothing loads
    assert errors(at) == [] and any("needs a live model" in i.value for i in at.info)
    at.selectbox(key="stp_upload_folder").set_value("broken.json").run()
    errs = errors(at)
    assert len(errs) == 1 and "Cannot open this recording" in errs[0]
    at.selectbox(key="stp_upload_folder").set_value("run.json").run()
    at.button(key="stp_play").click().run()
    assert errors(at) == []
    dec = at.session_state["stp"]["dec"]
    assert dec.finished and dec.steps == R.loads(good_recording).runs[0].steps
    at.switch_page("pages/compare.py").run()
    assert errors(at) == [] and any("needs a live model" in i.value for i in at.info)
