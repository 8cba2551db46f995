"""The capstone's widgets: the fleet's settings, a method, k and a tokens/s prediction per pool, the runs (each pool
for real, through engine/measure), the scores and the chart. Computations: teach/capstone.py; chart: viz/fleet.py."""
from __future__ import annotations

import pandas as pd
import streamlit as st

from specviz.core import fmt as F
from specviz.core.errors import InputError
from specviz.engine.experiment import Experiment
from specviz.engine.methods import REGISTRY
from specviz.teach import capstone as C, reality as R
from specviz.teach.guess import Guess
from specviz.ui import guess as G, loading, waiting
from specviz.viz import fleet as V

ss = st.session_state
DEFAULT = {"RAG answers": "lookup", "code edits": "lookup", "open chat": "draft", "translation": "plain"}


def fleet_settings() -> dict:
    st.subheader("The fleet")
    st.dataframe(pd.DataFrame([{"pool": p.name, "share of requests": f"{p.share:.0%}", "workload": p.workload,
                                "traffic": p.why} for p in C.POOLS]), hide_index=True, width="stretch")
    c = st.columns(5)
    tiny = loading.TINY
    return {"memory_gb": float(c[0].number_input("memory budget (GB)", 0.01, 1000.0, 1.05, 0.05, key="cap_mem")),
            "batch": int(c[1].number_input("batch (sequences at once)", 1, 4096, 16, 1, key="cap_batch")),
            "context": int(c[2].number_input("tokens per sequence", 16, 131072, 2048, 256, key="cap_ctx")),
            "temperature": 0.0 if c[3].radio("decoding", ["greedy", "sampled at T = 0.8"], key="cap_mode",
                                             help="greedy: a 135M model's open chat tends to loop, and lookup copies "
                                                  "the loop; sample to see chat as novel text") == "greedy" else 0.8,
            "tokens": int(c[4].number_input("new tokens per run", 4, 64, 8 if tiny else 40, 4, key="cap_tokens"))}


def pick(pool: C.Pool, offered: list[str]) -> C.Choice:
    """One pool's method, k, lookup's rule and gate."""
    chains = ["plain"] + [m for m in offered if not REGISTRY[m].tree]
    c = st.columns([3, 2, 1, 2])
    first = DEFAULT[pool.name] if DEFAULT[pool.name] in chains else "plain"
    method = c[0].selectbox(f"{pool.name}: method", chains, index=chains.index(first), key=f"cap_m_{pool.name}",
                            format_func=lambda m: "none (plain decoding)" if m == "plain" else m)
    rule, gated = "fixed", False
    if method == "lookup":
        rule = c[1].radio("draft length", ["match", "fixed"], key=f"cap_r_{pool.name}",
                          format_func={"match": "follows the match", "fixed": "fixed k"}.get)
        gated = c[3].checkbox("gate on its hit rate", key=f"cap_g_{pool.name}", help=C.GATE.words())
    own = method == "plain" or REGISTRY[method].sizes_own_drafts(rule)
    k = int(c[2].number_input("k", step=1, value=4, key=f"cap_k_{pool.name}", disabled=own,
                              help=f"1 to {C.K_MAX}; a method that sizes its own drafts ignores it"))
    return C.Choice(method, 1 if method == "plain" else k, rule, gated)


def prediction_guess(pool: C.Pool, choice: C.Choice, fs: dict) -> Guess:
    ex = Experiment((choice.setting(),), (pool.workload,), fs["tokens"], fs["temperature"],
                    against_plain=choice.method != "plain")
    return Guess(f"tokens/s of {pool.name}", "tps", lo=0.0, hi=100000.0, step=1.0, rel=0.25, abs_tol=0.5,
                 experiment=ex.describe())


def costs(offered: list[str], choices: dict, tgt, drafter):
    key = ("cap_costs", tgt.name, frozenset(offered), frozenset(c.method for c in choices.values()))
    if ss.get("cap_costs_key") != key:
        with st.spinner("Reading the models' KV cache per token…"):
            ss["cap_costs"] = C.costs_for([o.method for o in C.references(offered)]
                                          + [c.method for c in choices.values()], tgt, drafter)
        ss["cap_costs_key"] = key
    return ss["cap_costs"]


def memory_line(budget: R.Budget, fs: dict, fits: bool) -> None:
    (st.success if fits else st.warning)(
        f"Memory with these choices: {budget.sequences_with:,} sequences of {fs['context']:,} tokens fit in "
        f"{fs['memory_gb']:g} GB beside the weights ({budget.sequences_without:,} with plain decoding everywhere); "
        f"the batch needs {fs['batch']}. " + ("It fits." if fits else
                                               "It does **not** fit: this fleet scores 0 until it does."))


