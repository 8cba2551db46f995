"""AppTests for the capstone (choose -> predict -> run -> score; a bad k gives one st.error) and the scorecard (two
guesses counted; the JSON and CSV downloads parse)."""
import csv
import io
import json

from apptools import ok, page

POOLS = ("RAG answers", "code edits", "open chat", "translation")


def predict_all(at, value=5.0):
    for p in POOLS:
        at.number_input(key=f"cap_{p}_guess").set_value(value)


def test_capstone_choose_predict_run_score():
    at = page("capstone")
    at.selectbox(key="cap_m_translation").set_value("lookup")
    at.run()
    at.checkbox(key="cap_g_translation").check()
    ok(at.run())
    ok(at.button(key="cap_run").click().run())
    assert "cap_result" not in at.session_state                          # no predictions: nothing run
    predict_all(at)
    ok(at.button(key="cap_run").click().run())
    res = at.session_state["cap_result"]
    assert list(res["rows"]) == list(POOLS)
    tr = res["rows"]["translation"]
    assert "gated: off while α̂" in tr[0]["label"] and tr[0]["option"].gated   # the learner's pick runs first
    labels = [r["label"] for r in tr]
    assert "plain decoding" in labels and len(set(labels)) == len(labels)
    assert all(r["tokens_per_s"] > 0 for rows in res["rows"].values() for r in rows)
    scores = [m.value for m in [*at.success, *at.info] if "Your guess 5" in m.value]
    assert len(scores) == 4 and all("Scored against:" in s for s in scores)   # every prediction scored, run named
    assert any(m.label == "fleet score" for m in at.metric)
    table = [d.value for d in at.dataframe][-2]                          # the options table (last: the scorecard)
    assert set(table["pool"]) == set(POOLS) and table["best"].tolist().count("★") == 4
    card = at.session_state["scorecard"]
    assert len(card) == 4                                                   # the predictions joined the scorecard


def test_capstone_bad_k_is_one_error_and_runs_nothing():
    at = page("capstone")
    at.selectbox(key="cap_m_code edits").set_value("lookup")
    at.run()
    at.radio(key="cap_r_code edits").set_value("fixed")
    at.run()
    at.number_input(key="cap_k_code edits").set_value(0)
    ok(at.run())
    errs = [e.value for e in at.error]
    assert len(errs) == 1 and "k for code edits must be between 1 and 16, got 0" in errs[0]
    assert not [b for b in at.button if b.key == "cap_run"]                # no run button under a bad setting


def test_scorecard_counts_two_guesses_and_downloads_parse(monkeypatch):
    from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
    served = {}                                                   # what the download buttons hand the browser
    keep = MemoryMediaFileStorage.load_and_get_id

    def spy(self, data, mimetype, kind, filename=None):
        served[filename] = data
        return keep(self, data, mimetype, kind, filename)
    monkeypatch.setattr(MemoryMediaFileStorage, "load_and_get_id", spy)
    at = page("capstone")
    assert any("No guess scored yet" in i.value for i in at.info)
    at.switch_page("pages/walkthrough.py").run()
    at.number_input(key="stop:lossless_toy_guess").set_value(0.9)        # the walkthrough's first stop
    ok(at.button(key="wt_run").click().run())
    at.radio(key="wt_mode").set_value("Interview prep").run()
    at.radio(key="iv_level").set_value("senior").run()
    at.radio(key="q:tokenizer_check_guess").set_value("refused")         # an interview question, at senior
    ok(at.button(key="iv_run_tokenizer").click().run())
    at.switch_page("pages/capstone.py").run()
    ok(at)
    m = {x.label: x.value for x in at.metric}
    assert m["within tolerance"] == "1 of 2"                              # 0.9 is off (measured 0.4), "refused" right
    assert m["walkthrough"] == "0 of 1" and m["interview, senior"] == "1 of 1"
    rows = [d.value for d in at.dataframe][-1]
    assert list(rows["key"]) == ["stop:lossless_toy", "q:tokenizer_check"]
    data = json.loads(served["specviz_scorecard.json"])
    assert data["tally"] == {"total": 2, "close": 1, "levels": {"walkthrough": [0, 1], "interview, senior": [1, 1]}}
    assert [g["guessed"] for g in data["guesses"]] == ["0.9", "refused"]
    assert [g["within_tolerance"] for g in data["guesses"]] == [False, True]
    parsed = list(csv.DictReader(io.StringIO(served["specviz_scorecard.csv"].decode()
                                             if isinstance(served["specviz_scorecard.csv"], bytes)
                                             else served["specviz_scorecard.csv"])))
    assert [r["key"] for r in parsed] == ["stop:lossless_toy", "q:tokenizer_check"]
    assert [r["within_tolerance"] for r in parsed] == [str(g["within_tolerance"]) for g in data["guesses"]]
