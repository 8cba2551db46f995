"""Recorded runs in the app: download a run as a recording (core/recording.py), open one to replay it with no
model loaded. A bad file is one st.error; the session's earlier run stays."""
from __future__ import annotations

import dataclasses
import re
import time

import streamlit as st

from specviz.core import recording as R
from specviz.engine import comparisons as E, recorder, sweeps as SW
from specviz.engine.experiment import Setting
from specviz.engine.measure import Measured, Repeat
from specviz.engine.methods import encode_prompt
from specviz.ui import lecture, memory


def file_name(kind: str, rec: R.Recording) -> str:
    method = re.sub(r"[^a-z0-9-]", "", str(rec.settings.get("method", "")).lower())
    return f"specviz-{kind}{'-' + method if method else ''}-{time_tag(rec)}.json"


def time_tag(rec: R.Recording) -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.localtime(rec.recorded_at))


def origin(rec: R.Recording) -> str:
    """Where and how a recording was made, in one line (the numbers it shows are its own)."""
    env = rec.environment
    return (f"{rec.model.get('name', '?')} (fingerprint {str(rec.model.get('fingerprint', '?'))[:12]}…), "
            f"{env.get('dtype', '?')} on {env.get('device', '?')}, {env.get('threads', '?')} torch threads, "
            f"torch {env.get('torch', '?')}, specviz code {env.get('code', '?')}")


def download(label: str, rec: R.Recording, key: str) -> None:
    st.download_button(label, R.dumps(rec), file_name=file_name(rec.kind, rec), mime="application/json", key=key,
                       icon=":material/download:", help="One JSON file: the settings, the model's fingerprint, the "
                       "environment, every step record and the timings. Open it here (or with `specviz replay FILE`) "
                       "to replay it with no model loaded.")


def opened(key: str, kind: str, convert=None):
    """A file uploader for recordings of this kind (in lecture mode, first the folder's recordings): the newly
    opened recording, once (None when nothing new was opened), or convert(recording) when given (it may raise
    RecordingError too). A bad file: one st.error naming what is wrong, and None."""
    if lecture.on():
        path = lecture.pick(PAGE[kind], f"{key}_folder")
        if path is not None and st.session_state.get(f"{key}_folder_seen") != str(path):
            st.session_state[f"{key}_folder_seen"] = str(path)
            try:
                data = path.read_bytes() if path.stat().st_size <= R.MAX_BYTES else b" " * (R.MAX_BYTES + 1)
            except OSError as e:
                st.error(f"Cannot open this recording: {e.strerror}: {path.name}")
                return None
            return _accept(data, kind, convert)
    up = st.file_uploader("Open a recording (JSON)", type=["json"], key=key,
                          help=f"A file downloaded from this page or written by `specviz generate --record`. At most "
                               f"{R.MAX_BYTES // 2**20} MiB; checked before anything is shown.")
    if up is None:
        st.session_state.pop(f"{key}_seen", None)
        return None
    if st.session_state.get(f"{key}_seen") == up.file_id:
        return None
    st.session_state[f"{key}_seen"] = up.file_id
    return _accept(up.getvalue(), kind, convert)


def _accept(data: bytes, kind: str, convert):
    try:
        rec = R.loads(data)
        if rec.kind != kind:
            raise R.RecordingError(f"a recording of {WHAT[rec.kind]}; this page opens recordings of {WHAT[kind]}")
        if convert is not None:
            rec = convert(rec)
    except R.RecordingError as e:
        st.error(f"Cannot open this recording: {e}. Nothing was loaded; the page keeps what it showed.")
        return None
    return rec


def steppable(rec: R.Recording) -> R.Recording:
    """Step through draws p against q at every drafted position from the steps' top tokens: a run recorded without
    them (a measured run: Derivations' histogram, or a stranger's file) is refused with RecordingError."""
    for s in rec.runs[0].steps:
        if len(s.p_top) < len(s.drafted) or len(s.q_top) < len(s.drafted):
            raise R.RecordingError(f"step {s.index + 1} carries no top tokens of p and q for its drafts (a measured "
                                   "run is recorded without them), and Step through draws every step from them; "
                                   "open it on the page it was downloaded from")
    return rec


PAGE = {"step": "Step through", "compare": "Compare proposers", "sweep": "k / n experiments"}
WHAT = {"step": "one run (Step through)", "compare": "a comparison (Compare proposers)",
        "sweep": "a sweep (k / n experiments)"}


# -- Compare proposers: engine.experiments.Run <-> RecordedRun ---------------------------------------
def compare_recording(target, settings: dict, runs: list, mode: str, shared: bool) -> R.Recording:
    rr = [R.RecordedRun({"workload": r.workload, "kind": r.kind, "method": r.method, "k": r.k, "n": r.n,
                         "k_rule": r.setting.k_rule, "repeat": r.repeat, "plain_tokens_per_s": r.plain.tokens_per_s},
                        r.summary, list(r.steps), r.plain) for r in runs]
    return recorder.recording("compare", target, settings, rr, extra={"mode": mode, "shared": shared})


