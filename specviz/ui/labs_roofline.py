"""Serving reality's lab: batch size and the roofline. Computations in teach/; charts in viz/."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from specviz.teach import reality as R
from specviz.teach.guess import Guess
from specviz.ui import guess as G, loading
from specviz.ui.links import BIND
from specviz.viz import breakeven as vb

ss = st.session_state


# -- Serving reality: batch size and the roofline ------------------------------------------------------------
ROOF = Guess("speedup at batch 16, k = 4 (α = 0.8, c = 0.05)", "s16", lo=0.0, hi=6.0, step=0.05, rel=0.15,
             abs_tol=0.1)


def roofline_section() -> None:
    st.header("4 · Batch size and the roofline")
    st.write("At batch 1 a decode step reads every weight once to produce one token: it is bound by memory bandwidth, "
             "and the arithmetic units idle. Speculation spends that idle arithmetic on k extra positions. As the "
             "batch grows, the same weight read serves many sequences, the arithmetic fills up, and the extra "
             "positions start to cost real time.")
    tgt = loading.target()
    if tgt is None:
        return
    c = st.columns(2)
    alpha = c[0].slider("α", 0.0, 1.0, 0.8, 0.05, key="rf_alpha", bind=BIND)
    cost = c[1].number_input("c (draft cost per token)", 0.0, 2.0, 0.05, 0.01, key="rf_c", bind=BIND)
    guess = G.ask("rf_s16", ROOF)
    if st.button("Lock in my guess and measure", type="primary", key="rf_run") and G.lock("rf_s16", guess):
        bar = st.progress(0.0, "measuring…")
        small = loading.TINY
        ss["rf_bw"] = R.achieved_bandwidth(tgt.model, tgt.vocab_size, context=32 if small else 128,
                                           repeats=2 if small else 7)
        ss["rf_vb"] = R.v_by_batch(tgt.model, tgt.vocab_size, ks=(1, 2, 4, 8), context=32 if small else 128,
                                   repeats=2 if small else 5, progress=lambda f, t: bar.progress(f, t))
        bar.empty()
    if "rf_vb" not in ss:
        st.info("Commit to a guess, then measure: one batch-1 step for the bandwidth, and v(k) at batch 1, 4 and 16.")
        return
    bw, vbt = ss["rf_bw"], ss["rf_vb"]
    sp = R.batch_speedups(vbt, 0.8, 0.05)
    G.show("rf_s16", ROOF, {"s16": sp[16][4]})
    m = st.columns(3)
    m[0].metric("weights read per token (batch 1)", f"{bw['bytes'] / 2**20:.0f} MiB")
    m[1].metric("measured step", f"{bw['step_s'] * 1e3:.1f} ms")
    m[2].metric("achieved bandwidth", f"{bw['gbps']:.1f} GB/s")
    st.caption("Weights ÷ step time: the bandwidth one decode step achieved on this machine just now (a lower bound "
               "on what the memory can do: the KV cache reads and Python overhead are in the step too). "
               + loading.machine_caption() + ".")
    mine = R.batch_speedups(vbt, float(alpha), float(cost))
    best = R.best_k_by_batch(mine)
    st.plotly_chart(vb.batch_speedup_figure(mine), width="stretch", key="rf_fig")
    st.dataframe(pd.DataFrame([{"batch": b, **{f"k = {k}": f"{s:.2f}×" for k, s in row.items()},
                                "best k": best[b] or "0 (don't speculate)"} for b, row in mine.items()]),
                 hide_index=True, width="stretch")
    st.markdown("**Wasted compute per pass.** Each sequence's verify pass computes k + 1 positions and keeps τ of "
                "them: " + ", ".join(f"k = {k}: {R.wasted_per_pass(float(alpha), k):.2f}" for k in (1, 2, 4, 8))
                + f" positions thrown away per sequence at α = {alpha:.2f}. At batch 1 they ride on the weight read; "
                "in a full batch they take the place of other sequences' tokens. That is why servers shorten k or stop "
                "speculating as the batch grows (vLLM's V0 engine had speculative_disable_by_batch_size for it: no "
                "speculation for new requests once more than that many are queued).")
