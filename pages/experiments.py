"""k / n experiments: sweep the draft length k (and lookup's match length n) and measure."""
import pandas as pd
import streamlit as st

from specviz.core.errors import InputError
from specviz.core.repetition import repetition
from specviz.core.sampling import SamplingConfig
from specviz.engine import sweeps as SW
from specviz.engine.workloads import ALL, NOVEL, get
from specviz.teach import predict as P
from specviz.ui import guess as G, links as L, loading, match_rule, recordings, waiting
from specviz.viz import compare as V

st.title("k / n experiments")
st.write("Sweep the draft length k (and, for lookup, the match length n) on one workload. The sweep runs "
         "plain decoding once and then every setting once (one repeat of engine/measure's interleaving); each "
         "speedup is that setting's tokens/s ÷ the plain run's tokens/s, end to end. The estimate below comes "
         "from a decoding step timed on this machine just now.")

target, methods, why_not, drafter = loading.target_and_methods()
if why_not:
    st.info("Not available here: " + "; ".join(f"**{m}** — {r}" for m, r in why_not.items()))

LINK = [L.Param("exp_workload", "choice", options=tuple(w.name for w in ALL)),
        L.Param("exp_method", "choice", options=tuple(methods)), L.Param("exp_k", "range", 1, 10),
        L.Param("exp_knob", "choice", options=tuple(SW.SUFFIX_KNOBS)), L.Param("exp_n", "range", 1, 6),
        L.Param("exp_mode", "choice", options=("greedy", "sampled")), L.Param("exp_temp", "float", 0.05, 2.0),
        L.Param("exp_max_new", "int", 4, 128)]
linked = L.check("experiments", LINK)  # a shared link: one warning naming any parameter the widgets will not take
LABELLED = [p for p in LINK if p.key in ("exp_workload", "exp_knob")]  # shown by label: not bound (ui/links.pin)
L.apply({p.key: linked[p.key] for p in LABELLED if p.key in linked})
c1, c2 = st.columns(2)
wname = c1.selectbox("Workload", [w.name for w in ALL],
                     format_func=lambda n: f"{n} ({get(n).kind})", key="exp_workload")
method = c2.selectbox("Method", methods, key="exp_method", bind=L.BIND)
c1, c2 = st.columns(2)
k_lo, k_hi = c1.slider("k range", 1, 10, (1, 3) if loading.TINY else (1, 6), key="exp_k", bind=L.BIND,
                       help="draft length; for recycle, the static tree's size in nodes (its shape follows from it)")
if method == "suffix":  # suffix has no n: sweep one of its knobs instead (the others at their defaults)
    knob = c2.selectbox("Sweep suffix's", list(SW.SUFFIX_KNOBS), format_func=SW.SUFFIX_KNOBS.get, key="exp_knob",
                        help="depth cap: match + draft within this many tokens; spec factor: a match of m tokens "
                             "drafts at most factor × m; minimum probability: rarer continuations are cut. "
                             "k is the tree's node budget.")
    vtext = c2.text_input(f"{SW.SUFFIX_KNOBS[knob]} values", SW.SUFFIX_VALUES[knob], key=f"exp_vals_{knob}")
else:
    n_lo, n_hi = c2.slider("n range (lookup)", 1, 6, (1, 2) if loading.TINY else (2, 4), key="exp_n", bind=L.BIND,
                           disabled=method != "lookup")
c1, c2, c3 = st.columns(3)
mode = c1.radio("Decoding", ["greedy", "sampled"], horizontal=True, key="exp_mode", bind=L.BIND)
temp = c2.number_input("temperature", 0.05, 2.0, 0.8, 0.05, key="exp_temp", disabled=mode == "greedy", bind=L.BIND)
max_new = c3.number_input("max new tokens", 4, 128, 6 if loading.TINY else 24, key="exp_max_new", bind=L.BIND)
L.pin(LABELLED)
L.share("experiments", L.current(LINK), "lock a guess there to run the sweep")
ks, ns = list(range(k_lo, k_hi + 1)), list(range(n_lo, n_hi + 1)) if method == "lookup" else None
values, bad = None, None
if method == "suffix":
    try:
        values = SW.suffix_values(knob, vtext)
    except InputError as e:
        bad = str(e)
        st.error(f"Check the settings: {bad}")
runs = SW.suffix_sweep_runs(ks, values or []) if method == "suffix" else SW.sweep_runs(method, ks, ns)
st.caption(waiting.estimate(runs, int(max_new))[1] + " Any click on the page (or **Cancel**) stops a sweep.")

PLAN = P.sweep_plan(method, wname, ks, ns, 0.0 if mode == "greedy" else float(temp), int(max_new),
                    knob if method == "suffix" else None, values)   # what the guess names is what runs below
KG = P.kzero_guess(PLAN, k_hi)
go = G.ask_and_lock("exp", KG, "Lock in my guess and run the sweep", type="primary",
                    disabled=method is None or bad is not None)
