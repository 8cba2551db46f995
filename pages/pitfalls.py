"""Two lessons shown live: a drafter must share the target's tokenizer; trained heads belong to one checkpoint."""
import pandas as pd
import streamlit as st
import torch

from specviz.core import fmt as F
from specviz.core.costmodel import breakeven_alpha
from specviz.core.sampling import SamplingConfig
from specviz.engine.methods import encode_prompt
from specviz.engine.workloads import COPY, NOVEL, WORKLOADS, of_kind
from specviz.teach import checkpoints as CK, mismatch, predict as P, reality as R
from specviz.teach.checkpoints import swap_verdict
from specviz.teach.guess import Guess
from specviz.ui import guess as G, links as LK, loading
from specviz.viz import compare as V, step as vz

st.title("Tokenizers & checkpoints")
LINK = [LK.Param("pit_text", "text"), LK.Param("pit_kind", "choice", options=(COPY, NOVEL)),
        LK.Param("pit_k", "int", 1, 8), LK.Param("pit_max_new", "int", 4, 128)]
LK.check("pitfalls", LINK)  # a shared link: one warning naming any parameter the widgets below will not take
link_box = st.container()   # "Link to this experiment", filled once every setting is drawn
target = loading.target_or_stop()

# -- (a) tokenizers must match ------------------------------------------------------------------
st.header("a · A drafter must share the target's tokenizer")
st.write("The verifier compares p(x) and q(x) for the *same token id* x. If the drafter numbers its "
         "tokens differently, id 345 means one piece of text to the drafter and another to the target, "
         "so the ratio p(x)/q(x) compares unrelated things. specviz refuses such a pair.")


@st.cache_resource(show_spinner="Training a small BPE tokenizer on the workload texts…")
def _other_drafter():
    return mismatch.other_drafter()


other = _other_drafter()
text = st.text_input("Text to tokenize with both", "The lighthouse keeper Marta Quill kept a logbook.",
                     key="pit_text", bind=LK.BIND)
if not text.strip():
    st.warning("Type some text to compare the two tokenizers.")
else:
    d = mismatch.demo(target, other, text)
    st.session_state["pit_demo"] = d
d = st.session_state.get("pit_demo")
if d:
    c1, c2, c3 = st.columns(3)
    c1.metric("target's token ids", f"{d.target_vocab:,}")
    c2.metric("this drafter's token ids", f"{d.drafter_vocab:,}")
    c3.metric("tokens for this text", f"{len(d.target_ids)} vs {len(d.drafter_ids)}")
    n = max(len(d.target_ids), len(d.drafter_ids))
    pad = lambda xs: [str(x) for x in xs] + [""] * (n - len(xs))  # noqa: E731
    piece = lambda tok, ids: [vz.token_label(tok, t) for t in ids]  # noqa: E731 - '␣' for a space, as elsewhere
    st.dataframe(pd.DataFrame({"target piece": pad(piece(target.tokenizer, d.target_ids)),
                               "target id": pad(d.target_ids),
                               "drafter piece": pad(piece(other.tokenizer, d.drafter_ids)),
                               "drafter id": pad(d.drafter_ids)}), hide_index=True)
    if d.first_difference is not None:
        i = d.first_difference
        st.markdown(f"The ids differ from position **{i}** on. Read the drafter's ids with the target's "
                    "vocabulary and you get:")
        st.code(target.tokenizer.decode(d.drafter_ids)[:200], language=None, wrap_lines=True)
    if d.refusal:
        st.info(f"**The check works: this pairing is refused, as intended.** specviz's plain acceptance rule "
                f"needs one shared token → id map, and this pair has none: {d.refusal}", icon=":material/block:")
    st.caption("Engines that pair different tokenizers do it one of two ways. vLLM's `use_heterogeneous_vocab` "
               "(the `draft_model` method only, greedy drafting; vllm/v1/spec_decode/vocab_mapping.py) intersects "
               "the two vocabularies once at start-up: the drafter may propose only tokens both vocabularies "
               "spell the same, mapped id to id. transformers' universal assisted generation "
               "(generation/candidate_generator.py, greedy) decodes the ids to text and re-encodes them with the "
               "other tokenizer on every step, which costs time and loses acceptance at token boundaries.")

# -- (b) heads are trained per checkpoint -------------------------------------------------------
st.header("b · Trained heads belong to one checkpoint")
st.write("Medusa and EAGLE heads are fitted to one model's hidden states. Fine-tune the model and the "
         "heads keep guessing for the old one until they are retrained. Lookup has no weights, so a "
         "model swap leaves it untouched.")
swap = CK.checkpoint_swap_inputs()
heads = swap.heads
if swap.missing:
    st.info("This comparison needs trained artifacts that are not in models/ yet: " + ", ".join(swap.missing)
            + ". Once they ship, this section measures the heads on both checkpoints here.")
