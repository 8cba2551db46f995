"""Serving reality's lab: a real roofline. This machine's bandwidth and peak FLOP/s measured, a decode step at batch
B and k drafts placed on the roof, v_B(k) predicted beside v_B(k) measured, tokens/s per machine beside per-sequence
speedup, and a datacenter GPU's ridge for contrast. Computations in teach/roofline.py and core/; charts in viz/."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from specviz.core.errors import InputError
from specviz.engine.peaks import measure_peaks
from specviz.teach import reality as R, roofline as T
from specviz.teach.guess import Guess
from specviz.ui import guess as G, loading, state
from specviz.ui.links import BIND
from specviz.viz import roofline as VR

ss = st.session_state


def peaks(tgt):
    """This machine's roof in the target's dtype, measured once per session, device and dtype."""
    key = (str(tgt.device), str(tgt.dtype))
    kept = ss.setdefault("rf_peaks", {})
    if key not in kept:
        small = dict(tries=3, copy_mib=16, matmul_n=256) if loading.TINY else {}
        kept[key] = measure_peaks(tgt.device, tgt.dtype, **small)
    return kept[key]


def _settings(tgt) -> tuple[int, tuple[int, ...], float, float] | None:
    c = st.columns([1, 2, 1, 1])
    k = c[0].selectbox("k (drafted tokens)", [1, 2, 4, 8], index=2, key="rf_k")
    text = c[1].text_input("batch sizes to measure", ", ".join(map(str, (1, 2, 4) if loading.TINY else T.BATCHES)),
                           key="rf_batches")
    alpha = c[2].slider("α", 0.0, 1.0, 0.8, 0.05, key="rf_alpha", bind=BIND)
    cost = c[3].number_input("c (draft cost per token)", 0.0, 2.0, 0.05, 0.01, key="rf_c", bind=BIND)
    try:
        return int(k), T.parse_sizes(text, 1, 256, "batch sizes"), float(alpha), float(cost)
    except InputError as e:
        st.error(str(e))
        return None


def roofline_section() -> None:
    tgt = G.opening(
        "4 · A real roofline",
        "At batch 1 a decode step reads every weight once to produce one token per sequence: bound by memory "
        "bandwidth, the arithmetic units idle. Speculation spends that idle arithmetic on k extra positions. "
        "The roofline says how far that lasts: a pass takes at least max(bytes ÷ bandwidth, FLOPs ÷ peak), so "
        "extra tokens are free until the FLOPs per byte read, the arithmetic intensity, reach the machine's "
        "ridge point (peak ÷ bandwidth). Measure this machine's roof, then place real decode steps on it.")
    if tgt is None:
        return
    got = _settings(tgt)
    if got is None:
        return
    k, batches, alpha, cost = got
    context = 16 if loading.TINY else 32
    repeats = 1 if loading.TINY else 3
    dt = str(tgt.dtype).replace("torch.", "")
    FREE = Guess(f"the smallest batch at which verifying k = {k} drafts stops being nearly free (v_B({k}) above "
                 f"{T.FREE:g} plain steps)", "measured", choices=T.choices(batches),
                 experiment=f"{dt}, k = {k}, batches {', '.join(map(str, batches))}, {loading.target_label()}")
    lab = G.lab("rf_free", FREE, "Lock in my guess and measure",
                lambda step: T.measure(tgt, peaks(tgt), k, context=context, repeats=repeats, batches=batches,
                                       progress=lambda f, t: step(f, f"v_B({k}) at {t}")),
                "rf_lab", "Commit to a guess, then measure: a large copy and a large matmul for the roof (once per "
                "session), then a bare forward over k + 1 and over 1 new tokens per sequence at each batch size.",
                run_key="rf_run", say="The measurement failed: {}",
                errors=G.ERRORS + (RuntimeError,),   # RuntimeError: out of memory at a large batch
                bar="measuring this machine's bandwidth and peak FLOP/s…")
    if lab is not None:
        show(lab, alpha, cost, FREE)


def show(lab: T.Lab, alpha: float, cost: float, guess: Guess) -> None:
    answer = T.nearly_free_until(lab)
    G.show("rf_free", guess, answer)
    m = lab.machine
    st.markdown(f"Measured: the first batch with v_B({lab.k}) > {T.FREE:g} is **{answer['measured']}**; the "
                f"roofline of this machine predicts **{answer['predicted']}**.")
    c = st.columns(4)
    c[0].metric("bandwidth (copy)", f"{m.bandwidth / 1e9:.1f} GB/s")
    c[1].metric(f"peak ({lab.dtype} matmul)", f"{m.peak / 1e9:,.0f} GFLOP/s")
    c[2].metric("ridge point here", f"{m.ridge:.0f} FLOP/byte")
    c[3].metric("ridge of an H100 SXM", f"{T.H100.ridge:.0f} FLOP/byte")
    st.caption(f"Roof: {lab.peaks.describe()}. One decode step here: {T.intensity_words(lab.bytes_per_weight)} "
               f"(16-bit weights: B·(k + 1); float32: half that). {T.H100.name}: {T.H100.source}. "
               + loading.machine_caption() + " (other work on the machine moves every figure).")
    rs = T.rows(lab, alpha, cost)
    pts = [{"label": "plain step (k = 0), measured", "intensity": [lab.step.intensity(r["batch"], 0) for r in rs],
            "flops_s": [lab.step.flops(r["batch"], 0) / r["measured t1"] for r in rs],
            "text": [f"B = {r['batch']}" for r in rs]},
           {"label": f"verify pass (k = {lab.k}), measured",
            "intensity": [r["intensity"] for r in rs],
            "flops_s": [lab.step.flops(r["batch"], lab.k) / (r["measured v"] * r["measured t1"]) for r in rs],
            "text": [f"B = {r['batch']}, k = {lab.k}" for r in rs]}]
    st.plotly_chart(VR.roofline_figure([m, T.H100], pts, f"The roofline, {lab.dtype}: decode steps of "
                                       f"{loading.target_label()} at each batch"), width="stretch", key="rf_fig")
    v = f"v_B({lab.k})"
    st.dataframe(pd.DataFrame([{
        "batch B": r["batch"], "FLOP/byte": f"{r['intensity']:.1f}", f"{v} roofline": f"{r['predicted v']:.2f}",
        f"{v} measured": f"{r['measured v']:.2f}", "t1 roofline (ms)": f"{r['roofline t1'] * 1e3:.1f}",
        "t1 measured (ms)": f"{r['measured t1'] * 1e3:.1f}"} for r in rs]), hide_index=True, width="stretch")
    st.dataframe(pd.DataFrame([{
        "batch B": r["batch"], "speedup per sequence": f"{r['speedup']:.2f}×",
        "tokens/s plain": f"{r['plain tok/s']:.0f}", "tokens/s speculating": f"{r['speculating tok/s']:.0f}"}
        for r in rs]), hide_index=True, width="stretch")
    st.caption(f"The experiment: {lab.describe()}; {loading.target_label()}. Speedup per sequence = E[τ] ÷ "
               f"(v_B({lab.k}) + k·c) at α = {alpha:.2f}, c = {cost:.2f} (core/costmodel.py) with the measured "
               "v_B(k); tokens/s for the machine = B × that speedup ÷ t1. Predicted v_B(k) = max(bytes ÷ bandwidth, "
               "FLOPs ÷ peak) at k + 1 tokens per sequence ÷ the same at 1 (core/roofline.py).")
    if any(r["measured v"] < 0.9 for r in rs):
        st.warning("A pass over k + 1 tokens per sequence measured faster than one over 1: other work on the machine "
                   "moved these timings more than k extra tokens do. Measure again when it is quieter.")
    loop = state.v_table_if_measured()
    if loop and lab.k in loop:
        st.caption(f"Through the decode loop at batch 1 (acceptance and cache rollback included, engine/passcost.py, "
                   f"measured earlier in this session): v({lab.k}) = {loop[lab.k]:.2f}, against "
                   f"{rs[0]['measured v']:.2f} for the bare forward timed here.")
    st.markdown("**The gap.** " + T.gap_words(rs))
    st.markdown("**Throughput against latency.** Per-sequence speedup is what one user feels; tokens/s for the "
                "machine is what the server sells. A bigger batch raises the second long after speculation's gain "
                "per sequence has shrunk, which is why servers shorten k or stop speculating as the batch grows. "
                f"Each sequence's verify pass computes k + 1 positions and keeps E[τ] of them: "
                f"{R.wasted_per_pass(alpha, lab.k):.2f} positions thrown away per sequence per pass at α = "
                f"{alpha:.2f}; at batch 1 they ride on the weight read, past the ridge they take other sequences' "
                f"place. On an H100 (ridge {T.H100.ridge:.0f}) a 16-bit pass at k = {lab.k} stays under the ridge "
                f"until B ≈ {T.RL.compute_bound_batch(lab.k, T.H100, 2):.0f} sequences.")
