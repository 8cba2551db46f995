"""The lesson "the target's trash is a free drafter" (lessons.md concept 18), on the Trees page: guess τ of token
recycling on a novel prompt, run it, then run a session of novel prompts and watch the adjacency table fill.
The logic is teach/recycling.py, the chart viz/lessons.py; every run goes through engine/measure.py inside the
model's turn (ui/turns.py)."""
from __future__ import annotations

import streamlit as st

from specviz.core import fmt as F
from specviz.core.errors import InputError, ModelError
from specviz.core.repetition import repetition
from specviz.proposers.recycle import TREE_NODES
from specviz.teach import recycling as R
from specviz.ui import guess as G, loading
from specviz.viz import lessons as VL


def section() -> None:
    ss = st.session_state
    st.subheader("The target's trash is a free drafter")
    st.markdown(
        "Every verify pass computes the target's whole distribution at every position it reads, and keeps one "
        "token from each. **Token recycling** (Luo et al. 2024, arXiv 2408.08696) keeps the rest: for each token id "
        "an **adjacency table** remembers the target's top 8 next tokens from the last time that token was an "
        "input. The next draft is a static tree read from the table, breadth-first from the last committed token. "
        "No drafter, no heads, no training; the target's own leftovers.\n\n"
        "On a novel prompt there is nothing to copy from the context, and the table starts empty: it only knows a "
        "token after the target has read it once.")
    ss.setdefault("rc_nodes", TREE_NODES)
    c = st.columns([2, 1, 1])
    work = c[0].selectbox("Novel prompt", R.novel_prompts(), key="rc_work")
    nodes = c[1].number_input("Tree size n (nodes)", step=1, key="rc_nodes", help="1 to 64")
    new = c[2].number_input("Max new tokens", min_value=4, max_value=128, value=12 if loading.TINY else 48, step=4,
                            key="rc_new")
    try:
        ex = R.plan(work, int(new), int(nodes))
    except InputError as e:
        st.error(f"Check the settings: {e}")
        return
    g = R.guess(ex)
    if G.ask_and_lock("rc_tau", g, "Lock in my guess and run recycling", type="primary"):
        target = loading.target()
        if target is not None:
            try:
                with st.spinner("Decoding with token recycling…"):
                    summary, steps = R.run(target, ex)
                ss["rc_out"] = {"summary": summary, "steps": steps, "describe": ex.describe(),
                                "nodes": ex.settings[0].nodes, "caption": loading.machine_caption(target)}
            except (InputError, ModelError) as e:
                st.error(f"Cannot run recycling: {e}")
    out = ss.get("rc_out")
    if out:
        _show_run(out, g)
        _session(int(new), int(nodes))


def _show_run(out: dict, g) -> None:
    s, steps = out["summary"], out["steps"]
    G.show("rc_tau", g, R.truth(s))
    m = st.columns(4)
    m[0].metric("Tokens per pass τ", f"{s.tokens_per_pass:.2f}")
    m[1].metric("Nodes read per pass", f"{s.mean_k:.1f} of {out['nodes']}")
    m[2].metric("Kept ÷ drafted (α̂)", F.num(s.draft_acceptance_rate))
    m[3].metric("Table rows at the end", steps[-1].table_rows if steps else 0)
    st.caption(f"{out['describe']}. {out['caption']}.")
    empty = sum(1 for r in steps if not r.n_drafted)
    st.markdown(f"{empty} of {len(steps)} passes drafted nothing: the last token had no row yet. The table grows by "
                "one row for each new token the target reads, so one short request teaches it little; a session "
                "teaches it more.")
    rep = repetition(list(s.token_ids))
    if rep >= 0.2:   # a greedy loop: the table then holds the loop's own successors, and recycling copies it
        st.warning(f"This greedy output repeats {rep:.0%} of its 4-grams: a 135M model loops under greedy decoding, "
                   "and once it loops the table holds the loop's own successors, so τ here flatters recycling on "
                   "new text, as it does lookup.")


def _session(new: int, nodes: int) -> None:
    ss = st.session_state
    ex = R.session_plan(new, nodes)
    st.markdown("**Now a session.** The same proposer answers the four novel prompts one after another and keeps "
                f"its table between them. The run: {ex.describe()}.")
    if st.button("Run the session, the table kept and fresh per request", key="rc_session_run"):
        target = loading.target()
        if target is not None:
            try:
                with st.spinner("Decoding the four requests twice: one table kept, then a fresh table each…"):
                    run, fresh = R.run_session(target, ex), R.run_session(target, ex, cache=False)
                rows, fresh_rows = R.filling(run.names, run.steps, nodes), R.filling(fresh.names, fresh.steps, nodes)
                ss["rc_session"] = {"rows": rows, "table": R.per_request(run.names, run.requests, rows),
                                    "tau": run.total.tokens_per_pass, "describe": ex.describe(), "nodes": nodes,
                                    "caption": loading.machine_caption(target), "fresh_rows": fresh_rows,
                                    "fresh_tau": fresh.total.tokens_per_pass,
                                    "both": R.side_by_side(run.names, run.requests, fresh.requests, rows, fresh_rows)}
            except (InputError, ModelError) as e:
                st.error(f"Cannot run the session: {e}")
    got = ss.get("rc_session")
    if got:
        _show_session(got)


def _show_session(got: dict) -> None:
    n = len(got["table"])
    c = st.columns(2)
    c[0].plotly_chart(VL.filling_figure(got["rows"], got["nodes"], f"recycle, n = {got['nodes']}: the adjacency "
                                        f"table over a session of {n} novel prompts"), key="rc_fill_fig")
    c[1].plotly_chart(VL.filling_figure(got["fresh_rows"], got["nodes"], f"recycle, n = {got['nodes']}: a fresh "
                                        f"table per request, the same {n} prompts"), key="rc_fresh_fig")
    st.dataframe(got["table"], hide_index=True, width="stretch")
    st.markdown("**On and off, side by side** (the same requests, the table kept from one to the next, or a fresh "
                "one for each):")
    st.dataframe(got["both"], hide_index=True, width="stretch")
    st.caption(f"{got['describe']}. Whole session: τ = {got['tau']:.2f} with the table kept, "
               f"{got['fresh_tau']:.2f} with a fresh table per request (greedy: both write the same text). "
               f"{got['caption']}. Each point of a chart is one target pass, read from its step record: the table's "
               "rows when it drafted (the proposer's own count) and the share of the n-node tree the table could "
               "fill. With the table kept, a later request starts with the rows the earlier ones left, so its first "
               "passes can already draft; whether those guesses are kept depends on how much the requests share "
               "(common words, punctuation, the chat template's tokens).")
