"""Break-even calculator: when does speculation pay, and with which k? Filled from a measured run in one click."""
import streamlit as st

from specviz.core import costmodel as be
from specviz.core.records import is_tree_run
from specviz.engine.methods import REGISTRY, SELF_SIZED_CAP
from specviz.teach import reality as R
from specviz.ui import labs_cost, labs_drafters, loading, state
from specviz.viz import breakeven as vb

K_MAX = 16
CONSTANT, TABLE = "a constant", "the measured table"
ss = st.session_state
TREE_NOTE = ("{m} drafted trees: its α is per tested child (siblings are alternatives, at most one is kept) and its "
             "k̄ counts nodes, so the chain law below — each of k positions kept with probability α — does not "
             "describe it. A tree's E[τ] is 1 + Σ over its nodes of P(the path to the node is kept): the tree "
             "calculator on the Trees page computes it, and a tree's break-even from it.")

st.title("Break-even calculator")
st.markdown(
    "If each tested draft is kept independently with probability **α**, one target pass commits on "
    "average **E[τ] = (1 − α^(k+1)) / (1 − α)** tokens. The step costs one verify pass over k+1 positions, "
    "**v(k)**, plus k draft steps of cost **c** each, both measured in plain decoding steps. "
    "So the **speedup = E[τ] ÷ (v(k) + k·c)**: below some α speculation slows decoding down.")

ss.setdefault("bk_alpha", 0.8)
ss.setdefault("bk_k", 4)
ss.setdefault("bk_c", 0.05)
ss.setdefault("bk_v", 1.0)
ss.setdefault("bk_vmode", CONSTANT)
if ss.pop("_bk_use_table", False):
    ss["bk_vmode"] = TABLE


def v_in_use():
    """The v the formulas use now, and a line saying what it is."""
    table = state.v_table_if_measured()
    if ss["bk_vmode"] == TABLE and table:
        return table, "the measured v(k) table of " + loading.target_label()
    return float(ss["bk_v"]), f"a constant v = {ss['bk_v']:.2f}"


def fill(method: str) -> None:
    """One click: α (accepted ÷ tested, never α̂), k, c (and v, if measured) from the session's last
    measured run of `method`."""
    e = state.measured_runs()[method]
    v, _ = v_in_use()
    ch = be.run_checks(method, e["summary"], e["steps"], e.get("plain"), e.get("plain_steps"), v, e.get("k"),
                       e.get("speedup"))
    spec = REGISTRY.get(method)
    k, ss["bk_note"] = be.calculator_k(method, e.get("k"), ch.k_bar, ch.tau, ch.measured,
                                       tree=bool(spec and spec.tree),
                                       self_sized=bool(e.get("self_sized")
                                                       or (spec and spec.self_sized and e.get("k") == SELF_SIZED_CAP)),
                                       k_max=K_MAX)
    if ch.alpha is not None and k is not None:   # a tree's α is not the chain law's
        ss["bk_alpha"] = round(ch.alpha, 2)
    if k is not None:
        ss["bk_k"] = k
    if ch.c is not None:
        ss["bk_c"] = round(ch.c, 3)
    if e.get("v_table"):
        ss.setdefault("v_tables", {})[loading.model_key()] = e["v_table"]
    if state.v_table_if_measured():
        ss["bk_vmode"] = TABLE
    ss["bk_filled"] = method


# -- fill from a measured run ------------------------------------------------------------------
runs = {m: e for m, e in state.measured_runs().items() if m != "plain"}
with st.container(border=True):
    st.markdown("**Fill from a measured run**")
    if not runs:
        st.caption("No measured run in this session yet. Play a run on the Step-through page and press "
                   "“Run plain decoding alongside” there (that gives c and the measured speedup), then come back.")
        st.page_link("pages/step_through.py", label="Go to Step through", icon=":material/footprint:")
    else:
        c1, c2 = st.columns([2, 1])
        pick = c1.selectbox("Run", list(runs), key="bk_pick", persist_state="session",
                            format_func=lambda m: state.run_label(runs[m]))
        c2.button("Fill α, k, c and v", on_click=fill, args=(pick,), type="primary", key="bk_fill_btn")
        s_ = runs[pick]["summary"]
        if s_.alpha is not None:
            st.markdown(
                f"In this run **α = {s_.alpha:.2f}** (chance a tested draft is kept: {s_.accepted} kept ÷ "
                f"{s_.tested} tested) and **α̂ = {s_.draft_acceptance_rate:.2f}** (share of drafted tokens kept: "
                f"{s_.accepted} ÷ {s_.drafted} drafted). The calculator takes α. α̂ obeys "
                f"**τ = 1 + α̂·k̄** = 1 + {s_.draft_acceptance_rate:.2f} × {s_.mean_k:.2f} = "
                f"{be.tau_identity(s_.draft_acceptance_rate, s_.mean_k):.2f} (measured τ = {s_.tokens_per_pass:.2f}), "
                "in every run: each step emits its kept drafts plus one token.")
        if is_tree_run(runs[pick]["steps"]):
            st.warning(TREE_NOTE.format(m=pick))

