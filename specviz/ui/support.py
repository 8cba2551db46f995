"""What every page shares: cached model loading, the sidebar settings, the test-sized mode.

Models live in st.cache_resource (one copy per process, read-only, shared by all sessions);
each browser session's decoding state lives in st.session_state. Pages import from here and
from specviz; they hold no algorithm.

Test-sized mode: with SPECVIZ_TINY=1 in the environment, the "target" is a tiny random Llama
with the real SmolLM2 tokenizer (so text still renders) and the "drafter" a second tiny one —
pages then run in well under a second per step, which is what AppTest uses.
"""
from __future__ import annotations

import functools
import os
import threading
import time

import streamlit as st

from specviz import runtime
from specviz.core.errors import InputError, ModelError
from specviz.engine import methods as M
from specviz.engine.device import default_device, half_dtype
from specviz.engine.experiments import WARM_UP_TOKENS, RunCount
from specviz.engine.models import DEFAULT, DEFAULT_LABEL, LoadedModel, load_model, load_tokenizer, tiny_llama
from specviz.ui import memory
from specviz.ui.turns import TURNS

TINY = os.environ.get("SPECVIZ_TINY", "") not in ("", "0")
THREADS = runtime.use_threads()  # sessions take turns on the model (ui/turns.py), each turn uses them all


@functools.lru_cache(maxsize=4)
def _tokenizer(name: str):
    return load_tokenizer(name)


def _load(name: str, device: str, dtype: str) -> LoadedModel:
    if name.startswith("tiny:"):  # tiny:<seed> — a random test model with the SmolLM2 tokenizer
        tok = _tokenizer(DEFAULT)
        m = tiny_llama(vocab_size=len(tok), layers=2, hidden=32, seed=int(name.split(":")[1]),
                       max_positions=2048)
        m.tokenizer = tok
        return m
    try:
        return load_model(name, None if device == "auto" else device, dtype)
    except ModelError:
        raise
    except Exception as e:  # noqa: BLE001 - e.g. device "cuda" on a machine without one
        raise ModelError(f"could not load '{name}' on {device} as {dtype}: {type(e).__name__}: {e}") from e


# Loads run in a background thread, one per (name, device, dtype), so a page can stay usable
# (and say what is loading) while the weights arrive; cached_model() waits for the same job.
_JOBS: dict[tuple, dict] = {}
_JOBS_LOCK = threading.Lock()


def _job(key: tuple) -> dict:
    with _JOBS_LOCK:
        job = _JOBS.get(key)
        if job is None:
            job = {"done": threading.Event(), "result": None, "error": None, "started": time.time()}
            _JOBS[key] = job

            def work():
                try:
                    job["result"] = _load(*key)
                except Exception as e:  # noqa: BLE001 - handed to the waiting page
                    job["error"] = e  # kept: pages show the failure instead of restarting the load on every
                                      # rerun; retry_failed() (the sidebar's Apply) starts it again
                finally:
                    job["done"].set()

            threading.Thread(target=work, name=f"specviz-load-{key[0]}", daemon=True).start()
        return job


def retry_failed(key: tuple) -> None:
    """Forget a failed load of `key`, so that the next request starts it again."""
    with _JOBS_LOCK:
        job = _JOBS.get(key)
        if job is not None and job["done"].is_set() and job["error"] is not None:
            _JOBS.pop(key, None)


def preload(name: str | None = None) -> tuple[str, float]:
    """Start loading a model (default: the session's target) without waiting.

    Returns (state, seconds since the load started): state is "ready", "loading" or "failed: <why>".
    """
    s = settings()
    job = _job((name or s["target"], s["device"], s["dtype"]))
    waited = time.time() - job["started"]
    if not job["done"].is_set():
        return "loading", waited
    if job["error"] is not None:
        return f"failed: {job['error']}", waited
    return "ready", waited


@st.cache_resource(show_spinner="Loading model weights (the sidebar shows how long it has taken so far)…")
def cached_model(name: str, device: str, dtype: str) -> LoadedModel:
    job = _job((name, device, dtype))
    job["done"].wait()
    if job["error"] is not None:
        raise job["error"]
    return job["result"]


