"""Guess-first labs on the Is it lossless? page: lossy rules labelled, tree sampling by hand, sampled siblings
(lab 1, first half). Computations in teach/ and core/; charts in viz/."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from specviz.core.errors import InputError
from specviz.teach import lab as L, lossy as Y, notes as NOTES
from specviz.teach.guess import Guess
from specviz.ui import guess as G, loading
from specviz.ui.links import BIND  # the page's link carries these labs' settings
from specviz.viz import lab as V

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
    eps = c[0].number_input("ε (Medusa)", 0.0, 1.0, Y.DEFAULTS[Y.TYPICAL]["eps"], 0.01, key="ly_eps", bind=BIND,
                            help="posterior_threshold in Medusa's code; 0.09 there by default")
    delta = c[1].number_input("δ (Medusa)", 0.0, 1.0, Y.DEFAULTS[Y.TYPICAL]["delta"], 0.05, key="ly_delta", bind=BIND,
                              help="posterior_alpha in Medusa's code; 0.3 there by default")
    single = c[2].number_input("t_single (SGLang)", 0.0, 1.0, Y.DEFAULTS[Y.THRESHOLD]["single"], 0.05,
                               key="ly_single", bind=BIND,
                               help="--speculative-accept-threshold-single; 1.0 by default (exact)")
    acc = c[3].number_input("t_acc (SGLang)", 0.01, 1.0, Y.DEFAULTS[Y.THRESHOLD]["acc"], 0.05, key="ly_acc", bind=BIND,
                            help="--speculative-accept-threshold-acc; 1.0 by default (exact)")
    params = {Y.TYPICAL: {"eps": eps, "delta": delta}, Y.THRESHOLD: {"single": single, "acc": acc}}
    trials = 2000 if loading.TINY else 20000
    sim = G.lab("ly_drift", DRIFT, "Lock in my guess and draw under each rule",
                lambda _: (p, q, params, {r: Y.simulate(p, q, r, params[r], trials) for r in Y.RULES}, trials),
                "ly_sim", "Commit to a guess, then draw: the table shows each rule's drift from p and the τ it buys.",
                run_key="ly_run", errors=(), bar=None)
    if sim is None:
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
    t1.text_input("p over A…E (numbers, normalised for you)", key="tsb_p", bind=BIND)
    t2.text_input("sibling candidates, in the order tried", key="tsb_cands", bind=BIND,
                  help="one to three of A…E, e.g. 'E, D'")
    tsb_rule = t3.radio("Rule", list(L.SIBLING_RULES), key="tsb_rule", bind=BIND,
                        help="\n\n".join(L.SIBLING_RULES.values()))
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
        if G.ask_and_lock("tsb_some", SOME, "Lock in my guess and draw", run_key="tsb_run", type="primary"):
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
SIB = G.tv_guess()


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
    c[0].text_input("p over A, B, … (numbers, normalised for you)", key="ssb_p", bind=BIND)
    c[1].text_input("q, the drafter's distribution", key="ssb_q", bind=BIND)
    c[2].number_input("siblings", step=1, key="ssb_n", help="1 to 4")
    trials = c[3].select_slider("draws", [500, 2000, 6000, 20000], value=500 if loading.TINY else 6000,
                                key="ssb_trials", bind=BIND)
    mode = st.radio("Draw mode", list(S.MODES), horizontal=True, key="ssb_mode", bind=BIND)
    try:
        p, q = L.pair(ss["ssb_p"], ss["ssb_q"])
        n = int(ss["ssb_n"])
        law, kept = S.output_distribution(p, q, n, mode)
    except InputError as e:
        st.error(str(e))
        return
    def draw(_):
        counts, kept_n = S.simulate(p, q, n, mode, int(trials), seed=0)
        return {"p": p, "q": q, "n": n, "mode": mode, "counts": counts, "kept": kept_n, "trials": int(trials),
                "law": law.float(), "kept_law": kept}
    experiment = f"{n} sibling{'s' if n != 1 else ''} drawn {mode}, p = ({ss['ssb_p']}), q = ({ss['ssb_q']})"
    sim = G.lab("ssb_tv", replace(SIB, experiment=experiment), "Lock in my guess and draw", draw, "ssb_sim",
                "Commit to a guess, then draw: every draw goes through specviz's tree verifier.", run_key="ssb_run",
                errors=(), bar=None)
    if sim is not None:
        siblings_result(sim)


def siblings_result(sim: dict) -> None:
    """The draws against p: the guess scored, the closed form beside the counts, every draw mode's law."""
    from specviz.core import siblings as S

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
