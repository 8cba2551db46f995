"""Take it to a server: the vLLM `--speculative-config` for the method and settings chosen here."""
import json

import streamlit as st

from specviz.core import fmt as F
from specviz.engine import workloads
from specviz.teach import serving as S
from specviz.teach.guess import Guess
from specviz.ui import guess as G, links as LK, loading, state

st.title("Take it to a server")
st.write(f"The same choice — which proposer, which k, which n — written as the `--speculative-config` of "
         f"**vLLM {S.VLLM_VERSION}**. Every config below is checked against that release's rules before it is shown.")

LABELS = {"ngram": "n-gram prompt lookup (specviz: lookup)", "ngram_gpu": "n-gram prompt lookup, on the GPU",
          "suffix": "suffix decoding", "draft_model": "separate draft model (specviz: draft)",
          "eagle": "EAGLE head", "eagle3": "EAGLE-3 head", "mtp": "the model's own MTP layers",
          "medusa": "Medusa heads (removed from vLLM)",
          "recycle": "token recycling (specviz: recycle; vLLM has none)"}
TO_VLLM = S.FROM_SPECVIZ
# The link carries these (Step through's way, ui/links.py: read into the session state once, written back each run):
# the method widget shows labels, not names, and a measured recommendation pre-fills the state below.
DEFAULTS = {"srv_method": next(iter(LABELS)), "srv_k": 4, "srv_nmin": 2, "srv_nmax": 4, "srv_temp": 0.0,
            "srv_target": "HuggingFaceTB/SmolLM2-135M-Instruct", "srv_verify": "token", "srv_model": "",
            "srv_rules_workload": workloads.of_kind(workloads.COPY)[0].name,
            "srv_ds_workload": workloads.WORKLOADS[0].name}
DEFAULTS.update({f"srv_sfx_{short}": v for short, v in zip(S.SUFFIX_SHORT, S.SUFFIX_KEYS.values())})
LINK = [LK.Param("srv_method", "choice", options=tuple(LABELS)), LK.Param("srv_k", "int", 1, 16),
        LK.Param("srv_nmin", "int", 1, 10), LK.Param("srv_nmax", "int", 1, 10), LK.Param("srv_temp", "float", 0.0, 2.0),
        LK.Param("srv_target", "text"), LK.Param("srv_verify", "choice", options=("token", "block")),
        LK.Param("srv_model", "text"),
        LK.Param("srv_rules_workload", "choice", options=tuple(w.name for w in workloads.of_kind(workloads.COPY))),
        LK.Param("srv_ds_workload", "choice", options=tuple(w.name for w in workloads.WORKLOADS))]
LINK += [LK.Param(f"srv_sfx_{short}", "float" if isinstance(v, float) else "int", 0)
         for short, v in zip(S.SUFFIX_SHORT, S.SUFFIX_KEYS.values())]
LK.apply(LK.check("serve", LINK))  # a shared link's settings first (one warning naming a bad one), then the rest

# Start from this session's measured recommendation when there is one.
picked, n_run = state.recommended(TO_VLLM) or (None, None)
if picked and "srv_method" not in st.session_state:
    st.session_state["srv_method"] = TO_VLLM[picked.method]
    st.session_state["srv_k"] = int(picked.k)
    if picked.method == "lookup" and n_run:  # specviz ran one n: min = max = n
        st.session_state["srv_nmin"] = st.session_state["srv_nmax"] = int(n_run)
if picked:
    st.caption(f"Pre-filled from your comparison: {picked.setting} "
               f"({picked.speedup:.2f}× on {picked.kind} prompts).")
else:
    st.caption("Run **Compare proposers** first to pre-fill this from a measurement; defaults shown.")

for key, default in DEFAULTS.items():
    if not key.startswith(("srv_sfx_", "srv_method", "srv_rules", "srv_ds")):
        st.session_state.setdefault(key, default)  # widgets below take their values from here
c1, c2 = st.columns(2)
method = c1.selectbox("Method", list(LABELS), format_func=LABELS.get, key="srv_method")
k = c2.number_input("num_speculative_tokens (k)", 1, 16, key="srv_k")
target = st.text_input("Target model to serve (Hugging Face id or path)", key="srv_target")
temp = st.number_input("Temperature you will serve at (0 = greedy)", 0.0, 2.0, step=0.1, key="srv_temp")
verify = st.radio("Verification (rejection_sample_method)", ["token", "block"], horizontal=True, key="srv_verify",
                  format_func={"token": "token by token (standard, vLLM's default)",
                               "block": "block verification (block; specviz: --verify block)"}.get)