def model_key() -> tuple[str, str, str]:
    """(target, device, dtype): the one key under which a model, its v(k) table and its runs are kept."""
    s = settings()
    return s["target"], s["device"], s["dtype"]


def settings() -> dict:
    """The sidebar's shared settings, kept in session_state across pages."""
    ss = st.session_state
    ss.setdefault("target_name", "tiny:0" if TINY else DEFAULT)
    ss.setdefault("device", "auto")
    ss.setdefault("dtype", "float32" if TINY else default_dtype_name())
    return {"target": ss["target_name"], "device": ss["device"], "dtype": ss["dtype"]}


def default_dtype_name() -> str:
    """bfloat16, or float16 on a CUDA GPU without native bfloat16 (what --dtype auto picks, engine/device.py)."""
    return str(half_dtype(default_device())).removeprefix("torch.")


def target_label(name: str | None = None) -> str:
    """How a target name reads on a page ('default' -> the embedded model's full name)."""
    name = name or settings()["target"]
    return DEFAULT_LABEL if name == DEFAULT else name


def sidebar() -> None:
    """Drawn by app.py on every page: which target, device and dtype."""
    s = settings()
    memory.touch()
    with st.sidebar:
        if memory.EVICTED_KEY in st.session_state:
            st.caption("This tab sat idle for a while, so its runs were cleared to free memory for others.")
        st.markdown("**Model**")
        label = target_label(s["target"])
        state, waited = preload()
        note = {"ready": "", "loading": f" — loading in the background ({waited:.0f} s so far)"}.get(state, "")
        st.caption(f"Target: {label}, {s['dtype']} on {s['device']}{note}")
        if state.startswith("failed"):
            st.error(f"The target could not be loaded: {state.removeprefix('failed: ')} Change it below and press "
                     "Apply.")
        with st.expander("Change model / device"):
            name = st.text_input("Target (default, a local folder or a cached Hugging Face id)",
                                 value=s["target"], key="target_input")
            dev = st.selectbox("Device", ["auto", "cpu", "cuda"],
                               index=["auto", "cpu", "cuda"].index(s["device"]), key="device_input")
            dt = st.selectbox("dtype", ["bfloat16", "float32", "float16"],
                              index=["bfloat16", "float32", "float16"].index(s["dtype"]), key="dtype_input",
                              help="bfloat16 is the fast choice on CPU. Greedy speculation writes plain greedy's text "
                                   "in either (specviz's attention rounds a verify pass as one-token steps); "
                                   "float32 rounds less, so near-ties are rarer.")
            if st.button("Apply", key="apply_model"):
                retry_failed((name.strip() or DEFAULT, dev, dt))  # Apply again = try again
                st.session_state["target_name"] = name.strip() or DEFAULT
                st.session_state["device"] = dev
                st.session_state["dtype"] = dt
                st.rerun()


def target() -> LoadedModel | None:
    """The session's target, loaded once per process. Shows st.error and returns None on failure."""
    try:
        return cached_model(*model_key())
    except (ModelError, InputError) as e:
        st.error(f"Could not load the target: {e}")
        return None


TRAINED_DRAFTER = "trained drafter (models/)"


def drafter_names() -> list[str]:
    """Draft models the app can offer for the current target."""
    if TINY:
        return ["tiny:1"]
    from specviz.engine import artifacts
    try:
        if artifacts.available().get("drafter"):
            return [TRAINED_DRAFTER]
    except Exception:  # noqa: BLE001 - an unreadable models/ folder means nothing trained to offer
        pass
    return []


@st.cache_resource(show_spinner="Loading the trained drafter…")
def _trained_drafter(name: str, device: str, dtype: str) -> LoadedModel:
    return M.trained_drafter(cached_model(name, device, dtype))


def drafter(name: str) -> LoadedModel | None:
    s = settings()
    try:
        if name == TRAINED_DRAFTER:
            return _trained_drafter(*model_key())
        return cached_model(name, s["device"], s["dtype"])
    except (ModelError, InputError) as e:
        st.error(f"Could not load the drafter: {e}")
        return None
    except Exception as e:  # noqa: BLE001 - a broken artifact is a message, not a traceback
        st.error(f"Could not load the drafter: {type(e).__name__}: {e}")
        return None