else:
    c1, c2, c3 = st.columns(3)
    kind = c1.radio("Workload", [COPY, NOVEL], horizontal=True, key="pit_kind", bind=LK.BIND)
    k = c2.number_input("k", 1, 8, 4, key="pit_k", bind=LK.BIND)
    max_new = c3.number_input("max new tokens", 4, 128, 8 if loading.TINY else 48, key="pit_max_new",
                              bind=LK.BIND)
    HG = P.heads_guess(heads[0], of_kind(kind)[0].name, int(k), int(max_new))
    if G.ask_and_lock("pit_heads", HG, "Lock in my guess and measure on both checkpoints", type="primary"):
        with G.measuring(errors=G.ERRORS + (FileNotFoundError,), bar="loading the fine-tuned target…") as step:
            st.session_state["pit_swap"] = CK.checkpoint_swap(target, loading.finetuned_target(), of_kind(kind)[0],
                                                              heads + ["lookup"], int(k), SamplingConfig(),
                                                              int(max_new), progress=step)
    if "pit_swap" in st.session_state:
        rows, refusals = st.session_state["pit_swap"]
        G.show("pit_heads", HG, P.heads_truth(rows, heads[0]))
        st.plotly_chart(V.checkpoint_bars(rows), key="pit_swap_fig")
        st.markdown("Measured: " + "; ".join(swap_verdict(rows)) + ".")
        st.caption("Heads that accept little on the base checkpoint have little left to lose: the drop shows "
                   "most clearly with heads trained well enough to matter. Whatever the numbers, the heads must "
                   "be re-validated (and usually retrained) for every new checkpoint; lookup needs neither.")
        shown = F.cells(rows)  # '–' where nothing was measured (e.g. no acceptance rate without drafts)
        st.dataframe(pd.DataFrame(shown), hide_index=True)
        for what, msg in refusals.items():
            st.warning(f"Loading {what} — {msg}")
        st.caption("Greedy decoding, the same prompt and k on both checkpoints; lookup is the control: it has "
                   "no weights to go stale. One prompt is one draw: the fine-tune also changes how often the "
                   "greedy output repeats itself, which moves heads and lookup alike. The share lost over all "
                   "eight workloads (medians, `scripts/coupling.py`) is in models/README.md.")

with link_box:
    LK.share("pitfalls", LK.current(LINK), "press each button there: the runs are greedy, so they come out the same")

# -- (c) why heads must be trained: the target's own first layers, untrained --------------------------
st.header("c · Self-speculation by skipping layers, untrained")
st.write("Could the target draft for itself by running only its first N layers and its output layer? No weights "
         "to train, no memory to add. This measures how often that shortcut's top token equals the full model's, "
         "over every position of the workload prompts.")
LS = Guess("top-1 agreement of the first 16 of the target's layers with the full model (%)", "agree16",
           lo=0.0, hi=100.0, step=1.0, rel=0.0, abs_tol=10.0)
ls_guess = G.ask("pit_ls", LS)
if st.button("Lock in my guess and measure", key="pit_ls_run") and G.lock("pit_ls", ls_guess):
    n_layers = target.model.config.num_hidden_layers
    ns = tuple(sorted({n for n in (1, 2, 4, 8, 16, 24, 28) if n < n_layers} | {n_layers // 2}))
    ids = torch.cat([torch.tensor(encode_prompt(target.tokenizer, w.prompt, w.chat)).view(1, -1)
                     for w in WORKLOADS], 1)                                  # (1, T)
    with st.spinner("One forward pass, reading every layer's hidden state…"):
        st.session_state["pit_ls"] = (n_layers, R.layer_agreement(target.model, ids, ns), ids.shape[1])
if "pit_ls" in st.session_state:
    n_layers, agree, n_pos = st.session_state["pit_ls"]
    G.show("pit_ls", LS, {"agree16": 100 * agree.get(16, agree[max(agree)])})
    need = R.truncation_breakeven(target.model, list(agree), k=4)
    st.dataframe(pd.DataFrame({"first N layers": list(agree), "top-1 agreement": [f"{a:.0%}" for a in agree.values()],
                               "c (its layers + the output layer)": [f"{need[n][0]:.2f}" for n in agree],
                               "break-even α (k = 4, v = 1)": [F.num(need[n][1]) for n in agree]}),
                 hide_index=True)
    cheap = breakeven_alpha(4, 0.05, 1.0)                                      # the calculator's formula
    mid = n_layers // 2
    c_mid, a_mid = R.truncation_breakeven(target.model, [mid], k=4)[mid]
    st.markdown(f"Over {n_pos} positions of a {n_layers}-layer target. How much agreement pays depends on the "
                f"drafter's cost c (the break-even calculator, k = 4, v = 1): a drafter at c = 0.05 breaks even "
                f"near α ≈ {cheap:.2f}, while the first N layers cost the c in the third column — their share "
                f"of the weights a pass reads, the output layer included, since every draft ends in it — and need "
                f"the α in the last: c ≈ {c_mid:.2f} and α ≈ {'–' if a_mid is None else f'{a_mid:.2f}'} for the "
                f"first {mid} of these {n_layers}. Agreement is not quite α (α is per "
                "drafted position along a chain), but it is the same order. The early layers' hidden states are not "
                "yet in the form "
                "the output layer reads, so this shortcut agrees rarely until most of the model has run. This is the "
                "worst case of self-speculation: training-free methods skip *chosen intermediate* layers instead of "
                "cutting the model short (Draft & Verify, Zhang et al., ACL 2024; SWIFT, Xia et al., 2024, "
                "arXiv 2410.06916), and trained ones (LayerSkip; Medusa and EAGLE heads) fit weights to map an "
                "early or final hidden state to later tokens.")
