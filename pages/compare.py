"""Compare proposers: every available method against plain decoding, measured live in one run."""
import pandas as pd
import streamlit as st

from specviz.bench.results import bench_rows, bench_where, latest_bench
from specviz.core.sampling import SamplingConfig
from specviz.engine import comparisons as E
from specviz.engine.device import machine
from specviz.engine.experiment import mode_words
from specviz.engine.measure import too_noisy
from specviz.engine.methods import MATCH_MIN, SELF_SIZED_CAP, trained_available
from specviz.engine.workloads import ALL, COPY, NOVEL, WORKLOADS, of_kind
from specviz.teach import loops as LP, predict as P
from specviz.ui import guess as G, lecture, links as L, loading, recordings, sessions, state, waiting
from specviz.viz import compare as V

st.title("Compare proposers")
st.write("The same prompt through every proposer, measured now, on this machine, through the one decode "
         "loop. Each repeat runs plain decoding once and every method once, interleaved: speedup = method "
         "tokens/s ÷ the same repeat's plain tokens/s, end to end (prefill included), median over repeats. "
         "With more than one repeat, the spread between repeats is shown; a speedup whose spread is larger "
         "than its distance from 1 is too noisy to quote.")

target = None
if lecture.on():  # recordings only: no model here
    st.info(f"Running a comparison {lecture.NEEDS_MODEL} Open a recorded comparison below.",
            icon=":material/co_present:")
else:  # the live comparison: settings, estimate, Run
    target, methods, why_not, drafter = loading.target_and_methods()
    trained = trained_available()
    if why_not:
        st.info("Not available here: " + "; ".join(f"**{m}** — {r}" for m, r in why_not.items()))
    elif not trained.get("medusa") and not trained.get("eagle"):
        st.info("No trained heads (Medusa / EAGLE) are in models/ yet.")

    CHOICES = {f"every {COPY} workload": of_kind(COPY), f"every {NOVEL} workload": of_kind(NOVEL),
               "one of each kind": [of_kind(COPY)[0], of_kind(NOVEL)[0]], "all eight workloads": WORKLOADS}
    CHOICES.update({f"{w.name} ({w.kind})": [w] for w in ALL})  # incl. the translation-like one
    LINK = [L.Param("cmp_workloads", "choice", options=tuple(CHOICES)), L.Param("cmp_n", "int", 1, 6),
            L.Param("cmp_methods", "choices", options=tuple(methods)),
            L.Param("cmp_ks", "choices", options=tuple(range(1, 11))),
            L.Param("cmp_mode", "choice", options=("sampled", "greedy")), L.Param("cmp_temp", "float", 0.05, 2.0),
            L.Param("cmp_max_new", "int", 4, 256), L.Param("cmp_repeats", "int", 1, 5)]
    L.check("compare", LINK)  # a shared link: one warning naming any parameter the widgets below will not take
    c1, c3 = st.columns([4, 1])
    which = c1.selectbox("Workload", list(CHOICES), index=2, key="cmp_workloads", bind=L.BIND)
    n = c3.number_input("lookup n", 1, 6, MATCH_MIN, key="cmp_n", bind=L.BIND,
                        help=f"the shortest match that drafts; lookup and suffix draft as far as the match goes (up to "
                             f"{SELF_SIZED_CAP} tokens), so the k values apply to the other methods")
    # the methods on a row of their own: at a third of the page width the fifth chip was cut off
    chosen = st.multiselect("Methods (plain always runs)", methods, default=methods, key="cmp_methods", bind=L.BIND)
    c1, c2, c3, c4 = st.columns(4)
    ks = c1.multiselect("k values", list(range(1, 11)), default=[2] if loading.TINY else [4], key="cmp_ks",
                        bind=L.BIND)
    mode = c2.radio("Decoding", ["sampled", "greedy"], horizontal=True, key="cmp_mode", bind=L.BIND,
                    help="A 135M model decoded greedily falls into loops, and lookup copies the loop: "
                         "sampling shows lookup's real behaviour on novel text.")
    temp = c2.number_input("temperature", 0.05, 2.0, 0.8, 0.05, key="cmp_temp", disabled=mode == "greedy", bind=L.BIND)
    max_new = c3.number_input("max new tokens", 4, 256, 8 if loading.TINY else 32, key="cmp_max_new", bind=L.BIND)
    repeats = c4.number_input("repeats (medians)", 1, 5, 1, key="cmp_repeats", bind=L.BIND)

    runs_made = E.compare_runs(len(CHOICES[which]), chosen, ks, int(repeats))  # the runs E.compare makes
    st.caption(waiting.estimate(runs_made, int(max_new))[1] + " Any click on the page (or **Cancel**) stops a run.")
    plan = P.compare_plan(chosen, sorted(ks), int(n), [w.name for w in CHOICES[which]],
                          0.0 if mode == "greedy" else float(temp), int(max_new), int(repeats))
    FAST = P.compare_guess(plan) if plan.settings else None   # no contender (no method or no k): nothing to ask
    fast = G.ask("cmp_fast", FAST) if FAST else None   # optional: the comparison runs without one, scores one given
    b1, b2 = st.columns([1, 3])
    go = b1.button("Run the comparison", type="primary", key="cmp_run")
    if go and FAST is not None and fast is not None:
        G.lock("cmp_fast", fast, FAST)
    with b2:
        L.share("compare", L.current(LINK), "press Run there to measure it on that machine")
    waiting.said_cancelled("cmp", "Comparison")
    if go:
        sampling = SamplingConfig() if mode == "greedy" else SamplingConfig(temperature=float(temp))
        done = waiting.run_job("cmp", lambda progress: E.compare(target, CHOICES[which], chosen, sorted(ks), int(n),
                                                                 sampling, int(max_new), repeats=int(repeats),
                                                                 drafter=drafter, progress=progress))
        if done:
            runs, shared = done
            state.keep_comparison(state.Comparison(runs, mode if mode == "greedy" else f"sampled T={temp:g}", shared,
                                                   settings={"workloads": which, "methods": chosen, "ks": sorted(ks),
                                                             "n": int(n), "mode": mode, "temperature": float(temp),
                                                             "max_new": int(max_new), "repeats": int(repeats)}))
            for m, (r, plain_steps, shown) in E.for_calculator(runs).items():  # the median the table shows
                state.remember_run(m, r.summary, r.steps, r.plain, k=r.k, n=r.n, plain_steps=plain_steps,
                                   speedup=shown, setting=r.setting,
                                   mode=mode_words(0.0 if mode == "greedy" else float(temp)))

