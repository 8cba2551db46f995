"""Derivations, one screen each: E[τ] as a geometric series, the losslessness proof, P(reject) = distance."""
import pandas as pd
import streamlit as st

from specviz.core import fmt as F
from specviz.core.costmodel import expected_tokens_per_pass
from specviz.core.warping import CASES
from specviz.engine.methods import REGISTRY
from specviz.engine.workloads import WORKLOADS
from specviz.teach import acceptance as A, derivations as D, lab as L, notes as NOTES
from specviz.teach.guess import Guess
from specviz.ui import byhand, guess as G, labs_sampling, lesson_block, links as LK, loading, recordings
from specviz.viz import servers as VS

st.title("Derivations")
st.caption("Three results the rest of the app leans on, each derived on one screen and checked against numbers.")
SV_OFFERED = [m for m in loading.methods_offered() if m != "plain" and not REGISTRY[m].chain]  # no heads' trees
NAMES = tuple(w.name for w in WORKLOADS)
LINK = [LK.Param("der_alpha", "float", 0.0, 0.99), LK.Param("der_k", "int", 1, 16),
        LK.Param("sv_method", "choice", options=tuple(SV_OFFERED)), LK.Param("sv_work", "choice", options=NAMES),
        LK.Param("tt_work", "choice", options=NAMES), LK.Param("wp_zp", "text"), LK.Param("wp_zq", "text"),
        LK.Param("wp_t", "float", 0.05, 2.0), LK.Param("wp_topp", "float", 0.05, 1.0),
        LK.Param("wp_case", "choice", options=tuple(CASES))]
LK.check("derivations", LINK)  # a shared link: one warning naming any parameter the widgets below will not take
link_box = st.container()       # "Link to this experiment", filled at the end with every setting drawn
one, two, three, four, five, six = st.tabs(["E[τ] is a geometric series", "The rule is lossless",
                                            "P(reject) = distance(p, q)", "Acceptance as servers report it",
                                            "Temperature and warping", "Token-wise is not optimal"])

with one:
    st.markdown(r"""
If each drafted position is kept with probability α, independently, a step keeps its first i drafts with
probability α^i, and emits one more token of the target's own whatever happens. So

$$E[\tau] = \sum_{i=0}^{k} P(\text{first } i \text{ drafts kept}) = 1 + \alpha + \alpha^2 + \dots + \alpha^k = \frac{1 - \alpha^{k+1}}{1 - \alpha}.$$

Each term is a probability at most 1, so E[τ] ≤ k + 1, with equality only at α = 1, and as k grows E[τ] approaches 1 ÷ (1 − α): at α = 0.8 no k
gets past 5 tokens per pass.""")  # noqa: E501 (display math is one line)
    c1, c2 = st.columns(2)
    alpha = c1.slider("α", 0.0, 0.99, 0.7, 0.01, key="der_alpha", bind=LK.BIND)
    k = c2.slider("k", 1, 16, 4, key="der_k", bind=LK.BIND)
    terms = D.series_terms(alpha, k)
    st.dataframe(pd.DataFrame([[f"{t:.3f}" for t in terms]], index=["α^i = P(first i kept)"],
                              columns=[f"i = {i}" for i in range(k + 1)]), width="stretch")
    st.markdown(f"Sum: **{sum(terms):.3f}** = (1 − α^(k+1)) ÷ (1 − α) = "
                f"**{expected_tokens_per_pass(alpha, k):.3f}**; the limit 1 ÷ (1 − α) = **{1 / (1 - alpha):.2f}**.")
    series = D.plan_series(12 if loading.TINY else 48)
    st.markdown(f"**Now on the real model.** {series.describe()}: α is estimated as "
                "accepted ÷ tested (a rejection is one test; drafts after it were never tested).")
    TAU = Guess("τ, the tokens per pass this run will measure", "tau", lo=1.0, hi=5.0, step=0.1, rel=0.15,
                experiment=series.describe())

    def measure_series(_):
        target = loading.target()
        return None if target is None else D.measured_series(target, max_new=series.new_tokens)
    m = G.lab("der_tau", TAU, "Lock in my guess and run", measure_series, "der_measured", run_key="der_run",
              spinner="Decoding with lookup…")
    if m:
        G.show("der_tau", TAU, m)
        if m["alpha"] is None:
            st.info("Nothing was drafted in this run, so α is undefined.")
        else:
            st.markdown(f"Measured on *{m['workload']}*: {m['accepted']} accepted of {m['tested']} tested → "
                        f"α = **{m['alpha']:.2f}**. The series gives E[τ](α, k = 4) = **{m['expected']:.2f}**; the "
                        f"run measured τ = **{m['tau']:.2f}** over {m['steps']} steps (k̄ = {m['k_bar']:.2f}).")
            pp = ", ".join(f"{a:.2f}" for a in m["per_position"])
            st.caption(f"Per-position acceptance a_i: {pp}. The series assumes they are all α; lookup's rise with i "
                       "(a copied run is right as a whole or not at all), and steps that draft fewer than k tokens "
                       "(no match, or the end of the run) pull τ below the formula.")