n_min = n_max = model = suffix = None
if method in S.REMOVED:
    st.error(S.removed_message(method))
    alt = S.NEAREST.get(method)
    if alt:
        st.button(f"Use {alt} instead", key="srv_use_nearest",
                  on_click=lambda: st.session_state.update(srv_method=alt))
elif method in S.NGRAM:
    c1, c2 = st.columns(2)
    n_min = c1.number_input("prompt_lookup_min", 1, 10, key="srv_nmin")
    n_max = c2.number_input("prompt_lookup_max", 1, 10, key="srv_nmax")
    st.caption(S.LOOKUP_MATCH_NOTE)
elif method == "suffix":
    c = st.columns(4)
    knobs = zip(S.SUFFIX_KEYS.items(), S.SUFFIX_SHORT, S.SUFFIX_HELP)
    suffix = {key: c[i].number_input(key, value=default, step=0.05 if isinstance(default, float) else 1,
                                     key=f"srv_sfx_{short}", help=hlp)
              for i, ((key, default), short, hlp) in enumerate(knobs)}
    st.caption(S.SUFFIX_DEPENDENCY)
elif method in S.NEEDS_MODEL:
    model = st.text_input("model — the draft checkpoint (Hugging Face id or path)", key="srv_model",
                          placeholder="e.g. an EAGLE / Medusa / drafter checkpoint trained for this target")

cfg = None
if method not in S.REMOVED:
    try:
        cfg = S.build(method, int(k), n_min, n_max, model, temperature=float(temp), suffix=suffix, verify=verify)
        st.session_state["srv_last"] = cfg
    except S.ConfigError as e:
        (st.warning if method in S.NEEDS_MODEL and not (model or "").strip() else st.error)(str(e))

last = st.session_state.get("srv_last")
# the last valid config only while it is for the chosen method: never another method's under this one's name
shown = cfg or (last if last and method not in S.REMOVED and last["method"] == method else None)
if shown:
    if cfg is None:
        st.caption("Showing the last valid config for this method.")
    st.subheader("--speculative-config")
    st.code(json.dumps(shown, indent=2), language="json")
    st.subheader("Command line")
    st.code(S.command(target.strip() or "YOUR_MODEL", shown), language="bash", wrap_lines=True)
    blocker = S.target_blocker(shown["method"], target.strip())
    (st.warning if blocker else st.success)(f"Checked against vLLM {S.VLLM_VERSION}'s config rules: " + ", ".join(
        ["method is one of " + "/".join(S.VLLM_METHODS), "num_speculative_tokens ≥ 1"]
        + (["1 ≤ prompt_lookup_min ≤ prompt_lookup_max"] if shown["method"] in S.NGRAM else [])
        + (["a model is given"] if shown["method"] in S.NEEDS_MODEL else [])
        + (["suffix_decoding_* keys in range"] if shown["method"] == "suffix" else [])
        + (["draft_sample_method is greedy or probabilistic"] if "draft_sample_method" in shown else []))
        + (". " + blocker if blocker else ""))
    if shown["method"] in S.HAS_Q:
        st.info(S.SAMPLING_NOTE + (" Your temperature is above 0, so the config asks for \"probabilistic\"."
                                   if shown.get("draft_sample_method") == "probabilistic" else
                                   " At temperature 0 both agree (q is one-hot either way), so nothing is added."))
    st.subheader("What does not carry over")
    st.warning(S.CAVEATS.get(shown["method"], "specviz has nothing to measure this method with."))

link_box = st.container()  # "Link to this experiment" under the config, filled at the end with every setting drawn
st.subheader("Which earlier occurrence does lookup copy?")
st.write("vLLM's n-gram proposer takes the **earliest** occurrence among the longest matches of the context's tail; "
         "specviz's lookup takes the **most recent**. Guess which one keeps more drafts, then measure both on the "
         "same prompt and settings.")
RULE_GUESS = Guess("which rule gives more tokens per pass here?", "winner",
                   choices=("most recent (specviz)", "earliest (vLLM)", "about the same (within 5%)"))