with st.expander("Recorded comparisons: download this one, or open one", icon=":material/save:"):
    opened = recordings.opened("cmp_upload", "compare", convert=lambda r: (r, recordings.compare_runs(r)))
    if opened is not None:
        rec, recorded_runs = opened
        state.keep_comparison(state.Comparison(recorded_runs, str(rec.extra.get("mode", rec.settings.get("mode", "?"))),
                                               bool(rec.extra.get("shared", False)), recorded=rec,
                                               settings=rec.settings))
    res = state.comparison()
    if res:
        recordings.download("Download this comparison", res.recorded or recordings.compare_recording(
            target, res.settings or {}, res.runs, res.mode, res.shared), key="cmp_download")

res = state.comparison()
if not res:
    st.info("Choose a workload and press **Run the comparison**.")
else:
    runs = res.runs
    rows = E.table(runs)
    st.subheader(f"Measured ({res.mode})")
    if res.recorded:
        st.info(f"From a recording made at {res.recorded.when} with {recordings.origin(res.recorded)}: every number "
                "below is the recording's, not measured now. Run the comparison to measure it here.",
                icon=":material/replay:")
    if res.shared:
        st.warning(waiting.SHARED_NOTE)
    if not res.recorded and not lecture.on() and FAST is not None:
        G.show("cmp_fast", FAST, {"fastest": P.fastest_method(rows)})
    st.plotly_chart(V.summary_bars(rows), key="cmp_bars")
    st.dataframe(pd.DataFrame(V.table_rows(rows)), hide_index=True, width="stretch")
    st.caption(V.DASH_WHY)
    noisy = [r for r in rows if r["method"] != "plain" and too_noisy(r["speedup"], r["spread"])]
    if noisy:
        st.warning("Too noisy to quote, re-measure: " + ", ".join(
            f"{r['setting']} on {r['workload']} ({r['speedup']:.2f}×, spread {r['spread']:.2f})"
            for r in noisy) + ". The spread between repeats is larger than the speedup's distance from 1.")
    st.caption("α = chance a tested draft is kept (accepted ÷ tested); α̂ (draft_acceptance_rate) = share of "
               "drafted tokens kept. spread = range (2–3 repeats) or interquartile range (4+) of the per-repeat "
               "speedups. repetition = share of the output's 4-grams that already appeared earlier in it "
               "(how much the text loops).")

    novel_plain, loops = LP.novel_loops(rows)
    if res.mode == "greedy" and loops:
        st.warning("Greedy decoding of this 135M model loops on novel prompts too: "
                   + ", ".join(f"{r['workload']} repeats {r['repetition']:.0%} of its 4-grams" for r in loops)
                   + ". Lookup copies the loop, so its numbers on these prompts flatter it. Switch to "
                     "**sampled** to see lookup on genuinely new text.")
    elif res.mode == "greedy" and novel_plain:
        st.caption("Greedy mode: a small model's greedy output tends to loop, which lookup can copy; "
                   "compare with sampled decoding before concluding anything about novel text.")

    st.subheader("Acceptance by draft position")
    st.plotly_chart(V.per_position(runs), key="cmp_pos")
    st.caption("a_i = share of steps that reached draft position i and kept it.")

    st.subheader("Where the time goes, step by step")
    wl = st.selectbox("Workload to show", list(dict.fromkeys(r.workload for r in runs)), key="cmp_tl_w")
    st.plotly_chart(V.timeline(E.one_repeat(runs, wl)), key="cmp_timeline")
    st.caption("Orange = drafting, blue = the target's verification pass. A draft model's k small passes "
               "run one after another before verification can start; lookup's search does not register.")
    st.plotly_chart(V.time_split([r for r in rows if r["workload"] == wl]), key="cmp_split")

    st.subheader("Recommendation per workload kind (from these measurements)")
    for rec in E.recommend(runs).values():
        st.markdown("- " + rec.text())
    kinds = {r.kind for r in runs}
    if len(kinds) < 2:
        st.caption("Only one kind was measured; choose 'one of each kind' to get both recommendations.")