with two:
    st.markdown(r"""
Draft x ~ q; keep it with probability min(1, p(x)/q(x)); otherwise draw from the residual
r = (p − q)⁺ ÷ Σ(p − q)⁺. The probability that x ends up emitted is

1. kept: q(x) · min(1, p(x)/q(x)) = **min(p(x), q(x))**
2. replaced: P(reject) · r(x) = (1 − Σ min(p, q)) · (p(x) − q(x))⁺ ÷ Σ(p − q)⁺ = **(p(x) − q(x))⁺**,
   since 1 − Σ min(p, q) = Σ(p − q)⁺
3. total: min(p(x), q(x)) + (p(x) − q(x))⁺ = **p(x)**, for every x.

The rows below are those three lines for the p and q on the *Is it lossless?* page.""")
    p, q = st.session_state.get("lab_pq") or L.pair(*L.PRESETS[next(iter(L.PRESETS))])
    rows = L.proof_rows(p, q)
    st.dataframe(pd.DataFrame(rows, index=[chr(ord("A") + i) for i in range(len(rows))]).round(4), width="stretch")
    st.caption("The second and third columns agree, and the sum is p: the rule adds back exactly the mass the test "
               "took away. Replace the residual by p itself and line 2 no longer gives (p − q)⁺ — the page's "
               "'break the rule' toggle shows the drift.")

with three:
    st.markdown(r"""
Σ min(p, q) + Σ (p − q)⁺ = Σ p = 1, and Σ (p − q)⁺ = Σ (q − p)⁺ = ½ Σ |p − q|. So

$$P(\text{reject}) = 1 - \sum_x \min(p(x), q(x)) = \tfrac12 \sum_x |p(x) - q(x)| = \mathrm{TV}(p, q).$$

The rejection rate *is* the total variation distance: a proposer is exactly as good as it is close to the target.""")
    s = L.stats(p, q)
    c = st.columns(2)
    c[0].metric("1 − Σ min(p, q) (the lossless lab's p, q)", f"{1 - s.acceptance:.4f}")
    c[1].metric("½ Σ |p − q|", f"{s.tv:.4f}")
    real = st.session_state.get("lab_real")
    if real:
        case = real[2]
        pr = 1 - float(L.stats(case.p, case.q).acceptance)
        st.markdown(f"On the real model's next token (the lossless page's last real run, {real[0]}): "
                    f"1 − Σ min(p, q) = **{pr:.4f}**, ½ Σ |p − q| = "
                    f"**{0.5 * float((case.p - case.q).abs().sum()):.4f}**.")
    else:
        st.caption("Run part 2 of *Is it lossless?* to see the same equality on the real model's next token.")
    st.markdown(NOTES.WARPED)  # warped p and q (why acceptance moves with T: the fifth tab)

