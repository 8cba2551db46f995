"""Take it to a server: the vLLM `--speculative-config` for the method and settings chosen here."""
import json

import streamlit as st

from specviz.ui import support as app
from specviz.teach import experiments as E
from specviz.teach import serving as S

st.title("Take it to a server")
st.write("The same choice — which proposer, which k, which n — written as vLLM's `--speculative-config`. "
         "Every config below is checked against vLLM's rules before it is shown.")

LABELS = {"ngram": "n-gram prompt lookup (specviz: lookup)", "draft_model": "separate draft model (specviz: draft)",
          "eagle": "EAGLE head", "eagle3": "EAGLE-3 head", "medusa": "Medusa heads"}
TO_VLLM = {"lookup": "ngram", "draft": "draft_model", "eagle": "eagle", "medusa": "medusa"}

# Start from this session's measured recommendation when there is one.
res = st.session_state.get("cmp_result")
recs = E.recommend(res["runs"]) if res else {}
picked = next((r for r in recs.values() if r.method in TO_VLLM), None)
if picked and "srv_method" not in st.session_state:
    st.session_state["srv_method"] = TO_VLLM[picked.method]
    st.session_state["srv_k"] = int(picked.k)
    n_run = next((r.n for r in res["runs"] if r.method == "lookup" and r.n), None)
    if picked.method == "lookup" and n_run:  # specviz ran one n: min = max = n
        st.session_state["srv_nmin"] = st.session_state["srv_nmax"] = int(n_run)
if picked:
    st.caption(f"Pre-filled from your comparison: {picked.method}, k = {picked.k} "
               f"({picked.speedup:.2f}× on {picked.kind} prompts).")
else:
    st.caption("Run **Compare proposers** first to pre-fill this from a measurement; defaults shown.")

for key, default in (("srv_k", 4), ("srv_nmin", 2), ("srv_nmax", 4)):
    st.session_state.setdefault(key, default)  # widgets below take their values from here
c1, c2 = st.columns(2)
method = c1.selectbox("Method", list(LABELS), format_func=LABELS.get, key="srv_method")
k = c2.number_input("num_speculative_tokens (k)", 1, 16, key="srv_k")
target = st.text_input("Target model to serve (Hugging Face id or path)", "HuggingFaceTB/SmolLM2-135M-Instruct",
                       key="srv_target")
n_min = n_max = model = None
if method == "ngram":
    c1, c2 = st.columns(2)
    n_min = c1.number_input("prompt_lookup_min", 1, 10, key="srv_nmin")
    n_max = c2.number_input("prompt_lookup_max", 1, 10, key="srv_nmax")
else:
    model = st.text_input("model — the draft checkpoint (Hugging Face id or path)", "", key="srv_model",
                          placeholder="e.g. an EAGLE / Medusa / drafter checkpoint trained for this target")

try:
    cfg = S.build(method, int(k), n_min, n_max, model)
    st.session_state["srv_last"] = cfg
except S.ConfigError as e:
    (st.warning if method != "ngram" and not (model or "").strip() else st.error)(str(e))
    cfg = None

shown = cfg or st.session_state.get("srv_last")
if shown:
    if cfg is None:
        st.caption("Showing the last valid config.")
    st.subheader("--speculative-config")
    st.code(json.dumps(shown, indent=2), language="json")
    st.subheader("Command line")
    st.code(S.command(target.strip() or "YOUR_MODEL", shown), language="bash", wrap_lines=True)
    st.success("Checked: " + ", ".join(["method is one of " + "/".join(S.VLLM_METHODS), "num_speculative_tokens ≥ 1"]
                                       + (["1 ≤ prompt_lookup_min ≤ prompt_lookup_max"] if shown["method"] == "ngram"
                                          else ["a model is given"])))
    st.subheader("What does not carry over")
    st.warning(S.CAVEATS[shown["method"]])
st.caption("Numbers measured in specviz come from batch-1 decoding on this machine; a server batching many "
           "requests has less idle compute to spend on verification, so expect smaller gains there.")
