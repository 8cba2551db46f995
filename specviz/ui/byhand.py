"""α, α̂ and τ by hand (Derivations, 'Acceptance as servers report it'): three steps of a live run as a table,
the learner's three answers locked first, then the reveal and the same numbers under the names vLLM logs."""
from __future__ import annotations

from dataclasses import replace

import pandas as pd
import streamlit as st

from specviz.core.errors import InputError, ModelError
from specviz.core.sampling import SamplingConfig
from specviz.engine import comparisons as E
from specviz.engine.experiment import Setting
from specviz.teach import acceptance as A, predict as P
from specviz.ui import guess as G, loading

K = 4
ss = st.session_state


def setting(method: str) -> Setting:
    """What a dealt table runs: `method` drafting k = K tokens a step (lookup from a 3-token match)."""
    return replace(Setting.resolve(method, K, 3 if method == "lookup" else None, "fixed"), k=K)


def deal(method: str, workload, new: int) -> None:
    """Run setting(method), greedy, now and keep three of its steps as the learner's table."""
    target = loading.target()
    if target is None:
        return
    dm = loading.first_drafter() if method == "draft" else None
    try:
        with st.spinner(f"Decoding with {method}…"):
            run = setting(method)          # the lesson counts drafts of k = K tokens
            _, steps = E.run_one(target, workload, method, run.k, run.n, SamplingConfig(), new, drafter=dm,
                                 k_rule=run.k_rule or "fixed")
    except (InputError, ModelError) as e:
        st.error(str(e))
        return
    three = P.pick_three(steps)
    if len(three) < 3:
        st.info(f"This run has only {len(three)} steps that drafted: choose another method or workload.")
        return
    ss["hand"] = (method, workload.name, three, P.hand_rows(three))


def exercise(method: str, workload, new: int) -> None:
    st.markdown("**By hand first.** Three steps of a real run, each draft marked kept, rejected or never tested "
                "(a chain stops testing at its first rejection). From the table alone, work out α = accepted ÷ "
                "tested, α̂ = accepted ÷ drafted and τ = tokens per pass (each pass adds one token of the target's "
                "own), then reveal.")
    if st.button(f"Deal a table: {setting(method).describe()} on {workload.name}, greedy", key="hand_deal"):
        deal(method, workload, new)
    got = ss.get("hand")
    if not got:
        return
    meth, wname, three, rows = got
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    gs = P.hand_guesses(setting(meth))
    values = [G.ask(f"hand_{g.truth}", g) for g in gs]
    if st.button("Lock in my three answers and reveal", type="primary", key="hand_run") \
            and all(G.lock(f"hand_{g.truth}", v, g) for g, v in zip(gs, values)):
        ss["hand_revealed"] = rows
    if ss.get("hand_revealed") is not rows:
        return
    bh, v = P.by_hand(rows), A.server_view(three)
    for g in gs:
        G.show(f"hand_{g.truth}", g, vars(bh))
    st.dataframe(pd.DataFrame(P.vllm_names(bh, v)), hide_index=True, width="stretch")
    st.code(A.log_line(v), language=None, wrap_lines=True)
    st.caption(f"{setting(meth).describe()} on {wname}, greedy: these three steps alone, as vLLM would log them "
               "(vllm/v1/spec_decode/metrics.py, SpecDecodingLogging).")
