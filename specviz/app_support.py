"""What every page shares: cached model loading, the sidebar settings, the test-sized mode.

Models live in st.cache_resource (one copy per process, read-only, shared by all sessions);
each browser session's decoding state lives in st.session_state. Pages import from here and
from specviz; they hold no algorithm.

Test-sized mode: with SPECVIZ_TINY=1 in the environment, the "target" is a tiny random Llama
with the real SmolLM2 tokenizer (so text still renders) and the "drafter" a second tiny one —
pages then run in well under a second per step, which is what AppTest uses.
"""
from __future__ import annotations

import os

import streamlit as st

from .decode import InputError
from .models import DEFAULT, DEFAULT_LABEL, LoadedModel, ModelError, load_model, load_tokenizer, tiny_llama

TINY = os.environ.get("SPECVIZ_TINY", "") not in ("", "0")


@st.cache_resource(show_spinner="Loading the tokenizer…")
def cached_tokenizer(name: str = DEFAULT):
    return load_tokenizer(name)


@st.cache_resource(show_spinner="Loading model weights (the default model takes ~20 s on a CPU)…")
def cached_model(name: str, device: str, dtype: str) -> LoadedModel:
    if name.startswith("tiny:"):  # tiny:<seed> — a random test model with the SmolLM2 tokenizer
        tok = cached_tokenizer(DEFAULT)
        m = tiny_llama(vocab_size=len(tok), layers=2, hidden=32, seed=int(name.split(":")[1]),
                       max_positions=2048)
        m.tokenizer = tok
        return m
    return load_model(name, None if device == "auto" else device, dtype)


def settings() -> dict:
    """The sidebar's shared settings, kept in session_state across pages."""
    ss = st.session_state
    ss.setdefault("target_name", "tiny:0" if TINY else DEFAULT)
    ss.setdefault("device", "auto")
    ss.setdefault("dtype", "float32" if TINY else "bfloat16")
    return {"target": ss["target_name"], "device": ss["device"], "dtype": ss["dtype"]}


def sidebar() -> None:
    """Drawn by app.py on every page: which target, device and dtype."""
    s = settings()
    with st.sidebar:
        st.markdown("**Model**")
        label = DEFAULT_LABEL if s["target"] == DEFAULT else s["target"]
        st.caption(f"Target: {label}")
        with st.expander("Change model / device"):
            name = st.text_input("Target (default, a local folder or a cached Hugging Face id)",
                                 value=s["target"], key="target_input")
            dev = st.selectbox("Device", ["auto", "cpu", "cuda"],
                               index=["auto", "cpu", "cuda"].index(s["device"]), key="device_input")
            dt = st.selectbox("dtype", ["bfloat16", "float32", "float16"],
                              index=["bfloat16", "float32", "float16"].index(s["dtype"]), key="dtype_input",
                              help="bfloat16 is the fast choice on CPU; float32 makes greedy speculation "
                                   "match plain greedy decoding bit for bit.")
            if st.button("Apply", key="apply_model"):
                st.session_state["target_name"] = name.strip() or DEFAULT
                st.session_state["device"] = dev
                st.session_state["dtype"] = dt
                st.rerun()


def target() -> LoadedModel | None:
    """The session's target, loaded once per process. Shows st.error and returns None on failure."""
    s = settings()
    try:
        return cached_model(s["target"], s["device"], s["dtype"])
    except (ModelError, InputError) as e:
        st.error(f"Could not load the target: {e}")
        return None


def drafter_names() -> list[str]:
    """Draft models the app can offer for the current target."""
    if TINY:
        return ["tiny:1"]
    return []  # the trained default drafter registers here once it ships (models/)


def drafter(name: str) -> LoadedModel | None:
    s = settings()
    try:
        return cached_model(name, s["device"], s["dtype"])
    except (ModelError, InputError) as e:
        st.error(f"Could not load the drafter: {e}")
        return None


# -- measured runs shared between pages (the calculator fills itself from these) ----------------
def remember_run(method: str, summary, steps, plain_summary=None, k: int | None = None,
                 n: int | None = None, v_table: dict | None = None) -> None:
    """Keep the last measured run per method in this session (summary + step records).

    plain_summary: the plain-decoding run measured alongside it (same prompt, same settings),
    which gives the measured speedup and t1; v_table: {k: v(k)} if measured.
    """
    st.session_state.setdefault("measured_runs", {})[method] = {
        "summary": summary, "steps": steps, "plain": plain_summary, "k": k, "n": n, "v_table": v_table}


def measured_runs() -> dict:
    """{method: {"summary", "steps", "plain", "k", "n", "v_table"}} for this session."""
    return st.session_state.get("measured_runs", {})
