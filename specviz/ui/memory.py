"""Bounded per-session memory: full-vocabulary vectors only where a page shows them, idle sessions evicted.

A step record of a rejected step carries p and q over the whole vocabulary (49,152 floats each for
SmolLM2: 384 KiB per rejected step), used by Step through's residual chart. Only the run on screen
keeps them: runs remembered for other pages and the runs of Compare / the sweep are kept lean
(`lean`). A session untouched for IDLE_EVICT_S loses its heavy state (`sweep`), and the page says so.
Streamlit itself drops a session's whole state server.disconnectedSessionTTL (120 s) after its tab
closes; the registry here holds only weak references, so it never keeps a closed session alive.
"""
from __future__ import annotations

import dataclasses
import threading
import time
import weakref

IDLE_EVICT_S = 30 * 60
HEAVY_KEYS = ("stp", "measured_runs", "cmp_result", "exp_result", "cmp_gvs")
EVICTED_KEY = "mem_evicted_at"

_SESSIONS: dict[str, dict] = {}  # session id -> {"state": its session state, "seen": last run started}
_LOCK = threading.Lock()


def lean(steps: list) -> list:
    """Copies of step records without the full-vocabulary p/q vectors (top tokens are kept)."""
    return [dataclasses.replace(r, p_rejected=None, q_rejected=None)
            if getattr(r, "p_rejected", None) is not None or getattr(r, "q_rejected", None) is not None else r
            for r in steps]


def touch(now: float | None = None) -> None:
    """Mark the current Streamlit session as active, then evict the idle ones."""
    from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

    ctx = get_script_run_ctx(suppress_warning=True)
    if ctx is None:
        return
    now = time.time() if now is None else now
    with _LOCK:
        _SESSIONS[ctx.session_id] = {"state": weakref.ref(ctx.session_state), "seen": now}
    sweep(now)


def sweep(now: float | None = None, idle_s: float = IDLE_EVICT_S) -> list[str]:
    """Drop the heavy state of sessions idle for idle_s seconds; returns their ids."""
    now = time.time() if now is None else now
    with _LOCK:
        idle = [(sid, s) for sid, s in _SESSIONS.items() if now - s["seen"] >= idle_s or s["state"]() is None]
        for sid, _ in idle:
            del _SESSIONS[sid]
    for _, s in idle:
        state = s["state"]()
        if state is None:
            continue
        dropped = False
        for key in HEAVY_KEYS:
            try:
                if key in state:
                    del state[key]
                    dropped = True
            except Exception:  # noqa: BLE001 - a session Streamlit already closed
                pass
        if dropped:
            try:
                state[EVICTED_KEY] = now
            except Exception:  # noqa: BLE001
                pass
    return [sid for sid, _ in idle]

