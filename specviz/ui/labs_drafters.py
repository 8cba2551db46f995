"""Break-even's lab: sizing a drafter by measurement (lessons.md concept 20). The target's own first N layers for
several N, the shipped drafter and the heads run on one prompt; α, c and speedup measured for each and placed on the
break-even chart. Computations in teach/drafters.py; the chart in viz/breakeven.py."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from specviz.core import costmodel as be, fmt as F
from specviz.core.errors import InputError
from specviz.engine.measure import quote
from specviz.engine.workloads import NOVEL, of_kind
from specviz.teach import drafters as D
from specviz.teach.guess import Guess
from specviz.teach.roofline import parse_sizes
from specviz.ui import guess as G, loading
from specviz.viz import breakeven as vb

ss = st.session_state


def _drafters(tgt) -> list[D.Drafter] | None:
    """The drafters the learner asked for: the self-drafters' N from the text box, then the shipped ones."""
    usable, _, _ = loading.usable_methods(tgt)
    L = int(tgt.model.config.num_hidden_layers)
    text = st.text_input(f"Self-drafters: how many of the target's first layers each runs (1 to {L - 1}, "
                         "separated by commas)", ", ".join(map(str, D.self_layers(L))), key="ds_layers")
    try:
        ns = parse_sizes(text, 1, max(1, L - 1), "layer counts")
    except InputError as e:
        st.error(str(e))
        return None
    return D.drafters(tgt, usable, shares=tuple(n / L for n in ns))


def sizing_section(k: int, v: be.VCost, v_text: str) -> None:
    tgt = G.opening(
        "Sizing a drafter by measurement",
        "More of the network drafts better and costs more. Here the same prompt runs with drafters of "
        "increasing cost: the target's own first N layers and its output layer (no training, no extra weights, "
        "only their own KV cache), the shipped 2-layer draft model, and the EAGLE head where they load. Each is "
        "measured for α, c and speedup against plain decoding, and placed on the break-even chart. Guess which "
        "is fastest.")
    if tgt is None:
        return
    ds = _drafters(tgt)
    if ds is None:
        return
    w = of_kind(NOVEL)[0]
    tokens, repeats = (6, 1) if loading.TINY else (24, 3)
    words = D.describe(ds, w.name, k, tokens, repeats)
    FAST = Guess("the fastest drafter on this prompt", "fastest", choices=tuple(d.label for d in ds), experiment=words)
    drafter = loading.usable_methods(tgt)[2]
    got = G.lab("ds_fast", FAST, "Lock in my guess and run every drafter",
                lambda step: (D.measure_drafters(tgt, ds, w, k, tokens, repeats, drafter, progress=step), words),
                "ds_rows", f"Commit to a guess, then run: {words}.", run_key="ds_run")
    if got is None:
        return
    rows, ran = got
    show(rows, ran, k, v, v_text, FAST)


def show(rows: list[D.Row], ran: str, k: int, v: be.VCost, v_text: str, guess: Guess) -> None:
    answer = D.verdict(rows)
    G.show("ds_fast", guess, answer)
    same = answer["fastest"] == answer["most accurate"]
    st.markdown(f"Fastest: **{answer['fastest']}**. Highest α: **{answer['most accurate']}**"
                + (" — here the same drafter." if same else " — not the fastest: its α costs more time than it saves."))
    need = D.breakeven(rows, k, v)
    st.plotly_chart(vb.drafters_figure({r.drafter.label: (r.c, r.alpha, r.speedup) for r in rows}, k, v),
                    width="stretch", key="ds_fig")
    st.dataframe(pd.DataFrame([{
        "drafter": r.drafter.label, "α (kept ÷ tested)": F.num(r.alpha),
        "c measured": f"{r.c:.2f}", "c priced from its parameters": F.num(r.drafter.priced_c),
        "τ": f"{r.tau:.2f}", "speedup": quote(r.speedup, r.spread, r.repeats),
        f"break-even α (k = {k})": "never pays" if need[r.drafter.label] is None else f"{need[r.drafter.label]:.2f}"}
        for r in rows]), hide_index=True, width="stretch")
    st.caption(f"The run: {ran}; {loading.target_label()}. c = median draft time per drafted token ÷ the plain step "
               "of the same repeat; speedup = tokens/s ÷ plain's tokens/s in the same repeat, median over repeats, end "
               f"to end (prefill included); the curves are the cost model E[τ] ÷ (v(k) + k·c) with v from {v_text}. "
               "A self-drafter's priced c is the share of a pass's weights it reads, its layers plus the output layer "
               "(core/costmodel.py truncation_cost); the measured c adds the per-call overhead of its k serial "
               "passes. " + loading.machine_caption() + " (other work on the machine moves every figure).")
    st.markdown("**Reading it.** A drafter pays only where its star sits above 1 and right of its own break-even "
                "dot. Cutting the target short keeps its output layer, which alone is a large share of a small "
                "model's pass, so even one layer is not cheap, and the early layers' states are not yet what the "
                "output layer reads: α stays low until most of the network runs, and by then c is close to 1. "
                "A drafter trained for the job (the 2-layer model, the head) reaches a useful α at a fraction of the "
                "cost: size it by the α and c you measure, not by its parameter count.")