c1, c2 = st.columns(2)
wname = c1.selectbox("Workload", [w.name for w in workloads.of_kind(workloads.COPY)], key="srv_rules_workload")
rguess = G.ask("srv_rules", RULE_GUESS)
if st.button("Measure both rules", key="srv_rules_run") and G.lock("srv_rules", rguess):
    tgt = loading.target()
    if tgt is not None:
        with st.spinner("Decoding the prompt twice, once per rule…"):
            res = S.lookup_rules(tgt, workloads.get(wname), k=4, n_min=1, n_max=4, max_new=12 if loading.TINY else 64)
        st.session_state["srv_rules"] = (wname, res)
if "srv_rules" in st.session_state:
    wn, res = st.session_state["srv_rules"]
    a, b = res["recent"]["tokens_per_pass"], res["earliest"]["tokens_per_pass"]
    winner = ("about the same (within 5%)" if abs(a - b) <= 0.05 * max(a, b) else
              "most recent (specviz)" if a > b else "earliest (vLLM)")
    G.show("srv_rules", RULE_GUESS, {"winner": winner})
    st.dataframe([{"rule": r, "tokens per pass τ": f"{v['tokens_per_pass']:.2f}", "drafted": v["drafted"],
                   "accepted": v["accepted"], "draft acceptance α̂": F.num(v["draft_acceptance"]),
                   "target passes": v["passes"]} for r, v in res.items()],
                 hide_index=True)
    st.caption(f"Measured now on {wn}: greedy, k = 4, n from 1 to 4. In a loop or a repeated phrase the most recent "
               "occurrence is usually the one being continued; the earliest can be a stale context.")
st.subheader("Greedy or probabilistic drafting?")
st.write("vLLM's `draft_sample_method` decides how a drafter with a distribution q drafts at temperature > 0: "
         "**greedy** proposes q's argmax and the draft is kept with probability p(argmax q); **probabilistic** "
         "samples x ~ q and keeps it with probability min(1, p(x)/q(x)), Σ min(p, q) on average. Both are lossless; "
         "which keeps more depends on p and q. Guess, then measure both on this target's real next tokens.")
if not loading.drafter_names():
    st.info("This needs a draft model, and none is available for this target.")
else:
    DS_GUESS = Guess("which keeps more drafts on average here?", "winner", choices=S.DRAFT_SAMPLE_CHOICES)
    wds = st.selectbox("Workload", [w.name for w in workloads.WORKLOADS], key="srv_ds_workload")
    if G.ask_and_lock("srv_ds", DS_GUESS, "Measure both ways", run_key="srv_ds_run") and \
            (tgt := loading.target()) is not None and (dm := loading.first_drafter()) is not None:
        with G.measuring(errors=()) as step:
            st.session_state["srv_ds"] = S.draft_sampling(
                tgt, dm, workloads.get(wds), 0.8, 4, 12 if loading.TINY else 48, 6 if loading.TINY else 12,
                progress=step)
    ds = st.session_state.get("srv_ds")
    if ds:
        G.show("srv_ds", DS_GUESS, ds)
        c = st.columns(4)
        c[0].metric("kept, greedy drafting", f"{ds['mean_greedy']:.2f}", help="mean p(argmax q) over the positions")
        c[1].metric("kept, probabilistic", f"{ds['mean_probabilistic']:.2f}", help="mean Σ min(p, q)")
        c[2].metric("τ, greedy drafting", f"{ds['tau']['greedy']:.2f}")
        c[3].metric("τ, probabilistic", f"{ds['tau']['probabilistic']:.2f}")
        st.dataframe([{k: (f"{v:.3f}" if isinstance(v, float) else v) for k, v in r.items()} for r in ds["rows"]],
                     hide_index=True)
        st.caption(f"Measured now: {ds['settings']}. One prompt and one seed are one draw; the per-position "
                   "columns say where each rule wins.")
st.caption("Numbers measured in specviz come from batch-1 decoding on this machine; a server batching many "
           "requests has less idle compute to spend on verification, so expect smaller gains there — the "
           "Serving reality page measures how v(k) grows with the batch.")
with link_box:
    LK.share("serve", LK.write(LINK, DEFAULTS), "the same config, and the same workloads for the measurements")