waiting.said_cancelled("exp", "Sweep")
if go:
    sampling = SamplingConfig() if mode == "greedy" else SamplingConfig(temperature=float(temp))
    done = waiting.run_job("exp", lambda progress: SW.suffix_sweep(
        target, get(wname), ks, knob, values, sampling, int(max_new), progress=progress) if method == "suffix" else
        SW.sweep(target, get(wname), method, ks, ns, sampling, int(max_new), drafter=drafter, progress=progress,
               k_rule="fixed"))
    if done:
        (points, plains), shared = done
        settings = {"workload": wname, "method": method, "ks": ks, "ns": ns, "mode": mode, "max_new": int(max_new),
                    "temperature": None if mode == "greedy" else float(temp)}
        if method == "suffix":
            settings.update(knob=knob, values=values)
        st.session_state["exp_result"] = {"points": recordings.lean_points(points), "plains": plains, "method": method,
                                          "workload": wname, "mode": mode, "shared": shared, "settings": settings,
                                          "plan": PLAN}

with st.expander("Recorded sweeps: download this one, or open one", icon=":material/save:"):
    opened = recordings.opened("exp_upload", "sweep", convert=lambda r: (r, recordings.sweep_points(r)))
    if opened is not None:  # a recording replaces the session's sweep; a bad file leaves it as it was
        rec, (points, plains) = opened
        st.session_state["exp_result"] = {"points": points, "plains": plains, "method": rec.settings.get("method"),
                                          "workload": rec.settings.get("workload"), "mode": rec.settings.get("mode"),
                                          "shared": bool(rec.extra.get("shared")), "settings": rec.settings,
                                          "recorded": rec}
    res = st.session_state.get("exp_result")
    if res:
        recordings.download("Download this sweep", res.get("recorded") or recordings.sweep_recording(
            target, res["settings"], res["points"], {"shared": res["shared"]}), key="exp_download")


def show_sweep(res: dict) -> None:
    """The sweep's result: the guess scored, the fastest setting, the lines, the heatmap, the table."""
    points = res["points"]
    st.subheader(f"{res['method']} on {res['workload']} ({res['mode']})")
    if res.get("recorded"):
        st.info(f"From a recording made at {res['recorded'].when} with {recordings.origin(res['recorded'])}: every "
                "number below is the recording's, not measured now. Run the sweep to measure it here.",
                icon=":material/replay:")
    if res.get("plan"):
        st.caption(f"The sweep: {res['plan'].describe()}.")
    if res.get("shared"):
        st.warning(waiting.SHARED_NOTE)
    G.show("exp", KG, {"best_k": P.best_k_or_zero(points)})
    best = max(points, key=lambda p: p.speedup)
    plain_tps = res["plains"][0].tokens_per_s
    if best.speedup <= 1.0:
        st.info("No k beat plain decoding here, so the best k is 0: k = 0 *is* plain decoding (nothing drafted, "
                "nothing to verify), exactly 1.0× by definition. A server set up like this should not speculate.")
    named = best.setting.describe(short=True) if best.setting else f"k = {best.k}"   # a recording from before
    st.markdown(f"Fastest measured setting: **{named}**"
                + f" — {best.speedup:.2f}× plain ({plain_tps:.1f} tokens/s), {best.summary.tokens_per_pass:.2f} "
                "tokens per pass. One repeat: the spread of these speedups is unknown, so differences of a few "
                "percent between settings may be the machine's noise; tokens per pass does not depend on it.")
    if res["mode"] == "greedy" and get(res["workload"]).kind == NOVEL:
        rep = repetition(res["plains"][0].token_ids)
        st.caption(f"Greedy on a novel prompt: the plain output repeats {rep:.0%} of its 4-grams. A 135M model's "
                   "greedy output tends to loop, and lookup copies the loop, so lookup can look good here for the "
                   "wrong reason; sample (temperature > 0) to see it on genuinely new text.")
    st.plotly_chart(V.sweep_lines(points), key="exp_lines")
    if res["method"] in ("lookup", "suffix") and len({p.n for p in points}) > 1:
        metric = st.radio("Heatmap of", ["speedup", "tokens_per_pass", "draft_acceptance_rate"], horizontal=True,
                          key="exp_heat_metric")
        st.plotly_chart(V.sweep_heatmap(points, metric), key="exp_heat")
        st.caption("A wider match (larger n) is pickier: it fires less often but is right more often. "
                   "A longer draft (larger k) pays off only while the copied run keeps matching." if res["method"] ==
                   "lookup" else "A deeper cap and a larger factor let a long match draft further; a higher minimum "
                   "probability drafts fewer, surer branches. k caps the tree's nodes either way.")
    st.dataframe(pd.DataFrame(V.sweep_rows(points)), hide_index=True, column_config={
        c: st.column_config.NumberColumn(format="%.2f")
        for c in ["draft_acceptance_rate", "tokens_per_pass", "speedup", "tokens_per_s"]})


res = st.session_state.get("exp_result")
if not res:
    st.info("Pick a workload and a method, then press **Run the sweep**.")
else:
    show_sweep(res)
match_rule.section()
