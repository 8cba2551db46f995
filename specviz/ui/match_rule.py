"""k / n experiments: lookup's match-length rule beside fixed k = 4 on the same copy-heavy prompt, guess first
(concept 6: a draft as long as the match justifies). Runs through teach/capstone.run_options (engine/measure)."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from specviz.core import fmt as F
from specviz.engine.workloads import COPY, of_kind
from specviz.teach import capstone as C
from specviz.teach.guess import Guess
from specviz.ui import guess as G, loading, waiting
from specviz.viz import fleet as V

ss = st.session_state


def section() -> None:
    st.header("Lookup's match rule beside fixed k")
    st.write("Fixed k drafts k tokens whenever the last n tokens occurred before. The match rule finds the longest "
             "earlier match of the context's tail (m tokens) and drafts up to factor × m: a long match is a copy in "
             "progress and gets a long draft, a short one a short draft. Same prompt, same tokens, one run each.")
    c = st.columns(3)
    names = [w.name for w in of_kind(COPY)]
    workload = c[0].selectbox("copy-heavy prompt", names, index=names.index("quote-document"), key="mr_workload")
    tokens = int(c[1].number_input("new tokens", 4, 128, 8 if loading.TINY else 48, 4, key="mr_tokens"))
    temperature = 0.0 if c[2].radio("decoding", ["greedy", "sampled at T = 0.8"], key="mr_mode") == "greedy" else 0.8
    plan = C.match_vs_fixed_plan(workload, tokens, temperature)
    g = Guess("how many more tokens per pass the match rule keeps than fixed k = 4, τ(match) − τ(fixed)", "tau_gain",
              lo=-8.0, hi=24.0, step=0.1, rel=0.25, abs_tol=0.3, experiment=plan.describe())
    def run_both(_):   # a cancellable job (waiting.run_job): its own bar, its own error line
        tgt = loading.target()
        done = None if tgt is None else waiting.run_job(
            "mr", lambda progress: C.run_options(tgt, workload, list(C.MATCH_VS_FIXED), tokens, temperature,
                                                 progress=progress))
        return None if done is None else {"rows": done[0], "shared": done[1]}
    res = G.lab("mr", g, "Lock in my guess and run both", run_both, "mr_result",
                "Guess the difference in tokens per pass, then run both rules (and plain decoding) on the prompt.",
                errors=(), bar=None)
    if res is None:
        return
    rows = res["rows"]
    if res["shared"]:
        st.warning(waiting.SHARED_NOTE)
    G.show("mr", g, C.match_vs_fixed_truth(rows))
    st.plotly_chart(V.rule_figure(rows), width="stretch", key="mr_fig")
    st.dataframe(pd.DataFrame([{"run": r["run"], "τ (tokens per pass)": f"{r['tau']:.2f}",
                                "α̂ (kept ÷ drafted)": F.num(r["alpha_hat"]),
                                "k̄ (drafted per pass)": f"{r['mean_k']:.2f}", "target passes": r["passes"],
                                "tokens/s": f"{r['tokens_per_s']:.1f}", "speedup": f"{r['speedup']:.2f}×"}
                               for r in rows]), hide_index=True, width="stretch",
                 column_config={"run": st.column_config.TextColumn(width="medium")})
    st.caption("The match rule drafts more where the copy is long and less where the match is short, so τ usually "
               "rises; α̂ can fall, because a long draft that breaks late still counts every untested token as "
               "drafted. One run each: tokens/s differences of a few percent are the machine's noise, τ is not. "
               + loading.machine_caption() + ".")
