"""Serving reality: a drafter's memory at scale, v(k) as the batch grows, and the papers beside this app."""
import pandas as pd
import streamlit as st

from specviz.engine import comparisons as E
from specviz.engine.workloads import get
from specviz.teach import predict as P, reality as R
from specviz.teach.guess import Guess
from specviz.ui import guess as G, links as LK, loading

st.title("Serving reality")
st.caption("Batch 1 on one machine is the kindest setting for speculation. Three things change on a server.")
LINK = [LK.Param("sr_mem", "float", 10.0, 2000.0), LK.Param("sr_ctx", "int", 128, 131072),
        LK.Param("sr_dlayers", "int", 1, 80), LK.Param("sr_dparams", "float", 0.01, 20.0),
        LK.Param("rf_alpha", "float", 0.0, 1.0), LK.Param("rf_c", "float", 0.0, 2.0)]
LK.check("serving_reality", LINK)  # a shared link: one warning naming any parameter the widgets will not take
link_box = st.container()          # "Link to this experiment", filled at the end with every setting drawn

# -- 1. memory ----------------------------------------------------------------------------------
st.header("1 · A drafter's memory is sequences you cannot serve")
st.write("Every sequence keeps a KV cache in the target *and* in a draft model, and the drafter's weights sit "
         "beside the target's. On a fixed memory budget that is fewer sequences at once.")
c = st.columns(4)
mem = c[0].number_input("GPU memory (GB)", 10.0, 2000.0, 160.0, 10.0, key="sr_mem", bind=LK.BIND)
ctx = c[1].number_input("tokens per sequence", 128, 131072, 4096, 512, key="sr_ctx", bind=LK.BIND)
d_layers = c[2].number_input("drafter layers", 1, 80, R.DRAFTER_1B.layers, key="sr_dlayers", bind=LK.BIND)
d_params = c[3].number_input("drafter parameters (B)", 0.01, 20.0, R.DRAFTER_1B.params_b, 0.1, key="sr_dparams",
                             bind=LK.BIND)
drafter = R.Arch("drafter", float(d_params), int(d_layers), R.DRAFTER_1B.kv_heads, R.DRAFTER_1B.head_dim)
b = R.concurrent_sequences(R.TARGET_70B, drafter, float(mem), int(ctx))
m = st.columns(4)
m[0].metric("KV per token: 70B target", f"{R.TARGET_70B.kv_bytes_per_token / R.KIB:.0f} KiB")
m[1].metric("KV per token: drafter", f"{drafter.kv_bytes_per_token / R.KIB:.0f} KiB")
m[2].metric("sequences without → with the drafter", f"{b.sequences_without} → {b.sequences_with}")
m[3].metric("concurrent sequences lost", b.lost)
st.caption(f"70B target: 80 layers × 8 KV heads × 128 × 2 (K and V) × 2 bytes = 320 KiB per token, "
           f"{R.TARGET_70B.weight_bytes / R.GB:.0f} GB of bfloat16 weights; the drafter adds "
           f"{drafter.weight_bytes / R.GB:.1f} GB of weights and {drafter.kv_bytes_per_token / R.KIB:.0f} KiB per "
           f"token. Of the {b.lost} sequences lost, {R.split_words(b)}. "
           "Lookup adds neither; heads add their weights (an EAGLE head for a 7B target is about 0.24B parameters) "
           "and EAGLE its own small cache.")
tgt = loading.target()
names = loading.drafter_names()
if tgt is not None and names:
    st.markdown("**On this app's own models.** The same budget, the same context, but the target and draft model "
                "loaded here: weights counted from their parameters, KV cache per token read from a real cache.")
    MG = P.serving_guess(loading.model_key()[0], names[0], float(mem), int(ctx))
    if G.ask_and_lock("sr_own", MG, "Lock in my guess and measure both models' memory", type="primary"):
        dm = loading.drafter(names[0])
        if dm is not None:
            with st.spinner("Prefilling both models and reading their caches…"):
                st.session_state["sr_own"] = R.measured_memory(tgt, dm, float(mem), int(ctx))
    own = st.session_state.get("sr_own")
    if own:
        G.show("sr_own", MG, own)
        ob = own["budget"]
        st.caption(f"Measured: KV per token {own['kv_target'] / R.KIB:.1f} KiB (target) and "
                   f"{own['kv_drafter'] / R.KIB:.1f} KiB (drafter); weights {own['weights_target'] / 2**20:.0f} MB "
                   f"and {own['weights_drafter'] / 2**20:.0f} MB; sequences {ob.sequences_without:,} → "
                   f"{ob.sequences_with:,}. The drafter's share of the KV per token of both models is "
                   f"{100 * own['kv_drafter'] / (own['kv_target'] + own['kv_drafter']):.0f} %. Of the {ob.lost:,} "
                   f"sequences lost on this pair, {R.split_words(ob)}: when a drafter's weights are small beside "
                   "the memory, its cache is the cost; on the 70B example above its weights count as much.")
