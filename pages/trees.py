"""Trees: several candidates per position, checked in one target pass (Medusa's static tree, EAGLE-2's dynamic one)."""
import streamlit as st

from specviz.core.errors import InputError, ModelError
from specviz.core.sampling import SamplingConfig
from specviz.engine import measure, workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.methods import encode_prompt
from specviz.teach import notes as NOTES, predict as P
from specviz.teach.trees import PAIRS, chain_vs_tree
from specviz.ui import guess as G, labs_cost, lesson_recycle, links as L, loading
from specviz.viz import step as vz, tree as vt

ss = st.session_state
st.title("Tree verification")
st.markdown(
    "A chain draft has one guess per position: the first wrong guess ends the step. A **tree** keeps "
    "several candidates per position, and one target pass checks all of them. Each node attends only to the "
    "context and its own ancestors (the **tree attention mask** below), and sits at the position of its depth, "
    "so every branch is scored as if it were the only continuation. The target then walks down from the root: "
    "at each node it tries the children in turn, each against what the rejected ones left over, and commits "
    "the longest accepted path plus one token of its own. Its cache keeps only that path.\n\n"
    "- **Medusa tree** (static): head d's top candidates at depth d, always in the same sparse shape.\n"
    "- **EAGLE-2 tree** (dynamic): the head grows the branches it is most confident about and keeps the best "
    "nodes, so the shape changes every step.\n\n"
    "The candidates are chosen, not sampled, so at temperature > 0 the chance that some candidate is kept at a "
    "node is the target's probability mass on the candidates there, and the output still follows the target "
    "exactly. The price: a pass that checks n drafted nodes costs v(n), as a chain of n drafts would, "
    "instead of v(k) for the k + 1 positions a chain of depth k feeds (the last committed token and k drafts).")

presets = [f"{w.name} · {w.kind}" for w in workloads.WORKLOADS]
ss.setdefault("tr_preset", presets[0])
ss.setdefault("tr_new", 16 if loading.TINY else 48)
LINK = [L.Param("tr_preset", "choice", options=tuple(presets)), L.Param("tr_family", "choice", options=tuple(PAIRS)),
        L.Param("tr_k", "int", 1, 8), L.Param("tr_new", "int", 1, 128), L.Param("tr_temp", "float", 0.0, 2.0)]
L.check("trees", LINK)  # a shared link: one warning naming any parameter the widgets below will not take
c = st.columns([2, 1, 1, 1, 1])
preset = c[0].selectbox("Workload", presets, key="tr_preset", bind=L.BIND)
family = c[1].selectbox("Heads", list(PAIRS), key="tr_family", bind=L.BIND)
depth = c[2].number_input("Depth k", min_value=1, max_value=8, value=4, step=1, key="tr_k", bind=L.BIND)
new = c[3].number_input("Max new tokens", min_value=1, max_value=128, step=8, key="tr_new", bind=L.BIND)
temp = c[4].number_input("Temperature", min_value=0.0, max_value=2.0, value=0.0, step=0.1, key="tr_temp",
                         bind=L.BIND)
L.share("trees", L.current(LINK), "press Run there: a greedy run (temperature 0) gives the same trees")
w = workloads.get(preset.split(" · ")[0])
chain_m, tree_m = PAIRS[family]


def config() -> DecodeConfig:
    return DecodeConfig(k=int(depth), max_new_tokens=int(new), sampling=SamplingConfig(float(temp)), record=True)


def setup():
    """(target, prompt ids) or None after an st.error."""
    tgt = loading.target()
    if tgt is None:
        return None
    try:
        return tgt, encode_prompt(tgt.tokenizer, w.prompt, w.chat)
    except InputError as e:
        st.error(f"Cannot start: {e}")
        return None


# -- draw the trees of one run --------------------------------------------------------------------
st.subheader("Draw the trees")
if st.button(f"Run {tree_m} to the end", type="primary", key="tr_run"):
    got = setup()
    if got is not None:
        tgt, ids = got
        try:
            with st.spinner("decoding…"):
                summary, run_steps = measure.run(tgt, loading.proposer_for(tree_m, tgt), ids, config(),
                                                 eos_token_id=tgt.tokenizer.eos_token_id)
            ss["tr_run_out"] = {"method": tree_m, "steps": run_steps, "summary": summary,
                                "label": (lambda tok: (lambda t: vz.token_label(tok, t)))(tgt.tokenizer)}
        except (InputError, ModelError, ValueError) as e:
            st.error(f"Cannot run {tree_m}: {e}")

