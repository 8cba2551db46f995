"""Step through, shared: its settings in a link (ui/links.py) with the step shown, a run downloaded or opened as a
recording (ui/recordings.py), and the note on a run served from the server's recordings (engine/runcache.py)."""
from __future__ import annotations

import streamlit as st

from specviz.ui import links as L, recordings, stepping as S
from specviz.ui.step_settings import DEFAULTS, DEPTH_MAX, K_MAX, N_MAX, NEW_MAX, PRESETS, first_method, use_preset


# -- links ---------------------------------------------------------------------------------------------
def link_params(offered: list[str]) -> list[L.Param]:
    """Step through's settings as a link carries them, with the app's ranges; `step` = the step shown."""
    P_ = L.Param
    return [P_("stp_preset", "choice", options=tuple(PRESETS)), P_("stp_prompt", "text"), P_("stp_chat", "bool"),
            P_("stp_method", "choice", options=tuple(offered)), P_("stp_k", "int", 1, K_MAX),
            P_("stp_new", "int", 1, NEW_MAX), P_("stp_adaptive", "bool"),
            P_("stp_krule", "choice", options=("fixed", "match")), P_("stp_factor", "float", 0.01, 16),
            P_("stp_rule", "choice", options=("recent", "earliest")),
            P_("stp_nmode", "choice", options=("fixed n", "widest of n-min..n-max")),
            P_("stp_n", "int", 1, N_MAX), P_("stp_nmin", "int", 1, N_MAX), P_("stp_nmax", "int", 1, N_MAX),
            P_("stp_depth", "int", 2, DEPTH_MAX), P_("stp_sfactor", "float", 0.01, 16),
            P_("stp_minprob", "float", 0, 1), P_("stp_temp", "float", 0, 2), P_("stp_seed", "int", 0, 2**31 - 1),
            P_("stp_cache", "bool"), P_("step", "int", 1, NEW_MAX)]


def link_defaults(offered: list[str]) -> dict:
    return {**DEFAULTS, "stp_method": first_method(offered), "stp_adaptive": False,
            "stp_krule": "match", "stp_rule": "recent", "stp_nmode": "fixed n", "stp_cache": True}


def open_link(offered: list[str]) -> int | None:
    """A link's settings into the widgets (its first run in a session); the step it asks to show, if any."""
    got = L.check("step", link_params(offered))
    step = got.pop("step", None)
    L.apply(got)
    if "stp_preset" in got and "stp_prompt" not in got:  # a preset alone brings its prompt, as choosing it does
        use_preset()
    return step


def go_to(run: dict, step: int, box) -> None:
    """A link's step: the run stepped up to it (served at once when the server made it before)."""
    dec = run["dec"]
    while len(dec.steps) < step and not dec.finished:
        S.one_step(dec, box)
    st.session_state["stp_show"] = min(step, len(dec.steps))
    S.remember(run)


def share(run: dict | None, offered: list[str], box) -> None:
    """The URL carries the settings (and the step shown, for a run made from them); the link control in `box`."""
    step = {} if run is None or S.opened_file(run) or not run["dec"].steps else {
        "step": str(st.session_state.get("stp_show", len(run["dec"].steps)))}
    q = L.write(link_params(offered)[:-1], link_defaults(offered), step)
    with box:
        L.share("step", q, "and the step shown: a greedy or seeded run gives the same drafts and text"
                if step else "press Play there to make the same run")


# -- recordings ---------------------------------------------------------------------------------------------
def recordings_panel(run: dict | None) -> dict | None:
    """Download the session's run; open a recording (it becomes the run, replayed with no model) or close it.
    Returns the session's run after any of these."""
    with st.expander("Recorded runs: download this one, or open one", icon=":material/save:"):
        rec = recordings.opened("stp_upload", "step", convert=recordings.steppable)
        if rec is not None:
            run = S.load_replay(rec)
        if run is not None and run["dec"].steps:
            recordings.download("Download this run", S.recording_of(run), key="stp_download")
        if S.opened_file(run) and st.button("Close the recording", key="stp_close"):
            st.session_state.pop(S.KEY, None)
            run = None
    if S.opened_file(run):
        r = run["replay"]
        gate = r.settings.get("gate_rule")
        st.info(f"Replaying a recording made at {r.when} with {recordings.origin(r)}. No model is needed: "
                "**One step** and **Play** hand out its recorded steps; every time shown is the recording's."
                + (f" It drafted behind a gate (`--gate`): {gate}; a step the gate held back says so." if gate else ""),
                icon=":material/replay:")
    return run


def served_note(run: dict) -> None:
    """A served run says so: when it was recorded, that its times are the recording's."""
    r = run["replay"]
    st.info(f"Recorded at {r.when} on this server (replayed): another session (or this one) made this exact run "
            f"before, so its steps come from that recording, with no target pass. The draft and verify times "
            f"shown are the recording's ({r.environment.get('threads', '?')} torch threads then); **Measure again** "
            "runs it live and re-times it.", icon=":material/replay:")