# -- inputs ------------------------------------------------------------------------------------
if ss.get("bk_note"):
    st.info(ss["bk_note"])
c1, c2, c3 = st.columns(3)
alpha = c1.slider("α: chance a tested draft is kept", 0.0, 1.0, step=0.01, key="bk_alpha", persist_state="session",
                  help="From a run: accepted ÷ tested, where tested = accepted + rejections. Not the share of "
                       "drafted tokens kept (α̂), which also counts the drafts after a rejection, never tested.")
k = c2.number_input("Draft length k", step=1, key="bk_k", persist_state="session", help=f"1 to {K_MAX}")
c = c3.number_input("Draft cost c per token (plain steps)", min_value=0.0, max_value=5.0, step=0.01,
                    format="%.3f", key="bk_c", persist_state="session",
                    help="Prompt lookup ≈ 0. For a draft model, c follows its depth and fixed per-call overheads "
                         f"more than its parameter count: this app's 2-layer draft model has {R.cost_words('draft')}. "
                         "Measure it rather than guess it.")
c1, c2, c3 = st.columns(3)
c1.radio("Verification cost v(k) from", [CONSTANT, TABLE], key="bk_vmode", persist_state="session", horizontal=True)
c2.number_input("Constant v", min_value=0.1, max_value=10.0, step=0.05, key="bk_v", persist_state="session",
                disabled=ss["bk_vmode"] == TABLE and bool(state.v_table_if_measured()))
with c3:
    if st.button("Measure v(k) on this model", key="bk_measure"):
        with st.spinner("Timing verify passes over 1…17 positions (a few seconds)…"):
            table = state.measure_v_table()
        if table:
            ss["_bk_use_table"] = True
            st.rerun()

if ss["bk_vmode"] == TABLE and not state.v_table_if_measured():
    st.warning("No v(k) table measured for this model yet: press “Measure v(k) on this model”. "
               "Using the constant meanwhile.")


def show(k: int) -> None:
    """Outputs, charts and the checks of a filled run, for valid inputs."""
    v, v_text = v_in_use()
    tau = be.expected_tokens_per_pass(alpha, k)
    s = be.speedup(alpha, k, c, v)
    a0 = be.breakeven_alpha(k, c, v)
    kb, sb = be.best_k(alpha, c, v, K_MAX)

    m = st.columns(4)
    m[0].metric("Expected tokens per pass E[τ]", f"{tau:.2f}")
    m[1].metric("Predicted speedup", f"{s:.2f}×", help=f"step cost v(k) + k·c = {be.step_cost(k, c, v):.3f}")
    m[2].metric("Break-even α at this k",
                "pays at any α" if a0 == 0.0 else "never pays" if a0 is None else f"{a0:.2f}")
    m[3].metric("Best k at this α", f"k = {kb}",
                help=f"predicted speedup at the best k: {sb:.2f}× (k = 0 is plain decoding, exactly 1.0×)")
    if kb == 0:
        st.caption("Best k = 0: don't speculate. At this α no draft length beats plain decoding (1.0×).")
    st.caption(f"v(k) is {v_text}; step cost v({k}) + {k}·c = {be.step_cost(k, c, v):.3f} plain steps.")

    c1, c2 = st.columns(2)
    c1.plotly_chart(vb.speedup_vs_alpha(k, c, v, alpha), width="stretch", key="bk_fig_alpha")
    c2.plotly_chart(vb.speedup_vs_k(alpha, c, v, k, K_MAX), width="stretch", key="bk_fig_k")
    v_table_section()
    checks_section(v)


def v_table_section() -> None:
    """The measured v(k) table, when there is one, with the entries too noisy to quote."""
    table = state.v_table_if_measured()
    if table:
        with st.expander("The measured v(k) table", expanded=ss["bk_vmode"] == TABLE):
            st.plotly_chart(vb.v_figure(table, float(ss["bk_v"]), K_MAX), width="stretch", key="bk_fig_v")
            st.caption("Decode is bound by reading the weights, so checking k+1 positions costs little more than "
                       "one: that is what speculation spends its spare arithmetic on. Bars: the spread (IQR) over "
                       "the measuring rounds.")
            noisy = [k for k in sorted(table) if hasattr(table, "too_noisy") and table.too_noisy(k)]
            if noisy:
                st.caption("Too noisy to quote on their own (spread larger than the distance from 1): "
                           + ", ".join(f"v({k})" for k in noisy) + ". Re-measure on a quieter machine to tell them "
                           "from one plain step.")


