"""Loading the models every page shares (each load a background job: ui/loadjobs.py), and the sidebar that picks them.

Models live in st.cache_resource (one copy per process, read-only, shared by all sessions); each browser session's
decoding state lives in st.session_state (ui/state.py names the keys that pages hand each other). No algorithm here.

Test-sized mode: with SPECVIZ_TINY=1 in the environment, the "target" is a tiny random Llama with the real SmolLM2
tokenizer (so text still renders) and the "drafter" a second tiny one: pages then run in well under a second per step.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable

import streamlit as st

from specviz import runtime
from specviz.core.errors import InputError, ModelError
from specviz.engine import artifacts, methods as M
from specviz.engine.device import describe_machine, machine
from specviz.engine.models import DEFAULT, DEFAULT_LABEL, LoadedModel, default_unpacked
from specviz.ui import lecture, loadjobs, memory
from specviz.ui.loadjobs import retry_failed

TINY = os.environ.get("SPECVIZ_TINY", "") not in ("", "0")
THREADS = runtime.use_threads()  # sessions take turns on the model (ui/turns.py), each turn uses them all


def preload(name: str | None = None) -> tuple[str, float]:
    """Start loading a model (default: the session's target) without waiting.

    Returns (state, seconds since the load started): state is "ready", "loading" or "failed: <why>".
    """
    s = settings()
    job = loadjobs.job((name or s["target"], s["device"], s["dtype"]))
    waited = time.time() - job["started"]
    if not job["done"].is_set():
        return "loading", waited
    if job["error"] is not None:
        return f"failed: {job['error']}", waited
    return "ready", waited


@st.cache_resource(show_spinner="Loading model weights (the sidebar shows how long it has taken so far)…")
def cached_model(name: str, device: str, dtype: str) -> LoadedModel:
    job = loadjobs.job((name, device, dtype))
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
    ss.setdefault("dtype", "float32" if TINY else "auto")
    return {"target": ss["target_name"], "device": ss["device"], "dtype": ss["dtype"]}


FIRST_LOAD = "; the first load on a machine unpacks the GGUF and keeps a copy, later loads take about a second"
DTYPES = ["auto", "bfloat16", "float32", "float16"]   # auto: timed once per machine (engine/autodtype.py)


def loaded(name: str | None = None) -> LoadedModel | None:
    """The session's target if its load has finished (None while loading, after a failure, or in lecture mode,
    which loads no model); never waits."""
    if lecture.on():
        return None
    s = settings()
    job = loadjobs.job((name or s["target"], s["device"], s["dtype"]))
    return job["result"] if job["done"].is_set() and job["error"] is None else None


def machine_caption(tgt: LoadedModel | None = None) -> str:
    """Where this process measures (CPU model and capability or GPU, threads, torch, dtype), under every figure."""
    tgt = tgt or loaded()
    return "Measured here: " + describe_machine(machine(tgt.device if tgt else None, tgt.dtype if tgt else None))


def target_label(name: str | None = None) -> str:
    """How a target name reads on a page ('default' -> the embedded model's full name)."""
    name = name or settings()["target"]
    return DEFAULT_LABEL if name == DEFAULT else name


def running_on(tgt, s: dict) -> str:
    """The dtype and device the target runs in; before it has loaded, the settings ("auto" said as a choice to come)."""
    if tgt is not None:
        return f"{str(tgt.dtype).removeprefix('torch.')} on {tgt.device.type}"
    dt = "dtype chosen at load (auto)" if s["dtype"] == "auto" else s["dtype"]
    dev = "the device found (auto)" if s["device"] == "auto" else s["device"]
    return f"{dt} on {dev}"


def sidebar() -> Callable[[], None]:
    """Drawn by app.py on every page: which target, device and dtype (in lecture mode: the recordings' folder). Returns
    what app.py calls after the page ran: the model line again if the load ended meanwhile (a Play that waited)."""
    memory.touch()
    if lecture.on():  # no model on this server: nothing to load or choose
        lecture.sidebar()
        return lambda: None
    s = settings()
    with st.sidebar:
        if memory.EVICTED_KEY in st.session_state:
            st.caption("This tab sat idle for a while, so its runs were cleared to free memory for others.")
        st.markdown("**Model**")
        box = st.empty()
        state = model_line(box, s)
        with st.expander("Change model / device"):
            name = st.text_input("Target (default, a local folder or a cached Hugging Face id)",
                                 value=s["target"], key="target_input")
            dev = st.selectbox("Device", ["auto", "cpu", "cuda"],
                               index=["auto", "cpu", "cuda"].index(s["device"]), key="device_input")
            dt = st.selectbox("dtype", DTYPES, index=DTYPES.index(s["dtype"]), key="dtype_input",
                              help="auto: the faster of float32 and bfloat16 for speculative decoding on this machine, "
                                   "timed once (a CPU without native bfloat16 verifies many rows far faster in "
                                   "float32), remembered. Greedy speculation writes plain greedy's text in either "
                                   "(specviz's attention rounds a verify pass as one-token steps); float32 rounds "
                                   "less, so near-ties are rarer.")
            if st.button("Apply", key="apply_model"):
                retry_failed((name.strip() or DEFAULT, dev, dt))  # Apply again = try again
                st.session_state.update(target_name=name.strip() or DEFAULT, device=dev, dtype=dt)
                st.rerun()

    def after_page() -> None:
        if state == "loading" and preload()[0] != "loading":
            model_line(box, s)
    return after_page


def model_line(box, s: dict) -> str:
    """The sidebar's model line in `box` (an st.empty): the target, what it runs in and why, or how long it has been
    loading, or why it failed. Returns the load's state."""
    state, waited = preload()
    first = FIRST_LOAD if state == "loading" and s["target"] == DEFAULT and not default_unpacked() else ""
    note = {"ready": "", "loading": f" — loading in the background ({waited:.0f} s so far{first})"}.get(state, "")
    tgt = loaded() if state == "ready" else None
    with box.container():
        st.caption(f"Target: {target_label(s['target'])}, {running_on(tgt, s)}{note}")
        if tgt is not None:                       # why this dtype, and lookup's sole rule from the same timing
            st.caption(f"Why {str(tgt.dtype).removeprefix('torch.')}: {tgt.dtype_reason or 'not recorded'}")
            st.caption(f"Lookup here: {M.lookup_sole(tgt)[1]}.")
        if state.startswith("failed"):
            st.error(f"The target could not be loaded: {state.removeprefix('failed: ')} Change it, then Apply.")
    return state


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


@st.cache_resource(show_spinner="Loading the fine-tuned target (the base with the shipped LoRA delta merged)…")
def _finetuned(name: str, device: str, dtype: str) -> LoadedModel:
    return artifacts.load_finetuned_target(cached_model(name, device, dtype))


def finetuned_target(target=None) -> LoadedModel:
    """The target's LoRA fine-tune, cached per process like the other models (`target`: the interview's hook)."""
    return _finetuned(*model_key())


def methods_offered() -> list[str]:
    """available_methods() of specviz.engine.methods, with 'draft' only when a drafter can be offered."""
    return list(M.available_methods(drafter_available=bool(drafter_names())))


def proposer_for(method: str, tgt: LoadedModel, n=None, n_min=None, n_max=None, drafter_model=None, **settings):
    """methods.make_proposer for the app's pages (settings: lookup_rule, k_rule, spec_factor, suffix)."""
    return M.make_proposer(method, tgt, n=n, n_min=n_min, n_max=n_max, drafter=drafter_model, **settings)


def first_drafter() -> LoadedModel | None:
    """The first draft model offered for the current target; None when none is."""
    names = drafter_names()
    return drafter(names[0]) if names else None


def usable_methods(target: LoadedModel) -> tuple[list[str], dict, LoadedModel | None]:
    """(methods that build for this target, why the others don't, the first offered drafter); kept once per
    session and target, as building a proposer may load weights."""
    d = first_drafter()
    key = ("cmp_methods_for", target.name, getattr(d, "name", None))
    if key not in st.session_state:
        st.session_state[key] = M.try_methods(target, d)
    methods, why_not = st.session_state[key]
    return methods, why_not, d


def target_or_stop() -> LoadedModel:
    """The session's target for a page that needs it; stops the page (after target()'s st.error) when it did not
    load."""
    tgt = target()
    if tgt is None:
        st.stop()
    return tgt


def target_and_methods() -> tuple[LoadedModel, list[str], dict, LoadedModel | None]:
    """(target, methods that build for it, why the others don't, the first offered drafter) for a page that runs
    methods; stops the page (after target()'s st.error) when the target did not load."""
    tgt = target_or_stop()
    methods, why_not, d = usable_methods(tgt)
    return tgt, methods, why_not, d
