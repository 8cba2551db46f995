"""Derivations' lab 5: acceptance against temperature and top-p, and mismatched warping drifting from p.
Computations in teach/ and core/; charts in viz/."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from specviz.core import fmt as F
from specviz.core.errors import InputError, ModelError
from specviz.teach.guess import Guess
from specviz.ui import guess as G, loading
from specviz.ui.links import BIND
from specviz.viz import lab as V

ss = st.session_state


# -- Derivations: temperature and warping (lab 5) ------------------------------------------------------------
def temperature_section() -> None:
    """Acceptance against T and top-p for the drafter, the heads and lookup on one prompt, measured; guess first."""
    from specviz.engine.workloads import WORKLOADS
    from specviz.teach import temperature as TT

    tgt = G.opening(
        "Acceptance against temperature, measured",
        "p and q are always warped alike here (one function, core/sampling.py). Does the chance a tested draft "
        "is kept fall as T rises for every proposer?", sub=True)
    if tgt is None:
        return
    methods, _, drafter = loading.usable_methods(tgt)
    heads = [m for m in ("eagle", "medusa", "eagle3") if m in methods][:1]
    chosen = [m for m in ("draft", *heads, "lookup") if m in methods]
    names = [w.name for w in WORKLOADS]
    wname = st.selectbox("Workload", names, index=names.index("story") if "story" in names else 0, key="tt_work",
                         bind=BIND)
    w = next(x for x in WORKLOADS if x.name == wname)
    tokens = 8 if loading.TINY else 24
    first = chosen[0]
    g = Guess(f"how {first}'s α changes from T = 0 to T = {TT.TEMPS[-1]:g}", "trend",
              choices=("falls", "rises", "about the same"), experiment=TT.experiment([first], w, tokens))
    got = G.lab("tt_trend", g, "Lock in my guess and sweep T and top-p",
                lambda progress: (first, TT.sweep(tgt, chosen, w, tokens, drafter=drafter, progress=progress), w.name),
                "tt_rows", f"Guess first, then sweep: {TT.experiment(chosen, w, tokens)}.",
                say="Cannot measure: {}", errors=(InputError, ModelError, ValueError))
    if got is None:
        return
    first_m, rows, _ = got
    G.show("tt_trend", g, {"trend": TT.trend(rows, first_m)})
    st.plotly_chart(V.alpha_vs_temperature(rows, TT.TEMPS), key="tt_fig")
    st.dataframe(pd.DataFrame([{"method": r["method"], "T": r["T"], "top-p": r["top_p"], "α": F.num(r["alpha"]),
                                "α̂": F.num(r["alpha_hat"]), "τ": f"{r['tau']:.2f}", "tested": r["tested"]}
                               for r in rows]), hide_index=True, width="stretch")
    said = [f"{m}: no draft tested at one end, so no trend" if TT.trend(rows, m).startswith("not measured")
            else f"{m}'s α **{TT.trend(rows, m)}** from T = 0 to {TT.TEMPS[-1]:g}"
            for m in dict.fromkeys(r["method"] for r in rows)]
    st.markdown("Measured: " + "; ".join(said) + ".")
    st.caption("One short run per point, so a point moves by a few hundredths between runs. At T = 0 a draft is "
               "kept when it is the target's argmax; as T rises the rule keeps Σ min(p, q): usually less, since "
               "the tails now count, but more where the drafter's top token was not the target's. Lookup's q is "
               "one-hot, so it keeps a draft with probability p(x), which falls as p flattens.")


WARP = G.tv_guess("the output's total variation distance from p at T (0 to 1)")


def warping_section() -> None:
    """Mismatched warping on toy logits: the closed form and the counted output against p at T; guess first."""
    import torch

    from specviz.core import warping as W

    st.subheader("Mismatched warping: the commonest sampling bug")
    st.write("Temperature and top-p must shape p and q alike, and the verifier must be handed the very q the draft "
             "was drawn from. Pick a mismatch and count where the output lands.")
    for name, text in W.CASES.items():
        st.caption(f"**{name}** — {text}")
    c = st.columns([2, 2, 1, 1])
    ss.setdefault("wp_zp", "2.0, 1.0, 0.5, 0.0, -1.0")
    ss.setdefault("wp_zq", "1.0, 2.0, 0.0, 0.5, -1.0")
    c[0].text_input("target logits (A, B, …)", key="wp_zp", bind=BIND)  # bound: the page's link carries them
    c[1].text_input("draft logits", key="wp_zq", bind=BIND)
    t = c[2].number_input("temperature T", 0.05, 2.0, 0.7, 0.05, key="wp_t", bind=BIND)
    top_p = c[3].number_input("top-p", 0.05, 1.0, 1.0, 0.05, key="wp_topp", bind=BIND)
    case = st.radio("Warping", list(W.CASES), key="wp_case", bind=BIND)
    try:
        zp, zq = (torch.tensor([float(x) for x in ss[k].replace(";", ",").split(",") if x.strip()])
                  for k in ("wp_zp", "wp_zq"))
        if len(zp) != len(zq) or not 2 <= len(zp) <= 8:
            raise InputError(f"give 2 to 8 logits for each, as many for the target as for the draft "
                             f"(got {len(zp)} and {len(zq)})")
        w = W.setup(zp, zq, float(t), float(top_p), case)
    except ValueError:
        st.error("The logits must be numbers separated by commas, e.g. 2.0, 1.0, 0.5")
        return
    except InputError as e:
        st.error(str(e))
        return
    trials = 500 if loading.TINY else 6000
    sim = G.lab("wp_tv", replace(WARP, experiment=f"{case}, T = {float(t):g}, top-p = {float(top_p):g}"),
                "Lock in my guess and draw",
                lambda _: {"w": w, "case": case, "counts": W.simulate(w, trials, seed=0), "trials": trials}, "wp_sim",
                "Commit to a guess, then draw: every draw goes through specviz's verifier (core/verify.py).",
                run_key="wp_run", errors=(), bar=None)
    if sim is None:
        return
    sw, tr = sim["w"], sim["trials"]
    law, freq = W.output(sw), sim["counts"] / tr
    G.show("wp_tv", WARP, {"tv": W.tv(law, sw.target)})
    labels = [chr(ord("A") + i) for i in range(len(sw.target))]
    st.plotly_chart(V.warped_output(freq, sw.target, law, labels, tr, sim["case"]), key="wp_fig")
    st.markdown(f"**{sim['case']}**: the output follows ({', '.join(f'{x:.3f}' for x in law.tolist())}) in closed "
                f"form, **{W.tv(law, sw.target):.3f}** from p at T; counted over {tr} draws, "
                f"**{W.tv(freq, sw.target):.3f}**.")
    if sim["case"] != W.MATCHED and W.tv(law, sw.target) > 0.01:
        st.warning("The verifier is exact only for the p and q it is handed. Build both with one function from the "
                   "same settings (specviz: core/sampling.py `logits_to_probs`), and hand it the q the draft was "
                   "really drawn from.")
