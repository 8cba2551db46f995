"""Guess-first labs on cost: break-even per proposer family (Break-even) and the tree calculator (Trees; lab 1,
second half). Computations in teach/ and core/; charts in viz/."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from specviz.core import costmodel as be
from specviz.engine.methods import REGISTRY
from specviz.teach import families as F
from specviz.teach.guess import Guess
from specviz.ui import guess as G, loading, state
from specviz.viz import breakeven as vb

ss = st.session_state


# -- Break-even: per family, side by side ------------------------------------------------------------------
def families_section(k: int, v: be.VCost, v_text: str) -> None:
    """Guess each family's break-even α, measure the drafter's and the heads' c, then one chart for all."""
    tgt = G.opening(
        "Break-even per family, side by side",
        f"The same cost model for every kind of proposer, at k = {k} and v from {v_text}; only c differs. "
        "Guess each family's break-even α first: the α below which it is slower than plain decoding.")
    if tgt is None:
        return
    methods, _, drafter = loading.usable_methods(tgt)
    measured = [m for m in F.MEASURED if m in methods]
    n_layers = int(tgt.model.config.num_hidden_layers)
    used = st.number_input(f"Layer truncation: layers the drafter runs (N of L = {n_layers})", 1, max(1, n_layers - 1),
                           max(1, n_layers // 2), key="fam_n")
    names = [F.LOOKUP, *measured, F.TRUNCATION]
    tokens = 6 if loading.TINY else 24
    plan = F.cost_plan(measured, k, tokens)      # the runs measure_costs makes; its describe() names them
    run_words = plan.describe() if measured else "no drafter or heads load here, so none is run"
    own = {F.TRUNCATION: "c from the model's parameters", F.LOOKUP: "c = 0"}
    c_from = lambda n: own.get(n) or f"c from {replace(plan, settings=(plan.setting(n),)).describe()}"  # noqa: E731
    asked = {n: Guess(f"break-even α, {n}", n, lo=0.0, hi=1.0, step=0.05, rel=0.0, abs_tol=0.05,
                      experiment=f"k = {k}, v from {v_text}; {c_from(n)}") for n in names}
    guesses = {}
    for col, name in zip(st.columns(len(names)), names):
        with col:
            guesses[name] = G.ask(f"fam_{name}", asked[name])
    if st.button("Lock in my guesses and measure c", type="primary", key="fam_run") and all(
            G.lock(f"fam_{n}", guesses[n]) for n in names):
        with G.measuring() as progress:
            ss["fam_c"] = F.measure_costs(tgt, drafter, plan, progress=progress)
    if "fam_c" not in ss:
        st.info(f"Commit to a guess for every family, then measure: {run_words}.")
        return
    fams = F.families({m: c for m, c in ss["fam_c"].items() if m in measured},
                      F.truncation(F.layer_params(tgt.model), int(used)))
    alphas = F.breakevens(fams, k, v)
    for col, name in zip(st.columns(len(names)), names):   # each score under its own family's guess
        with col:
            st.caption(f"**{name}**")
            G.show(f"fam_{name}", asked[name], {name: alphas.get(name)})
    st.plotly_chart(vb.families_figure({f.name: f.c for f in fams}, k, v), width="stretch", key="fam_fig")
    st.dataframe(pd.DataFrame([{"family": f.name, "c": f"{f.c:.3f}", "how c was found": f.source,
                                "break-even α": "pays at any α" if alphas[f.name] == 0.0 else
                                "never pays" if alphas[f.name] is None else f"{alphas[f.name]:.2f}"} for f in fams]),
                 hide_index=True, width="stretch")
    st.caption(f"Measured c: {run_words}, on {loading.target_label()}. One cost model (core/costmodel.py, "
               "breakeven_alpha): speedup = E[τ] ÷ (v(k) + k·c). Lookup's c is "
               "taken as 0; truncation's is priced from the weights its draft pass reads (its layers and the output "
               "layer, over a full pass's), the worst case for layer skipping (training-free self-speculation skips "
               "chosen middle layers instead). A method's real α is on Step through or Compare.")


# -- Trees: the tree calculator (lab 1, second half) ---------------------------------------------------------
TREE_NODES_MAX = 24


def tree_calculator_section(workload, depth: int, new: int, temperature: float) -> None:
    """E[τ] of a tree from measured per-rank acceptance; which shape wins at a node budget; a tree's own
    break-even. Guess the winning shape first."""
    from specviz.core import treecalc as TC
    from specviz.engine.experiment import Experiment, Setting

    st.subheader("Tree calculator: which shape keeps the most per pass?")
    st.markdown("A tree's step keeps one path. With **b_j** = the chance that the j-th child tried is the one kept "
                "(measured from a run), the path to a node is kept with the product of b along it, and "
                "**E[τ] = 1 + Σ over nodes of P(the path to the node is kept)**. A chain is the tree whose nodes "
                "are all first children: the chain law with α = b₀. EAGLE-2 and Sequoia pick, for a budget of n "
                "nodes, the tree with the highest E[τ]; a pass over n nodes costs v(n), as a chain of n would.")
    tree_methods = [m for m in loading.methods_offered() if REGISTRY[m].tree]
    c = st.columns([2, 1, 1])
    method = c[0].selectbox("Measure b_j on", tree_methods, key="tc_method")
    ss.setdefault("tc_n", 8)
    n = c[1].number_input("node budget n", step=1, key="tc_n", help=f"1 to {TREE_NODES_MAX}")
    cost = c[2].number_input("c per drafted node", 0.0, 2.0, 0.0, 0.01,
                             key="tc_c",
                             help="draft cost per node in plain steps: suffix ≈ 0; heads: measure it on Step through")
    if not 1 <= int(n) <= TREE_NODES_MAX:
        st.error(f"The node budget must be between 1 and {TREE_NODES_MAX}, got {int(n)}.")
        return
    n = int(n)
    ran = Experiment((Setting.resolve(method, int(depth)),), (workload.name,), int(new), float(temperature),
                     against_plain=False)      # the run measure_b makes
    experiment = f"b_j from {ran.describe()}; n = {n} nodes"
    shape_g = Guess(f"which shape keeps the most tokens per pass at n = {n}", "winner", choices=tuple(TC.SHAPES),
                    experiment=experiment)
    run = G.lab("tc_shape", shape_g, "Lock in my guess and measure b_j", lambda _: measure_b(ran, workload, experiment),
                "tc_run", "Guess which shape wins, then measure: one run gives b_j, the calculator does the rest.",
                errors=(), bar=None)    # measure_b says its own errors
    if run is None:
        return
    if not run["b"] or run["b"][0] == 0.0:
        st.info(f"{run['method']} kept no node in this run ({run['experiment']}): nothing to build a tree from. "
                "Try another workload or more new tokens.")
        return
    tree_result(run, n, float(cost), shape_g)


def measure_b(ran, workload, experiment: str) -> dict | None:
    """Run `ran` (an Experiment of one tree method) once: b_j, its trees and τ for the calculator (None, after an
    error, when it did not run)."""
    from specviz.core import treecalc as TC
    from specviz.engine import measure
    from specviz.engine.decode import DecodeConfig
    from specviz.engine.methods import encode_prompt

    tgt = loading.target()
    if tgt is None:
        return None
    method = ran.settings[0].method
    with G.measuring("Cannot run " + method + ": {}", G.ERRORS + (ValueError,), spinner=f"decoding with {method}…"):
        ids = encode_prompt(tgt.tokenizer, workload.prompt, workload.chat)
        cfg = DecodeConfig(k=ran.settings[0].k, max_new_tokens=ran.new_tokens, sampling=ran.sampling, record=False)
        summary, steps = measure.run(tgt, loading.proposer_for(method, tgt), ids, cfg,
                                     eos_token_id=tgt.tokenizer.eos_token_id)
        return {"method": method, "experiment": experiment, "tau": summary.tokens_per_pass, "alpha": summary.alpha,
                "b": TC.rank_acceptance(steps), "own": [s.parents for s in steps if s.parents], "passes": len(steps)}
    return None


def tree_result(run: dict, n: int, cost: float, shape_g) -> None:
    """The measured b_j on the calculator: the guess scored, E[τ] on the run's own trees, every shape at n nodes."""
    from specviz.core import treecalc as TC

    b = run["b"]
    v = state.v_table_if_measured() or 1.0
    v_text = "the measured v(k) table" if isinstance(v, dict) else "v = 1 (measure v(k) on the Break-even page)"
    shapes = {name: make(n) for name, make in TC.SHAPES.items()}
    taus = {name: TC.expected_tau(ps, b) for name, ps in shapes.items()}
    G.show("tc_shape", shape_g, {"winner": max(taus, key=taus.get)})
    shapes["best tree (grown)"] = TC.best_tree(b, n)
    own = [TC.expected_tau(ps, b) for ps in run["own"]]
    st.markdown(f"Measured ({run['experiment']}): b = (" + ", ".join(f"{x:.2f}" for x in b[:6]) + ")"
                + (" …" if len(b) > 6 else "") + f". On the run's own trees the calculator gives E[τ] = "
                f"**{sum(own) / max(1, len(own)):.2f}** (mean over its {len(own)} tree steps) against the measured "
                f"τ = **{run['tau']:.2f}** over {run['passes']} passes (steps that drafted nothing count as τ = 1).")
    rows = []
    for name, ps in shapes.items():
        s_ = TC.speedup(ps, b, float(cost), v)
        a0 = TC.breakeven_scale(ps, b, float(cost), v)
        rows.append({"shape": name, "depth": TC.depth(ps), "E[τ]": f"{TC.expected_tau(ps, b):.2f}",
                     "predicted speedup": f"{s_:.2f}×",
                     "break-even b₀": "pays at any b" if a0 == 0.0 else "never pays" if a0 is None
                     else f"{a0 * b[0]:.2f}"})
    st.dataframe(rows, hide_index=True, width="stretch")
    st.caption(f"Speedup = E[τ] ÷ (v(n) + n·c), with {v_text} and c = {float(cost):g}. Break-even b₀: the first "
               "child's acceptance (the others scaled with it) below which the tree slows decoding down — the "
               "tree's own break-even figure; the chain law's (Break-even page) describes only the chain row."
               + (f" The chain law with this run's α = {run['alpha']:.2f} (kept ÷ tested) would give "
                  f"{be.expected_tokens_per_pass(run['alpha'], n):.2f} for a chain of {n}: α counts every "
                  "sibling tried, so it is not b₀." if run.get("alpha") is not None else ""))
    st.caption("Best tree (grown): parents " + str(shapes["best tree (grown)"]) + " (−1 = the root).")
