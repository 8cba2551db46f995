"""A session of requests (issue 23 §3): each request in order, suffix's cross-request cache on and off, lookup
beside them, every one against plain decoding (engine/sessions.session_against_plain). Compare draws this
panel; Step through's session presets prime a suffix cache with the earlier requests (prime())."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from specviz.core.sampling import SamplingConfig
from specviz.core.suffix import SessionCache
from specviz.engine import sessions as SE, workloads as W
from specviz.engine.methods import SELF_SIZED_CAP
from specviz.teach import copying as C
from specviz.ui import loading, waiting

KEY = "cmp_sess"


def contenders(target, methods: list[str], cfg) -> dict:
    """{label: (proposer factory, settings, cache on?)}: suffix with and without its cache, and lookup (the
    match-length rule) which copies within a request only."""
    out = {}
    if "suffix" in methods:
        out["suffix, cache on"] = (lambda: loading.proposer_for("suffix", target), cfg, True)
        out["suffix, cache off"] = (lambda: loading.proposer_for("suffix", target), cfg, False)
    if "lookup" in methods:
        out["lookup (match length)"] = (lambda: loading.proposer_for("lookup", target, k_rule="match"), cfg, False)
    return out


def panel(target, methods: list[str]) -> None:
    """Compare's session section: choose a session, run it, show the measured numbers and the lesson."""
    st.subheader("A session of requests: does remembering earlier requests pay?")
    st.markdown(C.WHEN_CACHE_PAYS)
    st.caption(C.MEASURED_SESSION)
    if "suffix" not in methods:
        st.info("This needs the suffix method, which is not available here.")
        return
    c1, c3, c4 = st.columns([4, 1, 1])
    name = c1.selectbox("Session", [s.name for s in W.SESSIONS], key="cmp_sess_name", format_func=lambda n: (
        f"{n}: {W.get_session(n).task} ({len(W.get_session(n).requests)} requests)"))
    max_new = c3.number_input("max new tokens", 4, 256, 8 if loading.TINY else 48, key="cmp_sess_new")
    repeats = c4.number_input("repeats", 1, 3, 1, key="cmp_sess_repeats")
    session = W.get_session(name)
    cfg = SE.session_config(SELF_SIZED_CAP, SamplingConfig(), int(max_new))   # both size their own drafts
    cons = contenders(target, methods, cfg)
    st.caption(f"Greedy; suffix and lookup (match-length rule) draft up to {SELF_SIZED_CAP} tokens a step. Each "
               "request in order; plain decoding runs every request too. "
               + waiting.estimate(SE.session_runs(len(session.requests), len(cons), int(repeats)), int(max_new))[1])
    if st.button("Run the session", key="cmp_sess_run"):
        done = waiting.run_job(KEY, lambda progress: SE.session_against_plain(
            target, session, cons, cfg, repeats=int(repeats), progress=progress))
        if done:
            (measured, _), shared = done
            st.session_state[KEY] = (name, [m.row() for m in measured.values()], shared)
    if st.session_state.pop(f"{KEY}_cancelled", False):
        st.info("Session run cancelled.")
    kept = st.session_state.get(KEY)
    if kept:
        shown, rows, shared = kept
        if shared:
            st.warning(waiting.SHARED_NOTE)
        st.dataframe(pd.DataFrame(C.session_rows(rows)), hide_index=True, width="stretch")
        verdict = C.cache_verdict(rows)
        if verdict:
            st.markdown(verdict)
        st.caption(f"Measured now on {shown}: speedup = the whole session's tokens/s ÷ plain's over the same "
                   "requests, median over repeats; per request, that request's ratio. " + C.MEASURED_ALONE)


# -- Step through: a session preset ------------------------------------------------------------------------
def session_of(preset: str) -> W.Session | None:
    """The session a Step through preset names, else None."""
    return W.SESSION_BY_NAME.get(preset.split(" · ")[0])


def prime(target, session: W.Session, make, cfg) -> SessionCache:
    """Run the session's requests but the last one, in order, each remembered in one SessionCache (the one
    `make(cache)` builds its proposers around); Step through then steps through the last request with it."""
    cache = SessionCache()
    earlier = replace(session, requests=session.requests[:-1])
    SE.run_session(target, earlier, lambda: make(cache), replace(cfg, record=False), cache=True)
    return cache