out = ss.get("tr_run_out")
if out is not None:
    steps, s, label = out["steps"], out["summary"], out["label"]
    m = st.columns(4)
    m[0].metric("Target passes", s.target_passes)
    m[1].metric("Tokens per pass τ", f"{s.tokens_per_pass:.2f}")
    m[2].metric("Nodes per pass", f"{s.mean_k:.1f}")
    m[3].metric("Accepted / drafted nodes", f"{s.accepted} / {s.drafted}")
    st.markdown(vz.text_html(steps, label), unsafe_allow_html=True)
    best = max(range(len(steps)), key=lambda i: (steps[i].n_accepted, -i))
    ss.setdefault("tr_step", best + 1)
    ss["tr_step"] = min(max(1, ss["tr_step"]), len(steps))
    i = st.slider("Step", 1, max(2, len(steps)), key="tr_step", disabled=len(steps) < 2) - 1
    rec = steps[i]
    path = " ".join(f"`{label(rec.drafted[j])}`" for j in rec.path) or "*(none)*"
    st.markdown(f"**Step {rec.index + 1}** ({out['method']}): {len(rec.drafted)} nodes, depth {rec.depth}; "
                f"accepted path {path}, then the {rec.next_origin} `{label(rec.next_token)}`.")
    left, right = st.columns(2)
    left.plotly_chart(vt.tree_figure(rec, label), width="stretch", key="tr_tree")
    left.caption("Green: the accepted path. Red: tested and rejected. Grey: never tested (its parent was "
                 "rejected, or an older sibling was accepted first).")
    right.plotly_chart(vt.mask_figure(rec, label), width="stretch", key="tr_mask")
    right.caption("The tree attention mask of this verify pass: each row is one fed position, coloured where it "
                  "may attend (the cached context, visible to all rows, is not drawn). Dark green: the accepted "
                  "path, whose cache entries are kept; the others are dropped.")

# -- chain vs tree, same heads --------------------------------------------------------------------
st.subheader("Chain vs tree on the same heads")
st.caption(f"Runs {chain_m} (a chain of k) and {tree_m} (a tree no deeper than k) from the same weights, each "
           "alongside plain decoding on this workload and these settings, and measures tokens per pass and speed.")
TG = P.tree_guess(chain_m, tree_m, int(depth), float(temp), int(new), w.name)
if G.ask_and_lock("tr_cvt", TG, "Lock in my guess and measure chain vs tree"):
    got = setup()
    if got is not None:
        tgt, ids = got
        with G.measuring("Cannot measure: {}", G.ERRORS + (ValueError,)) as step:
            ss["tr_cmp"] = chain_vs_tree(tgt, family, ids, config(), tgt.tokenizer.eos_token_id, progress=step)
rows = ss.get("tr_cmp")
if rows:
    G.show("tr_cvt", TG, P.tree_truth(rows))
    st.dataframe([{"method": r.method, "tokens per pass τ": round(r.tokens_per_pass, 2),
                   "drafted per pass": round(r.nodes_per_pass, 1), "speedup vs plain": f"{r.speedup:.2f}×",
                   "same tokens as plain": {None: "(sampled)", True: "yes", False: "no"}[r.identical]}
                  for r in rows], hide_index=True, width="stretch")
    for r in rows:
        if r.divergence:
            st.caption(f"{r.method} {r.divergence}.")
    st.caption(f"{loading.machine_caption()}, just now. A tree raises τ when the heads' second and third guesses "
               "are often right; it costs a larger verify pass (v(n) for n nodes), so speed gains less than τ. "
               "Drafting costs the same for Medusa, whose heads give every candidate in the one call a chain "
               "uses; only EAGLE-2's tree drafts more (one batched head call per depth over the best nodes).")
labs_cost.tree_calculator_section(w, int(depth), int(new), float(temp))  # E[τ] of a tree, best shape, break-even
st.markdown(NOTES.TREES)  # other tree-shaped proposers (teach/notes.py)
lesson_recycle.section()  # token recycling: guess τ on a novel prompt, then the table filling over a session
