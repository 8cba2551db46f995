"""Serving reality's dtype lab (issue 33): guess v(24) in bfloat16 and in float32 on this machine, then measure both
and see what the same chain of drafts is worth in each. Computations in teach/dtypes.py."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from specviz.teach import dtypes as D
from specviz.teach.guess import Guess
from specviz.ui import guess as G, loading

ss = st.session_state


def guesses(exp: str) -> dict[str, Guess]:
    return {dt: Guess(f"v({D.K}) in {dt} on this machine", "v", lo=0.5, hi=40.0, step=0.1, rel=0.3, abs_tol=0.2,
                      experiment=exp) for dt in ("bfloat16", "float32")}


def dtype_section() -> None:
    tgt = G.opening(
        "5 · The same method on another machine: the dtype",
        f"A verify pass of {D.K} drafts multiplies a {D.K + 1}-row matrix by every weight instead of one row. "
        "Whether the extra rows are nearly free depends on the CPU's arithmetic for the dtype: with native "
        "bfloat16 units (AVX512-BF16, AMX) they are; without them, bfloat16 is converted row by row and each "
        "extra row costs almost a whole one. Guess this machine's v for each dtype before it is timed.")
    if tgt is None:
        return
    small = loading.TINY
    repeats, context = (2, 32) if small else (5, 256)
    exp = D.experiment(tgt, repeats, context)
    gs = guesses(exp)
    cols = st.columns(2)
    with cols[0]:
        bf = G.ask("dt_bf16", gs["bfloat16"])
    with cols[1]:
        f32 = G.ask("dt_f32", gs["float32"])
    if st.button("Lock in my guesses and measure both", type="primary", key="dt_run") \
            and G.lock("dt_bf16", bf, gs["bfloat16"]) and G.lock("dt_f32", f32, gs["float32"]):
        with G.measuring("Cannot measure v in both dtypes here: {}", G.ERRORS + (ValueError, RuntimeError)) as step:
            ss["dt_v"] = (D.v_by_dtype(tgt, repeats, context, progress=step), exp)
    if "dt_v" not in ss:
        st.info(f"Guess both, then measure: {exp}.")
        return
    v, exp = ss["dt_v"]
    for dt, key in (("bfloat16", "dt_bf16"), ("float32", "dt_f32")):
        if dt in v:
            G.show(key, gs[dt], {"v": v[dt]})
    alpha = st.slider("α of the chain (the chance each tested draft is kept)", 0.5, 0.99, 0.9, 0.01, key="dt_alpha")
    rows = [{"machine": "this one (measured now)", "dtype": dt, f"v({D.K})": f"{x:.2f}",
             "cost-model speedup": f"{D.chain_speedup(alpha, x):.2f}×"} for dt, x in v.items()]
    rows += [{"machine": "2-core AMD EPYC, AVX2 only (docs/dtype.md, under load)", "dtype": dt, f"v({D.K})": f"{x:.1f}",
              "cost-model speedup": f"{D.chain_speedup(alpha, x):.2f}×"} for dt, x in D.AVX2_MEASURED.items()]
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    st.caption(f"Measured: {exp}. Speedup: the cost model's E[τ] ÷ v({D.K}) for a chain of {D.K} free drafts (c = 0, "
               f"as for copying) kept at α = {alpha:.2f}, so only v differs between the rows. "
               f"What `--dtype auto` chose for this target: {tgt.dtype_reason or 'not recorded'}.")
    st.markdown("The same drafts, the same α: one dtype makes speculation pay several times over, the other can make "
                "it slower than plain decoding. A speedup quoted without its machine and dtype is half a fact; "
                "`--dtype auto` times both on first use and keeps the faster one for speculation (docs/metrics.md).")