if not lecture.on():  # the live parts below need the model
    st.divider()
    sessions.panel(target, methods)

    st.divider()
    st.subheader("Lookup on novel prompts: greedy vs sampled")
    st.write("The same novel prompts, lookup against plain decoding, once greedy and once sampled.")
    c1, c2, c3, _ = st.columns([1, 1, 1, 1], vertical_alignment="bottom")
    gk = c1.number_input("k for this check", 1, 10, 5, key="cmp_gvs_k")
    g_new = c2.number_input("max new tokens", 4, 256, 8 if loading.TINY else 64, key="cmp_gvs_max_new",
                            help="A small model's greedy output starts to loop after a few dozen tokens.")
    if c3.button("Run greedy vs sampled", key="cmp_gvs_run"):
        with G.measuring(bar="starting…", turn=True) as step:   # each run timed in this session's turn
            st.session_state["cmp_gvs"] = LP.greedy_vs_sampled(
                target, of_kind(NOVEL)[:1] if loading.TINY else of_kind(NOVEL)[:2], int(gk), 3, int(g_new),
                progress=step)
    gvs = st.session_state.get("cmp_gvs")
    if gvs:
        st.plotly_chart(V.greedy_vs_sampled(gvs), key="cmp_gvs_fig")
        for r, plain in LP.lookup_vs_plain(gvs):
            st.markdown(f"- **{r['workload']}, {r['mode']}**: plain output repeats {plain['repetition']:.0%} of "
                        f"its 4-grams; lookup τ = {r['tokens_per_pass']:.2f}, speedup {r['speedup']:.2f}×")

here = loading.loaded()
here = machine(here.device, here.dtype) if here else None
bench = latest_bench(here=here)
if bench:
    st.divider()
    st.subheader("Latest bench results file")
    st.caption(f"{bench[0]} — recorded by `python -m specviz bench`, shown beside the live numbers above; "
               f"{bench_where(bench[1], here)}.")
    rows_b = bench_rows(bench[1])
    if rows_b:
        st.dataframe(pd.DataFrame(rows_b), hide_index=True, column_config={
            **{c: st.column_config.NumberColumn(format="%.2f")
               for c in ["tokens_per_pass", "draft_acceptance_rate", "tokens_per_s", "speedup"]},
            "tokens": st.column_config.NumberColumn("tokens written", format="%.1f")})
    else:
        st.json(bench[1], expanded=False)
