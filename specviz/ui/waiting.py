"""Waiting for the shared model and saying how long: turns with a note of who is ahead, cancellable
jobs, the v(k) table measured in a turn, and estimates of a job's time from a step measured now."""
from __future__ import annotations

import streamlit as st

from specviz.core.errors import InputError, ModelError
from specviz.engine.comparisons import WARM_UP_TOKENS, RunCount
from specviz.ui import loading
from specviz.ui.loading import cached_model, settings
from specviz.ui.turns import TURNS


# -- turns on the shared model (ui/turns.py) ---------------------------------------------------
def waiter(box):
    """An on_wait callback for TURNS: says in `box` how many sessions are ahead (redrawn when it changes)."""
    last = [None]

    def on_wait(ahead: int) -> None:
        if ahead != last[0]:
            last[0] = ahead
            box.info(f"Waiting for the model: {ahead} session{'s' if ahead != 1 else ''} ahead of you. "
                     "Sessions take turns one step at a time, so every run keeps moving.", icon="⏳")
    return on_wait


def measuring(box):
    """TURNS.measurement with a waiting note in `box`: `with measuring(box) as between: ...`."""
    return TURNS.measurement(waiter(box))


def run_job(key: str, work):
    """A long measurement (Compare, the sweep) as a cancellable job: a Cancel button (any click stops
    the script run; the page shows the `<key>_cancelled` flag on its next run), a progress bar, each
    run timed in its own turn. `work(progress)` does the job. Returns (result, shared) where shared
    says other sessions stepped in between runs, or None after a user-facing error (shown)."""
    cancel = st.empty()  # gone with the bar when the job ends: a Cancel button after the run would cancel nothing
    cancel.button("Cancel", key=f"{key}_cancel",
                  on_click=lambda: st.session_state.update({f"{key}_cancelled": True}))
    bar = st.progress(0.0, "starting…")
    try:
        with measuring(bar) as between:  # each run timed alone; other sessions step in between runs
            out = work(lambda f, t: (bar.progress(f, t), between()))
        return out, between.shared
    except (InputError, ModelError) as e:
        st.error(str(e))
        return None
    finally:
        bar.empty()
        cancel.empty()


def said_cancelled(key: str, what: str) -> None:
    """One line after a job run_job(key, ...) was cancelled (its `<key>_cancelled` flag, cleared here)."""
    if st.session_state.pop(f"{key}_cancelled", False):
        st.info(f"{what} cancelled.")


# -- v(k), measured once per model / device / dtype (a few seconds) ------------------------------
@st.cache_data(show_spinner=False, max_entries=8)
def measured_v(name: str, device: str, dtype: str):
    """passcost.VTable {k: v(k)} (with its spread) for this target (shared by all sessions: it describes
    the machine, not a user)."""
    from specviz.engine.passcost import V_KS, measure_v
    with TURNS.measurement() as between:  # each repeat timed alone; other sessions step in between
        return measure_v(cached_model(name, device, dtype), ks=V_KS, context=256,
                         repeats=5 if loading.TINY else 7, progress=lambda f: between())


# -- how long a job will take, from a measured step (Compare, the sweep) ------------------------
@st.cache_data(ttl=300, show_spinner="Timing a few decoding steps for the estimate…", max_entries=8)
def step_seconds(name: str, device: str, dtype: str) -> tuple[float, float]:
    """(median plain-step seconds, prefill seconds) on this machine now: 8 plain steps, in a turn."""
    from specviz.core.stats import median
    from specviz.engine import measure, workloads
    from specviz.engine.decode import DecodeConfig
    from specviz.engine.methods import encode_prompt

    tgt = cached_model(name, device, dtype)
    w = workloads.WORKLOADS[0]
    with TURNS.turn():
        s, steps = measure.run(tgt, None, encode_prompt(tgt.tokenizer, w.prompt, w.chat),
                               DecodeConfig(k=1, max_new_tokens=9, record=False, stop_at_eos=False))
    return median(r.verify_s for r in steps[1:]), s.prefill_s


def estimate(runs: RunCount, max_new: int) -> tuple[float, str]:
    """(seconds, a sentence) for the runs a comparison or a sweep makes (engine/comparisons: compare_runs,
    sweep_runs), from a plain step measured on this machine now: each run is its prefill plus one step per
    new token."""
    s = settings()
    t1, prefill = step_seconds(s["target"], s["device"], s["dtype"])
    secs = runs.timed * (prefill + max_new * t1) + runs.warm_ups * (prefill + WARM_UP_TOKENS * t1)
    busy = TURNS.waiting()
    who = f" {busy} other session{'s' if busy != 1 else ''} queued for the model now, so expect longer." if busy else ""
    warm = f"{runs.warm_ups} warm-up run{'s' if runs.warm_ups != 1 else ''} of {WARM_UP_TOKENS} tokens"
    return secs, (f"{runs.timed} runs of up to {max_new} new tokens: about {_duration(secs)} here, with the "
                  f"{warm} (a plain step measured {t1 * 1e3:.0f} ms just now; speculative runs take fewer, "
                  f"dearer passes).{who}")


def _duration(secs: float) -> str:
    return f"{secs:.0f} s" if secs < 90 else f"{secs / 60:.1f} min"


SHARED_NOTE = ("Other sessions took turns on the model during this measurement. Each run was timed inside "
               "this session's own turn, but their pages were being drawn on the same CPU meanwhile: "
               "run it again when the class is quieter before quoting these numbers.")