elif tgt is not None:
    st.caption(f"This app's target: {tgt.kv_bytes_per_token() / R.KIB:.1f} KiB of KV cache per token, "
               f"{tgt.param_bytes() / 2**20:.0f} MB of weights (no draft model shipped to measure beside it).")

# -- 2. v(k) against the batch -------------------------------------------------------------------
st.header("2 · Verification stops being free as the batch grows")
st.write("At batch 1 a pass over k + 1 tokens costs about one pass over 1: the weights are read once either way. "
         "With many sequences per pass the arithmetic, not the reading, starts to dominate, and the k extra "
         "positions per sequence cost real time.")
VB = Guess("v(4) at batch 16 — a 5-token verify pass in plain steps", "v16", lo=0.0, hi=20.0, step=0.1, rel=0.2)
vb_guess = G.ask("sr_vb", VB)
if st.button("Lock in my guess and measure v(k) at batch 1, 4, 16", type="primary", key="sr_vb_run") \
        and G.lock("sr_vb", vb_guess) and tgt is not None:
    bar = st.progress(0.0, "measuring…")
    st.session_state["sr_vb"] = R.v_by_batch(tgt.model, tgt.vocab_size, context=32 if loading.TINY else 128,
                                             repeats=2 if loading.TINY else 5, progress=lambda f, t: bar.progress(f, t))
    bar.empty()
vb = st.session_state.get("sr_vb")
if vb:
    G.show("sr_vb", VB, {"v16": vb[16][4]})
    table = {f"batch {bb}": {f"v({k})": f"{v:.2f}" for k, v in row.items()} for bb, row in vb.items()}
    st.dataframe(pd.DataFrame(table), width="stretch")
    st.caption("Median forward time over k + 1 new tokens per sequence ÷ over 1, with a 128-token cache, measured now "
               "on this machine (other work on the machine adds noise; " + loading.machine_caption() + "). "
               "Speedup ≈ τ ÷ (v(k) + k·c): as v(k) grows with the batch, the same τ buys less.")

# -- 3. papers beside this app ---------------------------------------------------------------------
st.header("3 · What the papers report, and what this app measures")
st.table(pd.DataFrame(R.PAPERS).set_index("method"))  # a table wraps its long cells: nothing is cut off
app_ex = R.app_experiment(8 if loading.TINY else None)
st.caption(f"The button measures {app_ex.describe()}; the papers' drafters and heads are not run here.")
if st.button("Measure this app's lookup speedups now", key="sr_mine_run") and tgt is not None:
    with G.measuring() as step:
        s0 = app_ex.settings[0]
        runs = E.compare(tgt, [get(w) for w in app_ex.workloads], [s0.method], [s0.k], n=s0.n,
                         sampling=app_ex.sampling, max_new_tokens=app_ex.new_tokens, repeats=app_ex.repeats,
                         k_rule=s0.k_rule, progress=lambda f, t=None: step(f))
        st.session_state["sr_mine"] = R.app_rows([r for r in E.table(runs) if r["method"] != "plain"], app_ex,
                                                 f"{loading.target_label()} · {loading.machine_caption()}")
mine = st.session_state.get("sr_mine")
if mine:
    st.dataframe(pd.DataFrame(mine), hide_index=True, width="stretch")
st.markdown("**Why the numbers differ**\n" + "\n".join(f"- {x}" for x in R.gap_reasons()))

from specviz.ui import labs_roofline  # noqa: E402 - section 4, drawn last (kept apart for merges)

labs_roofline.roofline_section()

from specviz.ui import labs_dtype  # noqa: E402 - section 5: the dtype, measured

labs_dtype.dtype_section()
with link_box:
    LK.share("serving-reality", LK.current(LINK), "press each button there to measure it on that machine")
