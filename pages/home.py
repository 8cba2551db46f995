"""Home: what speculative decoding is, where each page fits, and how to pick a proposer."""
import streamlit as st

from specviz.teach import default_method as DM, notes as NOTES
from specviz.ui import loading
from specviz.ui.routes import ROUTES

st.title("specviz — speculative decoding, step by step")


def load_status():
    state, waited = loading.preload()  # starts the target loading in the background; never blocks
    if state == "loading":
        st.info(f"Loading the target model in the background: {waited:.0f} s so far, reading its weights from "
                "disk and building the model. That takes longer when the machine is busy with other work. Read "
                "on — the live pages will be ready when you get there.",
                icon=":material/hourglass_top:")
    elif state == "ready":
        tgt = loading.loaded()
        dt = str(tgt.dtype).removeprefix("torch.") if tgt is not None else loading.settings()["dtype"]
        st.success(f"Target model loaded: {loading.target_label()}, {dt}.",
                   icon=":material/check_circle:")
    else:
        st.error(f"The target model could not be loaded: {state.removeprefix('failed: ')}")
    return state


if loading.preload()[0] == "loading":
    @st.fragment(run_every=2)
    def _poll():
        if load_status() != "loading":
            st.rerun()  # redraw the page once, without the timer
    _poll()
else:
    load_status()

st.markdown("""
A language model writes one token per forward pass, and on a CPU or a GPU at batch size 1 that pass
is limited by how fast the weights can be read, not by arithmetic. Checking **five** proposed tokens
in one pass costs about as much as producing **one**, where the hardware has the arithmetic to spare (a GPU; a
CPU with native units for the model's dtype: *Serving reality* measures it here, and shows a CPU where bfloat16
rows cost almost a full pass each). Speculative decoding exploits this: something
cheap *proposes* a few tokens, the big model *verifies* them all in a single pass, keeps the longest
prefix it agrees with and adds one token of its own. When the guesses are good, each expensive pass
commits several tokens; when they are bad, the pass still commits one, and the only loss is the
cost of guessing and of the slightly wider pass.

The acceptance rule is built so that nothing is lost: a proposed token x is kept with probability
min(1, p(x) / q(x)) — p is the target's distribution, q the proposer's — and after a rejection the
replacement is drawn from what p has left over, norm(max(0, p − q)). The text then follows p exactly,
however poor the proposer. With greedy decoding the rule reduces to "keep the guess while it is the
target's own argmax".

Everything here runs for real on **SmolLM2-135M-Instruct** on this machine: every number about this app's
models is measured, and names its run. Figures quoted from papers and engines (the speedups on Serving
reality, the notes below) are theirs, with their source beside them, not measured here.
""")

st.subheader("Where to go")
for col, n in zip(st.columns(2), (1, 2)):   # the pages' titles, icons and blurbs: specviz/ui/routes.json
    with col:
        for r in (r for r in ROUTES if r.home_column == n):
            st.page_link(r.path, label=r.title, icon=r.material)
            st.caption(r.about)

st.subheader("Choosing a proposer: start from the workload")
st.markdown(DM.why(DM.load()))
st.markdown(DM.on_this_machine())
st.markdown("""
| | Prompt lookup (n-gram) | Separate draft model | Heads on the target (Medusa, EAGLE) |
|---|---|---|---|
| **Where guesses come from** | copies what followed the last n tokens earlier in the context | a small model with the **same tokenizer** runs k steps | small trained layers read the target's own hidden state |
| **Cost per guess** | a search in an integer array: ≈ 0 | k small forward passes, **one after another** | one or a few tiny passes |
| **Memory** | none | its weights plus its own KV cache for every sequence | head weights: a few MB for this 135M target, but about 0.24B parameters for an EAGLE head on a 7B target; EAGLE's head also keeps its own KV cache |
| **Works well on** | text that repeats the prompt: summaries that keep names, code edits, quoting, reformatting | genuinely new text the draft model predicts well | new text, once trained for this exact checkpoint |
| **Fails on** | open-ended writing (nothing to copy) — a small cost each step, not a disaster | a drafter with another tokenizer: the plain rule needs one shared token → id map. vLLM's `use_heterogeneous_vocab` intersects the two vocabularies once at start-up (greedy drafting, `draft_model` only); transformers' universal assisted generation re-tokenises text every step. This app refuses such a pair | a new or fine-tuned checkpoint: retrain and re-validate |
""")  # noqa: E501 (markdown table rows and list items are one line each)
st.markdown("""
- **Lookup is free and shaped by the workload.** Play a copy-heavy preset and then a novel one on
  Step through, and watch the draft acceptance rate α̂ (share of drafted tokens kept) move; the comparison page measures it per workload.
- **A draft model's steps are serial**, so its cost c multiplies with k. The
  calculator shows how quickly a modest c eats the gain.
- **The tokenizer must match for the plain rule**: p and q must be over the same token ids, or p(x)/q(x) compares unrelated tokens (the cross-vocabulary methods above change the rule's inputs to get around it).
- **Heads are tied to one checkpoint**: they read one model's hidden states and must be retrained when it changes.
- **Read headline numbers with their rule**: Medusa's reported speedups *with sampling* used
  "typical acceptance", a relaxed rule that keeps plausible tokens and is **not** lossless; the rule on this
  app's pages is the exact one.
- With a small model decoded greedily, the output tends to loop — and a loop is something lookup can copy.
  Sample at a temperature above 0 to see lookup on genuinely novel text.
""")  # noqa: E501 (markdown table rows and list items are one line each)
st.markdown(NOTES.OTHER_PROPOSERS)
