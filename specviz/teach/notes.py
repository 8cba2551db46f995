"""Short notes where a learner would ask, each with its source. Pages show them with st.markdown (one version)."""

# Home, the proposer guide: two newer methods this app runs, and methods it does not run.
OTHER_PROPOSERS = """\
**Two newer proposers this app runs** (methods `eagle3` / `eagle3-tree` and `suffix`, with their own rows on Compare
and in the bench):
- **EAGLE-3** (Li et al. 2025, arXiv 2503.01840): the head no longer predicts the target's top-layer feature; it
  reads a fusion of low-, middle- and high-layer features of the target and predicts tokens directly. It is trained
  with *training-time test*: during training the head is fed its own earlier outputs, as it will be when drafting
  several steps, so that its errors do not compound unseen. That is what lets it gain from more training data.
  specviz's `eagle3` is a one-layer EAGLE-3-style head fusing three target layers (2, 15, 29), trained on a CPU
  with two unrolled passes (models/README.md).
- **Suffix decoding** (Oliaro et al., SuffixDecoding, arXiv 2411.04975): model-free like lookup, but it searches
  suffix trees built over the prompt *and earlier outputs* and proposes a tree of likely continuations, sized by how
  often each continuation was seen. Strong on repetitive agent workloads.

**Proposers this app does not run** (what they do, in short):
- **MTP, multi-token prediction** (DeepSeek-V3 technical report, arXiv 2412.19437): the model is trained with extra
  modules that predict tokens further ahead; at serving time those modules are the drafter (vLLM's method "mtp").
  Only models trained with them have them — SmolLM2 does not.
- **Lookahead decoding** (Fu et al. 2024, arXiv 2402.02057): no drafter either; the target itself runs Jacobi
  iterations on a window of guessed future tokens, collects the n-grams that appear, and verifies matching n-grams in
  the same forward pass.
"""

# Is it lossless? and Derivations: the distributions the rule compares.
WARPED = """\
**p and q must both be the warped distributions.** Temperature, top-k and top-p change the distribution a token is
sampled from. The rule is exact for whatever p it is given: if the server samples from softmax(logits / T) restricted
to top-k and top-p, then p in min(1, p/q) and in the residual must be *that* distribution, and q must be the
distribution the draft token was really drawn from (after the drafter's own warping). Compare the raw p with a warped
q, or the other way round, and the output drifts exactly as the broken rules above do. specviz builds both with one
function (core/sampling.py `logits_to_probs`) from the same settings.
"""

# Trees / Derivations: why a learned drafter's acceptance usually falls with temperature, and when it does not.
TEMPERATURE = """\
**Why a learned drafter's acceptance usually falls as temperature rises.** At T = 0 both p and q are one-hot, so a
draft is kept whenever the two argmaxes agree — and a small drafter trained on the target's outputs agrees on the top
token far more often than it matches the target's whole distribution. As T rises, p and q spread out and the rule
keeps Σ min(p, q) = 1 − TV(p, q): every difference in the tails now costs acceptance. (One-hot proposers such as
lookup keep a draft with probability p(x), which also falls as p flattens.) **Usually, not always:** where the
argmaxes differ, acceptance at T = 0 is 0 and *rises* with T, as p and q start to overlap. Which effect wins depends
on how often the drafter's top token is the target's. Measure it: Derivations, "Temperature and warping", or
Compare's greedy vs sampled table.
"""

# Trees: other methods that verify a tree (or many candidates) in one pass.
TREES = """\
**Other tree-shaped proposers.** EAGLE-3 (arXiv 2503.01840) drafts a dynamic tree as EAGLE-2 does; SuffixDecoding
(arXiv 2411.04975) proposes a tree of continuations read from its suffix trees; lookahead decoding (arXiv 2402.02057)
verifies several candidate n-grams in the same pass that generates new ones. Each checks its candidates in one target
pass, with an attention mask that lets every candidate see only its own ancestors, as the mask on this page does.
"""