def compare_runs(rec: R.Recording) -> list:
    """The comparison's runs as engine.experiments.Run, for the page's tables and charts. RecordingError when a
    run's label lacks what the page needs."""
    def run(lab: dict, r) -> E.Run:
        method, k, n = str(lab["method"]), int(lab["k"]), None if lab.get("n") is None else int(lab["n"])
        if r.plain is None:
            raise KeyError("its plain run")
        return E.Run(str(lab["workload"]), str(lab["kind"]), E.setting_of(method, k, n, lab.get("k_rule")),
                     int(lab.get("repeat", 0)), Repeat(r.summary, r.steps, r.plain, []))
    return each_run(rec, run, (KeyError, TypeError, ValueError))


def each_run(rec: R.Recording, read, garbled: tuple) -> list:
    """read(label, run) for every run of a recording, in order; RecordingError naming the run whose label lacks or
    garbles what read needs (`garbled`: the errors that say so)."""
    out = []
    for i, r in enumerate(rec.runs):
        try:
            out.append(read(r.label, r))
        except garbled as e:
            raise R.RecordingError(f"run {i + 1}'s label lacks or garbles {e}") from None
    return out


# -- k / n experiments: engine.sweeps.SweepPoint <-> RecordedRun ----------------------------------------
def lean_points(points: list) -> list:
    """The sweep's points as a session keeps them: step records without the full-vocabulary p/q vectors."""
    def lean(m: Measured) -> Measured:
        return dataclasses.replace(m, repeats=[dataclasses.replace(r, steps=memory.lean(r.steps),
                                                                   plain_steps=memory.lean(r.plain_steps))
                                               for r in m.repeats])
    return [dataclasses.replace(p, measured=lean(p.measured)) for p in points]


def sweep_recording(target, settings: dict, points: list, extra: dict) -> R.Recording:
    """A sweep as one recording: one run per point (its label: k, n or the knob's value, the axis, the speedup),
    each with its step records and the plain run of the same repeat."""
    rr = [R.RecordedRun({"k": p.k, "n": p.n, "axis": p.axis, "speedup": p.speedup, "setting": setting_label(p.setting)},
                        p.summary, list(p.steps), p.plain) for p in points]
    return recorder.recording("sweep", target, settings, rr, extra=extra)


def setting_label(s) -> dict | None:
    """A point's Setting in a recording's label (JSON: no gate, which a sweep never sets)."""
    if s is None:
        return None
    return {"method": s.method, "k": s.k, "n": s.n, "k_rule": s.k_rule, "factor": s.factor, "adaptive": s.adaptive,
            "knobs": [[name, v] for name, v in s.knobs], "verify": s.verify}


def setting_back(d) -> Setting | None:
    """The Setting a recorded label holds (None for a recording from before labels kept it)."""
    if d is None:
        return None
    return Setting(str(d["method"]), int(d["k"]), None if d.get("n") is None else d["n"], d.get("k_rule"),
                   None if d.get("factor") is None else float(d["factor"]), bool(d.get("adaptive")),
                   knobs=tuple((str(a), float(b)) for a, b in d.get("knobs") or ()),
                   verify=str(d.get("verify", "token")))


def sweep_points(rec: R.Recording) -> tuple[list, list]:
    """(points, plain runs) of a recorded sweep, as engine.sweeps.sweep returns them. RecordingError when a run's
    label or plain run lacks what the page needs."""
    def point(lab: dict, r) -> SW.SweepPoint:
        n = lab.get("n")
        k, n = int(lab["k"]), None if n is None else n if isinstance(n, float) else int(n)
        # a recording keeps each point's typical repeat (the page runs one): the reopened speedup is that repeat's
        # ratio (the label's "speedup", the median, for any odd number of repeats); no plain steps: no divergence
        return SW.SweepPoint(k, n, Measured((k, n), [Repeat(r.summary, r.steps, r.plain, [])], None, compared=False),
                             axis=str(lab.get("axis", "n")), setting=setting_back(lab.get("setting")))
    points = each_run(rec, point, (KeyError, TypeError, ValueError, AttributeError))
    no_plain = next((i for i, p in enumerate(points) if p.plain is None), None)
    if no_plain is not None:
        raise R.RecordingError(f"run {no_plain + 1} has no plain run to measure its speedup against")
    if not points:
        raise R.RecordingError("a sweep with no runs")
    return points, [points[0].plain]


# -- one run as a "step" recording (the acceptance histogram's run): it opens in Step through too --------------
def run_recording(target, settings: dict, workload, summary, steps, page: str) -> R.Recording:
    ids = encode_prompt(target.tokenizer, workload.prompt, workload.chat)
    return recorder.step_recording(target, {**settings, "workload": workload.name}, ids, summary,
                                   memory.lean(steps), extra={"page": page})
