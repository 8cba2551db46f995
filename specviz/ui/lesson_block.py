"""The lesson "token-wise verification is not optimal" (lessons.md concept 19), on Derivations: the paper's toy
example by hand, then block against token-wise verification on real sampled runs of one chain method at the same
seeds, after a guess. The logic is teach/blockverify.py (weights from core/block.py), the charts viz/lessons.py."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from specviz.core import fmt as F
from specviz.core.errors import InputError
from specviz.engine.workloads import NOVEL, of_kind
from specviz.teach import blockverify as B
from specviz.ui import guess as G, loading
from specviz.viz import lessons as VL


def section() -> None:
    st.markdown(
        "Token-wise verification tests draft 1, then draft 2, …, and stops at the first rejection. **Block "
        "verification** (Sun et al. 2024, arXiv 2403.10444) looks at the whole chain before it decides: a draft "
        "whose own test would fail can still be kept when the drafts after it are backed strongly enough by the "
        "target. It stays exactly lossless (the correction is drawn from a residual scaled by how much of the "
        "block the target backs), and it never keeps fewer drafts in expectation. vLLM offers it as "
        "`rejection_sample_method: \"block\"`.")
    _toy()
    _measured()


def _toy() -> None:
    st.markdown(
        "**By hand: the paper's toy example.** Two tokens A and B; whatever came before, the target says "
        f"p = ({B.TOY_P[0]:.3g}, {B.TOY_P[1]:.3g}) and the drafter q = ({B.TOY_Q[0]:.3g}, {B.TOY_Q[1]:.3g}); "
        f"k = {B.TOY_K} drafts. For each draft: token-wise keeps X₁ with chance min(1, p/q), then X₂ with chance "
        "min(1, p/q) again. Block computes p_i = min(1, p_(i−1)·p(X_i)/q(X_i)), how much of the block up to i the "
        "target backs, and h_i, the weight of stopping after i (h_k = p_k; for i < k it weighs the residual mass a "
        "correction after X_i could draw on against 1 − p_i); it keeps the last i whose uniform falls under h_i.")
    rows = B.toy_rows()
    table = pd.DataFrame([{**r, "q(draft)": B.as_fraction(r["q(draft)"]), "token": round(r["token"], 3),
                           "block": round(r["block"], 3)} for r in rows]).drop(columns=["backed only"])
    st.dataframe(table.rename(columns={"token": "token-wise keeps", "block": "block keeps"}), hide_index=True,
                 width="stretch")
    t, b = B.expected_kept(rows, "token"), B.expected_kept(rows, "block")
    st.plotly_chart(VL.toy_figure(rows), key="bv_toy_fig")
    st.markdown(f"Weighted by q(draft): token-wise keeps **{B.as_fraction(t)} = {t:.3f}** drafts per step, block "
                f"**{B.as_fraction(b)} = {b:.3f}** (τ = 1 + that: {1 + t:.3f} against {1 + b:.3f}). The gain is all "
                "in draft AB: token-wise rejects A (p/q = ½) half the time and never looks at B, which the target "
                "backs twice over; block sees that together they are backed fully (p₂ = 1) and keeps both. It "
                "pays a little in AA, where stopping early leaves room for the correction.")


def _measured() -> None:
    ss = st.session_state
    st.markdown("**Now on the real model.** The same chain method and the same seeds, verified both ways.")
    offered = [m for m in B.CHAIN_METHODS if m in loading.methods_offered()]
    if not offered:
        st.info("No chain drafter with a real q (a draft model or trained heads) is available for this target.")
        return
    ss.setdefault("bv_seeds", "1, 2" if loading.TINY else "1, 2, 3")
    c = st.columns([1, 2, 1, 1, 1])
    method = c[0].selectbox("Method", offered, key="bv_method")
    work = c[1].selectbox("Workload (novel)", [w.name for w in of_kind(NOVEL)], key="bv_work")
    k = c[2].number_input("k", min_value=1, max_value=8, value=4, step=1, key="bv_k")
    new = c[3].number_input("Max new tokens", min_value=4, max_value=128, value=12 if loading.TINY else 48, step=4,
                            key="bv_new")
    seeds_text = c[4].text_input("Seeds", key="bv_seeds", help="whole numbers, comma-separated")
    try:
        ex = B.plan(method, work, int(k), int(new), parse_seeds(seeds_text))
    except InputError as e:
        st.error(f"Check the settings: {e}")
        return
    g = B.guess(ex)
    if G.ask_and_lock("bv_more", g, "Lock in my guess and run both ways", type="primary"):
        target = loading.target()
        if target is not None:
            dm = loading.first_drafter() if method == "draft" else None
            with G.measuring("Cannot run: {}", bar="decoding…") as step:
                m = B.run(target, ex, dm, progress=step)
                ss["bv_out"] = {"m": m, "describe": ex.describe(), "caption": loading.machine_caption(target)}
    out = ss.get("bv_out")
    if out:
        _show(out, g)


def parse_seeds(text: str) -> tuple[int, ...]:
    """'1, 2, 3' -> (1, 2, 3); InputError naming the first entry that is not a whole number >= 0."""
    parts = [x.strip() for x in str(text).split(",") if x.strip()]
    for x in parts:
        if not x.isdigit():
            raise InputError(f"seeds must be whole numbers >= 0, comma-separated; '{x}' is not")
    if not parts or len(parts) > 8:
        raise InputError(f"give 1 to 8 seeds, got {len(parts)}")
    return tuple(int(x) for x in parts)


def _show(out: dict, g) -> None:
    m = out["m"]
    G.show("bv_more", g, B.truth(m))
    c = st.columns(3)
    c[0].metric("τ token-wise (median over seeds)", f"{m.tau['token']:.3f}")
    c[1].metric("τ block (median over seeds)", f"{m.tau['block']:.3f}")
    c[2].metric("block ÷ token-wise", F.num(m.tau["block"] / m.tau["token"] if m.tau["token"] else None, ".3f"))
    st.plotly_chart(VL.block_runs_figure(m.rows, out["describe"]), key="bv_runs_fig")
    st.dataframe(m.rows, hide_index=True, width="stretch")
    st.caption(f"{out['describe']}. {out['caption']}. Each seed's two runs part after the first step where they "
               "keep different drafts, so their texts differ; over a few seeds the gap is noisy.")
    if m.paired_steps:
        st.markdown(f"**The same drafts, the same uniforms.** Inside the block runs, each step also records what "
                    f"token-wise verification would have kept with its uniforms: over {m.paired_steps} drafting "
                    f"steps, block kept **{m.paired_block}** drafts, token-wise would have kept "
                    f"**{m.paired_token}**. Block never keeps fewer on average, but on one step it can (it may "
                    "stop early to leave room for the correction).")
