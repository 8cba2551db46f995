"""Three guess-first lab sections drawn on their pages with one call each: lossy rules (Is it lossless?), break-even
per family (Break-even), batch size and the roofline (Serving reality). Computations in teach/; charts in viz/."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from specviz.core import costmodel as be
from specviz.core.errors import InputError, ModelError
from specviz.engine.methods import REGISTRY
from specviz.teach import families as F, lab as L, lossy as Y, notes as NOTES, reality as R
from specviz.teach.guess import Guess
from specviz.ui import guess as G, loading, state
from specviz.viz import breakeven as vb, lab as V

ss = st.session_state


# -- Is it lossless?: lossy rules, labelled ------------------------------------------------------------------
DRIFT = Guess("TV distance from p of the output under Medusa's typical acceptance (0 to 1)", "drift", lo=0.0, hi=1.0,
              step=0.05, rel=0.0, abs_tol=0.05)


def lossy_section(p, q) -> None:
    """The part-1 toy p and q under two lossy rules: drift from p, drafts kept and E[τ] bought, draws to check."""
    st.header("Lossy rules, labelled")
    st.write("A third kind of broken rule, offered on purpose: papers and servers relax the test to keep more drafts. "
             "They are **lossy** — the output no longer follows p. How far it drifts, and how much τ it buys, "
             "depends on p, q and the thresholds.")
    for name, text in Y.RULES.items():
        st.caption(f"**{name}** — {text}")
    c = st.columns(4)
    eps = c[0].number_input("ε (Medusa)", 0.0, 1.0, Y.DEFAULTS[Y.TYPICAL]["eps"], 0.01, key="ly_eps",
                            help="posterior_threshold in Medusa's code; 0.09 there by default")
    delta = c[1].number_input("δ (Medusa)", 0.0, 1.0, Y.DEFAULTS[Y.TYPICAL]["delta"], 0.05, key="ly_delta",
                              help="posterior_alpha in Medusa's code; 0.3 there by default")
    single = c[2].number_input("t_single (SGLang)", 0.0, 1.0, Y.DEFAULTS[Y.THRESHOLD]["single"], 0.05,
                               key="ly_single", help="--speculative-accept-threshold-single; 1.0 by default (exact)")
    acc = c[3].number_input("t_acc (SGLang)", 0.01, 1.0, Y.DEFAULTS[Y.THRESHOLD]["acc"], 0.05, key="ly_acc",
                            help="--speculative-accept-threshold-acc; 1.0 by default (exact)")
    params = {Y.TYPICAL: {"eps": eps, "delta": delta}, Y.THRESHOLD: {"single": single, "acc": acc}}
    guess = G.ask("ly_drift", DRIFT)
    if st.button("Lock in my guess and draw under each rule", type="primary", key="ly_run") \
            and G.lock("ly_drift", guess):
        trials = 2000 if loading.TINY else 20000
        ss["ly_sim"] = (p, q, params, {r: Y.simulate(p, q, r, params[r], trials) for r in Y.RULES}, trials)
    sim = ss.get("ly_sim")
    if sim is None:
        st.info("Commit to a guess, then draw: the table shows each rule's drift from p and the τ it buys.")
        return
    sp, sq, sparams, draws, trials = sim
    rows = []
    for r, (counts, kept) in draws.items():
        s = Y.summary(sp, sq, r, sparams[r])
        tv = 0.5 * float((counts / trials - sp).abs().sum())
        rows.append({"rule": f"{r} (lossy)", "TV from p, counted": f"{tv:.3f}",
                     "TV from p, closed form": f"{s['drift']:.3f}", "drafts kept": f"{kept / trials:.3f}",
                     f"E[τ] at k = {s['k']}": f"{s['tau']:.2f}"})
    ex = Y.summary(sp, sq, Y.TYPICAL, sparams[Y.TYPICAL])
    rows.append({"rule": "exact (lossless)", "TV from p, counted": "→ 0 (part 1)", "TV from p, closed form": "0.000",
                 "drafts kept": f"{ex['kept_exact']:.3f}", f"E[τ] at k = {ex['k']}": f"{ex['tau_exact']:.2f}"})
    G.show("ly_drift", DRIFT, {"drift": ex["drift"]})
    st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    st.caption(f"{trials} draws per rule on part 1's p and q (one draft x ~ q each). E[τ] is the cost model's "
               "law at the rule's keep rate, as if every position kept drafts at that rate. SGLang's rule ignores "
               "q: it keeps x with p(x)/t_acc, so with q close to p it can keep fewer drafts than the exact rule; "
               "at t_single = t_acc = 1 (its defaults) it is exact.")
    st.markdown(NOTES.WARPED)


def lossy_on_real(real) -> None:
    """The two lossy rules on part 2's real p and q (its reduced vocabulary), at the lossy section's thresholds."""
    red = real[3]
    sparams = {Y.TYPICAL: {"eps": ss.get("ly_eps", Y.DEFAULTS[Y.TYPICAL]["eps"]),
                           "delta": ss.get("ly_delta", Y.DEFAULTS[Y.TYPICAL]["delta"])},
               Y.THRESHOLD: {"single": ss.get("ly_single", Y.DEFAULTS[Y.THRESHOLD]["single"]),
                             "acc": ss.get("ly_acc", Y.DEFAULTS[Y.THRESHOLD]["acc"])}}
    st.markdown(f"**The lossy rules on this p and q** (over the {len(red.ids)} ids the draws use, thresholds as in "
                "*Lossy rules, labelled*): " + "; ".join(
                    f"{r}: drift **{x['drift']:.3f}** from p, keeps **{x['kept']:.3f}** (exact {x['kept_exact']:.3f})"
                    for r, x in ((r, Y.summary(red.p, red.q, r, sparams[r])) for r in Y.RULES)) + ".")


# -- Break-even: per family, side by side ------------------------------------------------------------------
def families_section(k: int, v: be.VCost, v_text: str) -> None:
    """Guess each family's break-even α, measure the drafter's and the heads' c, then one chart for all."""
    st.header("Break-even per family, side by side")
    st.write(f"The same cost model for every kind of proposer, at k = {k} and v from {v_text}; only c differs. "
             "Guess each family's break-even α first: the α below which it is slower than plain decoding.")
    tgt = loading.target()
    if tgt is None:
        return
    methods, _, drafter = loading.usable_methods(tgt)
    measured = [m for m in F.MEASURED if m in methods]
    n_layers = int(tgt.model.config.num_hidden_layers)
    used = st.number_input(f"Layer truncation: layers the drafter runs (N of L = {n_layers})", 1, max(1, n_layers - 1),
                           max(1, n_layers // 2), key="fam_n")
    names = [F.LOOKUP, *measured, F.TRUNCATION]
    tokens = 6 if loading.TINY else 24
    run_words = F.cost_experiment(k, tokens)
    asked = {n: Guess(f"break-even α, {n}", n, lo=0.0, hi=1.0, step=0.05, rel=0.0, abs_tol=0.05,
                      experiment=f"k = {k}, v from {v_text}"
                      + (f"; {run_words}" if n in measured else "; c from the model's parameters"
                         if n == F.TRUNCATION else "; c = 0"))
             for n in names}
    guesses = {}
    for col, name in zip(st.columns(len(names)), names):
        with col:
            guesses[name] = G.ask(f"fam_{name}", asked[name])
    if st.button("Lock in my guesses and measure c", type="primary", key="fam_run") and all(
            G.lock(f"fam_{n}", guesses[n]) for n in names):
        bar = st.progress(0.0, "measuring…")
        try:
            ss["fam_c"] = F.measure_costs(tgt, drafter, measured, k=k, tokens=tokens,
                                          progress=lambda f, t: bar.progress(f, t))
        except (InputError, ModelError) as e:
            st.error(str(e))
        bar.empty()
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
    alpha = c[0].slider("α", 0.0, 1.0, 0.8, 0.05, key="rf_alpha")
    cost = c[1].number_input("c (draft cost per token)", 0.0, 2.0, 0.05, 0.01, key="rf_c")
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


def tree_sampling_section() -> None:
    """Is it lossless?: sibling candidates tested in turn against the residual the rejected ones left; the
    output histogram against p; the broken version (every sibling against p) drifting. Guess first."""
    st.header("Tree sampling, by hand: EAGLE / top-k style")
    st.write("A tree drafts several candidates for one position (siblings). In EAGLE's and Medusa's trees they are "
             "the drafter's top-k tokens — chosen, distinct, not sampled — so each one's q is one-hot (SpecInfer's "
             "sampled siblings are the next section). The target tests them in turn: the first against p, each later "
             "one against the residual the rejected ones left, norm(max(0, r − onehot(c))) — p with the rejected "
             "candidates removed. If none is kept, the correction comes from the last residual.")
    t1, t2, t3 = st.columns([2, 1, 1])
    st.session_state.setdefault("tsb_p", L.PRESETS[L.CLEAR_PRESET][0])
    st.session_state.setdefault("tsb_cands", "E, D")
    t1.text_input("p over A…E (numbers, normalised for you)", key="tsb_p")
    t2.text_input("sibling candidates, in the order tried", key="tsb_cands", help="one to three of A…E, e.g. 'E, D'")
    tsb_rule = t3.radio("Rule", list(L.SIBLING_RULES), key="tsb_rule", help="\n\n".join(L.SIBLING_RULES.values()))
    try:
        tp = L.parse_dist(st.session_state["tsb_p"], "p")
        tc = L.parse_candidates(st.session_state["tsb_cands"], len(tp))
        ts = L.siblings(tp, tc, tsb_rule)
    except InputError as e:
        st.error(str(e))
        ts = None
    if ts is not None:
        t_labels = [chr(ord("A") + i) for i in range(len(tp))]
        SOME = Guess("P(some candidate is kept) (0 to 1)", "some_kept", lo=0.0, hi=1.0, step=0.05, rel=0.0,
                     abs_tol=0.05)
        tguess = G.ask("tsb_some", SOME)
        if st.button("Lock in my guess and draw", type="primary", key="tsb_run") and G.lock("tsb_some", tguess):
            counts, kept = L.simulate_siblings(tp, tc, 300 if loading.TINY else 6000, tsb_rule)
            st.session_state["tsb_sim"] = (st.session_state["tsb_p"], tc, tsb_rule, counts, kept)
        sim_t = st.session_state.get("tsb_sim")
        if sim_t and sim_t[0] == st.session_state["tsb_p"] and sim_t[1] == tc and sim_t[2] == tsb_rule:
            _, _, _, counts, kept = sim_t
            exact = L.siblings(tp, tc, "exact")
            G.show("tsb_some", SOME, {"some_kept": exact.some_kept if tsb_rule == "exact" else ts.some_kept})
            st.dataframe([{"candidate": t_labels[c], "tested against": ", ".join(f"{x:.2f}" for x in ts.residuals[j]),
                           "P(kept | reached)": f"{ts.keep[j]:.3f}"} for j, c in enumerate(tc)]
                         + [{"candidate": "(none kept)",
                             "tested against": ", ".join(f"{x:.2f}" for x in ts.residuals[-1]),
                             "P(kept | reached)": "the correction is drawn from this"}], hide_index=True)
            n_tr = int(counts.sum())
            freq = counts / n_tr
            cover = float(tp[tc].sum())
            st.plotly_chart(V.sibling_histogram(freq, tp, ts.output, t_labels, n_tr, tc), key="tsb_hist")
            tv = 0.5 * float((freq - tp).abs().sum())
            st.markdown(f"Kept in the draws: **{kept / n_tr:.3f}**; computed P(some candidate kept) = "
                        f"**{ts.some_kept:.3f}**" + (f", which is the p mass the candidates cover ({cover:.3f})."
                                                     if tsb_rule == "exact" else f" (the exact rule: {cover:.3f}).")
                        + f" The output is **{tv:.3f}** from p in total variation after {n_tr} draws.")
            if tsb_rule != "exact":
                st.warning("Testing every sibling against p keeps the later ones too rarely and the rest too often: "
                           f"the output follows {', '.join(f'{x:.3f}' for x in ts.output.tolist())}, "
                           f"{0.5 * float((ts.output - tp).abs().sum()):.3f} from p however many draws you make.")
            else:
                st.caption("The exact rule's draws go through specviz's own tree verifier (core/tree.py), a root with "
                           "the candidates as its children.")


# -- Is it lossless?: sampled siblings (lab 1, first half) ---------------------------------------------------
SIB = Guess("the output's total variation distance from p (0 to 1)", "tv", lo=0.0, hi=1.0, step=0.01, rel=0.0,
            abs_tol=0.03)


def sampled_siblings_section() -> None:
    """Siblings drawn from q in three ways and tested in turn through core/tree.py: the closed form of each
    mode's output and the counted one, guess first."""
    import inspect

    from specviz.core import siblings as S, tree as core_tree

    st.header("Sampled siblings: SpecInfer, SpecTr, and a drift")
    st.write("Now the siblings are *sampled* from the drafter's q, as SpecInfer and SpecTr do, not chosen. Each is "
             "tested in turn against what the rejected ones left. Whether the output still follows p depends on "
             "one thing: each sibling must be tested with the distribution it was really drawn from.")
    for name, text in S.MODES.items():
        st.caption(f"**{name}** — {text}")
    with st.expander("Show the code: the verifier these draws run through (core/tree.py, core/siblings.py)"):
        st.code(inspect.getsource(core_tree.verify_tree), language="python")
        st.code(inspect.getsource(S.draw_siblings) + "\n" + inspect.getsource(S._draw_and_test), language="python")
    c = st.columns([2, 2, 1, 1])
    ss.setdefault("ssb_p", "0.1, 0.6, 0.3")
    ss.setdefault("ssb_q", "0.6, 0.2, 0.2")
    ss.setdefault("ssb_n", 2)
    c[0].text_input("p over A, B, … (numbers, normalised for you)", key="ssb_p")
    c[1].text_input("q, the drafter's distribution", key="ssb_q")
    c[2].number_input("siblings", step=1, key="ssb_n", help="1 to 4")
    trials = c[3].select_slider("draws", [500, 2000, 6000, 20000], value=500 if loading.TINY else 6000,
                                key="ssb_trials")
    mode = st.radio("Draw mode", list(S.MODES), horizontal=True, key="ssb_mode")
    try:
        p, q = L.pair(ss["ssb_p"], ss["ssb_q"])
        n = int(ss["ssb_n"])
        law, kept = S.output_distribution(p, q, n, mode)
    except InputError as e:
        st.error(str(e))
        return
    experiment = f"{n} sibling{'s' if n != 1 else ''} drawn {mode}, p = ({ss['ssb_p']}), q = ({ss['ssb_q']})"
    guess = G.ask("ssb_tv", Guess(SIB.prompt, SIB.truth, lo=SIB.lo, hi=SIB.hi, step=SIB.step, rel=SIB.rel,
                                  abs_tol=SIB.abs_tol, experiment=experiment))
    if st.button("Lock in my guess and draw", type="primary", key="ssb_run") and \
            G.lock("ssb_tv", guess, Guess(SIB.prompt, SIB.truth, experiment=experiment)):
        counts, kept_n = S.simulate(p, q, n, mode, int(trials), seed=0)
        ss["ssb_sim"] = {"p": p, "q": q, "n": n, "mode": mode, "counts": counts, "kept": kept_n,
                         "trials": int(trials), "law": law.float(), "kept_law": kept}
    sim = ss.get("ssb_sim")
    if sim is None:
        st.info("Commit to a guess, then draw: every draw goes through specviz's tree verifier.")
        return
    sp, law_s, tr = sim["p"], sim["law"], sim["trials"]
    freq = sim["counts"] / tr
    tv_law = 0.5 * float((law_s - sp).abs().sum())
    tv_counted = 0.5 * float((freq - sp).abs().sum())
    G.show("ssb_tv", SIB, {"tv": tv_law})
    labels = [chr(ord("A") + i) for i in range(len(sp))]
    st.plotly_chart(V.sampled_siblings(freq, sp, law_s.tolist(), labels, tr, sim["mode"]), key="ssb_fig")
    st.markdown(f"**{sim['mode']}**, {sim['n']} siblings: the output follows "
                f"({', '.join(f'{x:.3f}' for x in law_s.tolist())}) in closed form, **{tv_law:.3f}** from p; "
                f"counted over {tr} draws it is **{tv_counted:.3f}** from p. Some sibling kept: "
                f"{sim['kept_law']:.3f} computed, {sim['kept'] / tr:.3f} counted.")
    rows = []
    for m in S.MODES:
        out_m, kept_m = S.output_distribution(sim["p"], sim["q"], sim["n"], m)
        rows.append({"draw mode": m, "output (closed form)": ", ".join(f"{x:.3f}" for x in out_m.tolist()),
                     "TV from p": f"{0.5 * float((out_m.float() - sp).abs().sum()):.3f}",
                     "P(some sibling kept)": f"{kept_m:.3f}"})
    st.dataframe(rows, hide_index=True, width="stretch")
    if sim["mode"] == S.UNADJUSTED:
        st.warning("Drawing without replacement changes what each later sibling was drawn from: the tokens already "
                   "drawn cannot come again. Testing it with the original q keeps the later siblings too often, and "
                   "more draws will not close that gap. Renormalise q (SpecTr) or draw i.i.d. (SpecInfer).")
    st.caption("Both lossless modes keep some sibling more often than one draft does (Σ min(p, q) = "
               f"{S.output_distribution(sim['p'], sim['q'], 1, S.IID)[1]:.3f} here): that is what extra siblings "
               "buy. Without replacement keeps more than i.i.d. when q is peaked: it never wastes a sibling on a "
               "token already rejected.")


# -- Trees: the tree calculator (lab 1, second half) ---------------------------------------------------------
TREE_NODES_MAX = 24


def tree_calculator_section(workload, depth: int, new: int, temperature: float) -> None:
    """E[τ] of a tree from measured per-rank acceptance; which shape wins at a node budget; a tree's own
    break-even. Guess the winning shape first."""
    from specviz.core import treecalc as TC
    from specviz.core.sampling import SamplingConfig
    from specviz.engine import measure
    from specviz.engine.decode import DecodeConfig
    from specviz.engine.methods import draft_cap, encode_prompt
    from specviz.teach.predict import mode_words

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
    mode = mode_words(temperature)
    cap = draft_cap(method, int(depth))
    shape = f"at most {cap} nodes a step (its own sizing)" if cap != int(depth) else f"depth ≤ {depth}"
    experiment = f"b_j from {method}, {mode}, {shape}, {new} new tokens, one run, on {workload.name}; n = {n} nodes"
    shape_g = Guess(f"which shape keeps the most tokens per pass at n = {n}", "winner", choices=tuple(TC.SHAPES),
                    experiment=experiment)
    if G.ask_and_lock("tc_shape", shape_g, "Lock in my guess and measure b_j", type="primary"):
        tgt = loading.target()
        if tgt is not None:
            try:
                ids = encode_prompt(tgt.tokenizer, workload.prompt, workload.chat)
                cfg = DecodeConfig(k=draft_cap(method, int(depth)), max_new_tokens=int(new),
                                   sampling=SamplingConfig(float(temperature)), record=False)
                with st.spinner(f"decoding with {method}…"):
                    summary, steps = measure.run(tgt, loading.proposer_for(method, tgt), ids, cfg,
                                                 eos_token_id=tgt.tokenizer.eos_token_id)
                ss["tc_run"] = {"method": method, "experiment": experiment, "tau": summary.tokens_per_pass,
                                "alpha": summary.alpha, "b": TC.rank_acceptance(steps),
                                "own": [s.parents for s in steps if s.parents], "passes": len(steps)}
            except (InputError, ModelError, ValueError) as e:
                st.error(f"Cannot run {method}: {e}")
    run = ss.get("tc_run")
    if run is None:
        st.info("Guess which shape wins, then measure: one run gives b_j, the calculator does the rest.")
        return
    b = run["b"]
    if not b or b[0] == 0.0:
        st.info(f"{run['method']} kept no node in this run ({run['experiment']}): nothing to build a tree from. "
                "Try another workload or more new tokens.")
        return
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


# -- Derivations: temperature and warping (lab 5) ------------------------------------------------------------
def temperature_section() -> None:
    """Acceptance against T and top-p for the drafter, the heads and lookup on one prompt, measured; guess first."""
    from specviz.engine.workloads import WORKLOADS
    from specviz.teach import temperature as TT

    st.subheader("Acceptance against temperature, measured")
    st.write("p and q are always warped alike here (one function, core/sampling.py). Does the chance a tested draft "
             "is kept fall as T rises for every proposer?")
    tgt = loading.target()
    if tgt is None:
        return
    methods, _, drafter = loading.usable_methods(tgt)
    heads = [m for m in ("eagle", "medusa", "eagle3") if m in methods][:1]
    chosen = [m for m in ("draft", *heads, "lookup") if m in methods]
    names = [w.name for w in WORKLOADS]
    wname = st.selectbox("Workload", names, index=names.index("story") if "story" in names else 0, key="tt_work")
    w = next(x for x in WORKLOADS if x.name == wname)
    tokens = 8 if loading.TINY else 24
    first = chosen[0]
    g = Guess(f"how {first}'s α changes from T = 0 to T = {TT.TEMPS[-1]:g}", "trend",
              choices=("falls", "rises", "about the same"), experiment=f"{first}, {TT.experiment(w, tokens)}")
    if G.ask_and_lock("tt_trend", g, "Lock in my guess and sweep T and top-p", type="primary"):
        bar = st.progress(0.0, "measuring…")
        try:
            ss["tt_rows"] = (first, TT.sweep(tgt, chosen, w, tokens, drafter=drafter,
                                             progress=lambda f, t: bar.progress(min(1.0, f), t)), w.name)
        except (InputError, ModelError, ValueError) as e:
            st.error(f"Cannot measure: {e}")
        bar.empty()
    got = ss.get("tt_rows")
    if got is None:
        st.info(f"Guess first, then sweep: {', '.join(chosen)}, {TT.experiment(w, tokens)}.")
        return
    first_m, rows, _ = got
    G.show("tt_trend", g, {"trend": TT.trend(rows, first_m)})
    st.plotly_chart(V.alpha_vs_temperature(rows, TT.TEMPS), key="tt_fig")
    fmt = lambda x: "–" if x is None else f"{x:.2f}"  # noqa: E731 - nothing tested: no α
    st.dataframe(pd.DataFrame([{"method": r["method"], "T": r["T"], "top-p": r["top_p"], "α": fmt(r["alpha"]),
                                "α̂": fmt(r["alpha_hat"]), "τ": f"{r['tau']:.2f}", "tested": r["tested"]}
                               for r in rows]), hide_index=True, width="stretch")
    said = [f"{m}: no draft tested at one end, so no trend" if TT.trend(rows, m).startswith("not measured")
            else f"{m}'s α **{TT.trend(rows, m)}** from T = 0 to {TT.TEMPS[-1]:g}"
            for m in dict.fromkeys(r["method"] for r in rows)]
    st.markdown("Measured: " + "; ".join(said) + ".")
    st.caption("One short run per point, so a point moves by a few hundredths between runs. At T = 0 a draft is "
               "kept when it is the target's argmax; as T rises the rule keeps Σ min(p, q): usually less, since "
               "the tails now count, but more where the drafter's top token was not the target's. Lookup's q is "
               "one-hot, so it keeps a draft with probability p(x), which falls as p flattens.")


WARP = Guess("the output's total variation distance from p at T (0 to 1)", "tv", lo=0.0, hi=1.0, step=0.01, rel=0.0,
             abs_tol=0.03)


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
    c[0].text_input("target logits (A, B, …)", key="wp_zp")
    c[1].text_input("draft logits", key="wp_zq")
    t = c[2].number_input("temperature T", 0.05, 2.0, 0.7, 0.05, key="wp_t")
    top_p = c[3].number_input("top-p", 0.05, 1.0, 1.0, 0.05, key="wp_topp")
    case = st.radio("Warping", list(W.CASES), key="wp_case")
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
    experiment = f"{case}, T = {float(t):g}, top-p = {float(top_p):g}"
    guess = G.ask("wp_tv", Guess(WARP.prompt, WARP.truth, lo=WARP.lo, hi=WARP.hi, step=WARP.step, rel=WARP.rel,
                                 abs_tol=WARP.abs_tol, experiment=experiment))
    trials = 500 if loading.TINY else 6000
    if st.button("Lock in my guess and draw", type="primary", key="wp_run") and \
            G.lock("wp_tv", guess, Guess(WARP.prompt, WARP.truth, experiment=experiment)):
        ss["wp_sim"] = {"w": w, "case": case, "counts": W.simulate(w, trials, seed=0), "trials": trials}
    sim = ss.get("wp_sim")
    if sim is None:
        st.info("Commit to a guess, then draw: every draw goes through specviz's verifier (core/verify.py).")
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