def run_fleet(tgt, drafter, plan: dict[str, list[C.Choice]], fs: dict) -> dict | None:
    n = len(plan)

    def work(progress):
        out = {}
        for i, pool in enumerate(C.POOLS):
            out[pool.name] = C.run_pool(tgt, pool, plan[pool.name], fs["tokens"], fs["temperature"], drafter,
                                        progress=lambda f, t, i=i, p=pool.name: progress((i + f) / n, f"{p}: {t}"))
        return out
    done = waiting.run_job("cap", work)
    return None if done is None else {"rows": done[0], "shared": done[1]}


def section() -> None:
    tgt, offered, _, drafter = loading.target_and_methods()
    fs = fleet_settings()
    st.subheader("Your choices and predictions")
    st.caption("Pick a method and k per pool (or none), then predict the tokens/s each pool will measure. "
               f"The gate: lookup {C.GATE.words()}.")
    choices, guesses, values = {}, {}, {}
    for pool in C.POOLS:
        with st.container(border=True):
            choices[pool.name] = pick(pool, offered)
            guesses[pool.name] = prediction_guess(pool, choices[pool.name], fs)
            values[pool.name] = G.ask(f"cap_{pool.name}", guesses[pool.name])
    try:
        for pool in C.POOLS:
            choices[pool.name].check(pool.name)
    except InputError as e:
        st.error(f"Check the settings: {e}")
        return
    target_cost, cost = costs(offered, choices, tgt, drafter)
    budget = C.fleet_budget(choices, cost, target_cost, fs["context"], fs["memory_gb"])
    fits = C.fits(budget, fs["batch"])
    memory_line(budget, fs, fits)
    plan = {p.name: C.options(choices[p.name], offered) for p in C.POOLS}
    st.caption(f"Each pool runs {', '.join(str(len(o)) for o in plan.values())} options (yours first, then the "
               "references) in one interleaved repeat against plain decoding, one sequence at a time: the batch "
               "prices the memory, the runs measure a single sequence's speed.")
    if st.button("Lock in my predictions and run the fleet", type="primary", key="cap_run") and all(
            G.lock(f"cap_{p.name}", values[p.name], guesses[p.name]) for p in C.POOLS):
        res = run_fleet(tgt, drafter, plan, fs)
        if res is not None:
            ss["cap_result"] = dict(res, choices=choices, fits=fits, budget=budget,
                                    fitting={p.name: C.fitting(p.name, plan[p.name], cost, target_cost, fs["batch"],
                                                               fs["context"], fs["memory_gb"])
                                             for p in C.POOLS}, guesses=guesses)
    res = G.kept("cap_result", "Commit to a prediction for every pool, then run the fleet.")
    if res is not None:
        results(res)


def results(res: dict) -> None:
    st.subheader("Scores")
    if res["shared"]:
        st.warning(waiting.SHARED_NOTE)
    scores = {p: C.score_pool(rows, res["fitting"][p]) for p, rows in res["rows"].items()}
    for pool, rows in res["rows"].items():
        G.show(f"cap_{pool}", res["guesses"][pool], {"tps": rows[0]["tokens_per_s"]})
    total = C.fleet_score(scores, res["fits"])
    m = st.columns(1 + len(scores))
    m[0].metric("fleet score", f"{total:.0%}", help="traffic-weighted share of each pool's best fitting tokens/s; "
                                                   "0 when the fleet does not fit its memory")
    for col, (pool, s) in zip(m[1:], scores.items()):
        col.metric(pool, f"{s['share_of_best']:.0%}", "best pick" if s["picked_best"] else None,
                   help="your pick's tokens/s ÷ the fastest option that fits the budget alone")
    predicted = {p: ss.get(f"cap_{p}_locked") for p in res["rows"]}
    st.plotly_chart(V.fleet_figure(res["rows"], {p: s["best"] for p, s in scores.items()}, predicted),
                    width="stretch", key="cap_fig")
    st.dataframe(pd.DataFrame([{"pool": p, "option": ("your choice: " if i == 0 else "") + r["label"],
                                "tokens/s": f"{r['tokens_per_s']:.1f}", "speedup": f"{r['speedup']:.2f}×",
                                "τ": f"{r['tau']:.2f}",
                                "α̂": F.num(r["alpha_hat"]),
                                "fits the budget alone": "yes" if r["label"] in res["fitting"][p] else "no",
                                "best": "★" if r["label"] == scores[p]["best"] else ""}
                               for p, rows in res["rows"].items() for i, r in enumerate(rows)]),
                 hide_index=True, width="stretch", column_config={"option": st.column_config.TextColumn(width="large")})
    runs = "; ".join(f"{p}: {rows[0]['run']}" for p, rows in res["rows"].items())
    st.caption(f"Your choices as run — {runs}. One repeat per option: a difference of a few percent is the machine's "
               f"noise. {loading.machine_caption()}.")