def methods_offered() -> list[str]:
    """available_methods() of specviz.engine.methods, with 'draft' only when a drafter can be offered."""
    return list(M.available_methods(drafter_available=bool(drafter_names())))


def proposer_for(method: str, tgt: LoadedModel, n: int | None = None, n_min: int | None = None,
                 n_max: int | None = None, drafter_model: LoadedModel | None = None, lookup_rule: str = "recent",
                 k_rule: str = M.DEFAULT_K_RULE, spec_factor: float | None = None, suffix: dict | None = None):
    """methods.make_proposer for the app's pages."""
    return M.make_proposer(method, tgt, n=n, n_min=n_min, n_max=n_max, drafter=drafter_model,
                           lookup_rule=lookup_rule, k_rule=k_rule, spec_factor=spec_factor, suffix=suffix)


# -- measured runs shared between pages (the calculator fills itself from these) ----------------
def remember_run(method: str, summary, steps, plain_summary=None, k: int | None = None,
                 n: int | None = None, v_table: dict | None = None, plain_steps=None,
                 speedup: float | None = None) -> None:
    """Keep the last measured run per method in this session (summary + step records).

    plain_summary: the plain-decoding run measured alongside it (same prompt, same settings),
    which gives t1 (and the measured speedup, unless `speedup` says it); v_table: {k: v(k)} if
    measured; plain_steps: that plain run's step records (t1 is then their median pass time rather
    than a mean); speedup: the figure the page showed, when it measured over several repeats (the
    median of their ratios): the calculator shows that one, not this run's own ratio.
    """
    st.session_state.setdefault("measured_runs", {})[method] = {
        "summary": summary, "steps": memory.lean(steps), "plain": plain_summary, "k": k, "n": n,
        "v_table": v_table, "plain_steps": None if plain_steps is None else memory.lean(plain_steps),
        "speedup": speedup, "at": time.time()}


def measured_runs() -> dict:
    """{method: {"summary", "steps", "plain", "k", "n", "v_table", "plain_steps", "speedup", "at"}} for
    this session."""
    return st.session_state.get("measured_runs", {})


# -- v(k), measured once per model / device / dtype (a few seconds) ------------------------------
@st.cache_data(show_spinner=False, max_entries=8)
def measured_v(name: str, device: str, dtype: str):
    """passcost.VTable {k: v(k)} (with its spread) for this target (shared by all sessions: it describes
    the machine, not a user)."""
    from specviz.engine.passcost import V_KS, measure_v
    with TURNS.measurement() as between:  # each repeat timed alone; other sessions step in between
        return measure_v(cached_model(name, device, dtype), ks=V_KS, context=256, repeats=5 if TINY else 7,
                         progress=lambda f: between())


def v_table_if_measured() -> dict[int, float] | None:
    """The v(k) table this session measured for its current target, if any."""
    return st.session_state.get("v_tables", {}).get(model_key())


def measure_v_table() -> dict[int, float] | None:
    """Measure (or fetch) v(k) for the session's target; st.error and None on failure."""
    if target() is None:
        return None
    table = measured_v(*model_key())
    st.session_state.setdefault("v_tables", {})[model_key()] = table
    return table


def usable_methods(target: LoadedModel) -> tuple[list[str], dict, LoadedModel | None]:
    """(methods that build for this target, why the others don't, the first offered drafter).

    Building a proposer may load weights, so the answer is kept once per session and target.
    """
    names = drafter_names()
    d = drafter(names[0]) if names else None
    key = ("cmp_methods_for", target.name, getattr(d, "name", None))
    if key not in st.session_state:
        st.session_state[key] = M.try_methods(target, d)
    methods, why_not = st.session_state[key]
    return methods, why_not, d


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
    """(seconds, a sentence) for the runs a comparison or a sweep makes (engine/experiments: compare_runs,
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