def checks_section(v) -> None:
    """The two checks of the filled run: the cost model against its measured speedup, and independence."""
    filled = ss.get("bk_filled")
    if filled and filled in runs:
        e = runs[filled]
        ch = be.run_checks(filled, e["summary"], e["steps"], e.get("plain"), e.get("plain_steps"), v, e.get("k"),
                           e.get("speedup"))
        st.subheader(f"Does the model fit the measured {filled} run?")
        left, right = st.columns(2)
        with left, st.container(border=True):
            cost_model_check(ch, e)
        with right, st.container(border=True):
            independence_check(ch, e, filled)


def cost_model_check(ch, e: dict) -> None:
    """The measured τ fed into the cost model, against the run's measured speedup, and where a miss comes from."""
    st.markdown("**Cost-model check** — the measured τ fed into τ ÷ (v̄ + k̄·c), v̄ the mean of v(kᵢ) over the "
                "run's passes")
    if ch.predicted is None or ch.measured is None:
        st.caption("Needs a plain run measured alongside (for t₁, c and the measured speedup): press "
                   "“Run plain decoding alongside” on the Step-through page.")
    else:
        st.markdown(
            f"τ = {ch.tau:.2f} tokens per pass, k̄ = {ch.k_bar:.2f} drafted per step, "
            f"c = {ch.c:.3f}, v̄ = {ch.v:.3f}, t₁ = {ch.t1 * 1e3:.1f} ms\n\n"
            f"predicted **{ch.predicted:.2f}×** vs measured **{ch.measured:.2f}×** "
            f"({ch.error:+.0%})")
        g = be.gap_terms(ch, e["summary"], e["steps"])
        if abs(ch.error) > 0.15 and g and g["predicted_with_v_run"] is not None:
            st.caption(
                ("Most of the miss is the term v̄" if abs(g["gap_with_v_run"]) < abs(ch.error) / 2
                 else "The term v̄ explains little of the miss")
                + f": the calculator's v gives {g['v_used']:.2f}, while this run's "
                f"own passes cost **{g['v_run']:.2f}** plain steps each (mean verify time ÷ t₁); with that v "
                f"the prediction is {g['predicted_with_v_run']:.2f}× ({g['gap_with_v_run']:+.0%}). The "
                f"rest is time outside drafting and verifying: {g['outside_share']:.0%} of the run's wall "
                f"time (prefill {g['prefill_share']:.0%}, Python between passes, recording).")


def independence_check(ch, e: dict, filled: str) -> None:
    """Per-position acceptance a_i, and E[τ] from α against the measured τ (a tree: along its accepted path)."""
    st.markdown("**Independence check** — per-position acceptance a_i, and E[τ] from α vs the measured τ")
    if ch.tau_iid is None:
        st.caption("No draft was tested in this run, so α is undefined.")
    elif is_tree_run(e["steps"]):
        st.warning(TREE_NOTE.format(m=filled))
        st.plotly_chart(vb.per_position_figure(ch.per_position, ch.alpha), width="stretch",
                        key="bk_fig_ai")
        st.caption("a_i along the depth of the accepted path: of the steps whose path reached depth i − 1 "
                   "with a child below it, the share that kept one there.")
    else:
        st.markdown(
            f"α = {ch.alpha:.2f} → E[τ] = **{ch.tau_iid:.2f}** (averaged over each step's own "
            f"draft length) vs measured τ = **{ch.tau:.2f}** ({ch.independence_gap:+.0%})")
        st.plotly_chart(vb.per_position_figure(ch.per_position, ch.alpha), width="stretch",
                        key="bk_fig_ai")
        st.caption(
            "If every position were kept independently with probability α, the bars would be flat at α "
            "and E[τ] would match τ. Rising bars mean bursty acceptance: prompt lookup copies a passage "
            "that is either right, and then kept whole, or wrong from its first token. Falling bars mean "
            "later guesses are worse: Medusa's later heads guess further ahead without seeing the earlier "
            "heads' guesses, and an EAGLE head drafts from its own predicted features, which drift.")


# (no st.stop(): in Streamlit 1.67 a page that stops on a session's first run shows "Page not found")
if 1 <= k <= K_MAX:
    show(int(k))
    labs_cost.families_section(int(k), *v_in_use())
    labs_drafters.sizing_section(int(k), *v_in_use())
else:
    st.error(f"k must be between 1 and {K_MAX}, got {k}.")