with four:
    st.markdown("A server does not show step records; vLLM logs totals over the passes that drafted "
                "(vllm/v1/spec_decode/metrics.py): **Avg Draft acceptance rate** = accepted ÷ drafted tokens (α̂), "
                "**Mean acceptance length** = 1 + accepted ÷ drafts (τ over drafting passes), and **Per-position "
                "acceptance rate** = drafts kept at position i ÷ all drafts. Here one run is turned into those "
                "numbers, with the histogram of accepted lengths and the geometric law of its α drawn over it.")
    c1, c2 = st.columns(2)
    sv_method = c1.selectbox("Method", SV_OFFERED, key="sv_method", bind=LK.BIND)
    sv_work = c2.selectbox("Workload", NAMES, key="sv_work", bind=LK.BIND)
    sv_new = 12 if loading.TINY else 64
    byhand.exercise(sv_method, next(x for x in WORKLOADS if x.name == sv_work), sv_new)
    st.markdown("**Now a whole run.**")
    view = D.plan_server_view(sv_method, sv_work, sv_new)
    st.caption(f"The run: {view.describe()}.")
    ZERO = Guess("the share of drafting passes that keep nothing (0 to 1)", "zero_share", lo=0.0, hi=1.0, step=0.05,
                 rel=0.0, abs_tol=0.1, experiment=view.describe())
    if G.ask_and_lock("sv_zero", ZERO, "Lock in my guess and run", type="primary", run_key="sv_run") and \
            (target := loading.target()) is not None:
        with G.measuring(spinner=f"Decoding with {sv_method}…"):
            summary, steps = D.run_plan(target, view, loading.first_drafter() if sv_method == "draft" else None)
            st.session_state["sv_view"] = (sv_method, sv_work, A.server_view(steps), view.describe())
            st.session_state["sv_rec"] = (recordings.run_recording(
                target, D.run_settings(view), next(x for x in WORKLOADS if x.name == sv_work), summary, steps,
                "histogram"), False)   # (the run as a recording, opened from a file)
    with st.expander("The run as a recording: download it, or open one", icon=":material/save:"):
        rec = recordings.opened("sv_upload", "step")   # a bad file: one error, the histogram shown stays
        if rec is not None:
            st.session_state["sv_view"] = (rec.runs[0].summary.method, str(rec.settings.get("workload", "?")),
                                           A.server_view(rec.runs[0].steps), None)
            st.session_state["sv_rec"] = (rec, True)
        if "sv_rec" in st.session_state:
            recordings.download("Download this run", st.session_state["sv_rec"][0], key="sv_download")
    got = st.session_state.get("sv_view")
    if got:
        meth, wname, v, said = got
        G.show("sv_zero", ZERO, {"zero_share": v.zero_share})
        if not v.num_drafts:
            st.info("Nothing was drafted in this run, so a server would report no acceptance at all.")
        else:
            m = st.columns(4)
            m[0].metric("Mean acceptance length", f"{v.mean_acceptance_length:.2f}")
            m[1].metric("Avg draft acceptance rate", f"{v.draft_acceptance_rate:.1%}")
            m[2].metric("Passes that keep nothing", f"{v.zero_share:.0%}")
            m[3].metric("α = accepted ÷ tested", F.num(v.alpha))
            st.plotly_chart(VS.acceptance_figure(v), key="sv_fig")
            st.code(A.log_line(v), language=None, wrap_lines=True)
            rec, from_file = st.session_state.get("sv_rec", (None, False))
            st.caption((f"{meth} on {wname}, from a recording made at {rec.when} with {recordings.origin(rec)}: every "
                        f"number here is the recording's, {v.num_drafts} drafting passes. " if from_file else
                        f"{said}: {v.num_drafts} drafting passes. ") + "vLLM's "
                       "per-position rate is unconditional: rate_i = a_1·…·a_i, where a_i (Break-even calculator) is "
                       "conditional on reaching position i. Bars taller than the law at 0 and at k mean acceptance "
                       "comes in runs (whole drafts right or wrong), not one independent coin per position.")

with five:
    st.markdown(NOTES.TEMPERATURE)
    labs_sampling.temperature_section()  # α against T and top-p, measured (teach/temperature.py)
    labs_sampling.warping_section()      # mismatched warping drifting from p at T (core/warping.py)

with six:
    lesson_block.section()  # block verification: the paper's toy example by hand, then block vs token-wise measured

with link_box:
    LK.share("derivations", LK.current(LINK), "press each Run there: the runs are greedy, so they come out the same")
