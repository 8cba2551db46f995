"""Step through: real speculative decoding one target pass at a time, each decision drawn from its record.

The page lays out the widgets and draws; building and keeping the run, Play and the check against plain
decoding are in specviz/ui/stepping.py (settings: step_settings.py; panels: step_panels.py)."""
import streamlit as st

from specviz.core import fmt as F
from specviz.engine.methods import REGISTRY, SELF_SIZED_CAP
from specviz.teach import anatomy, steps as T
from specviz.ui import loading, step_panels as SP, step_settings as SS, step_share as SH, stepping as S
from specviz.viz import step as vz

K_MAX, NEW_MAX = SS.K_MAX, SS.NEW_MAX  # the app's ranges, checked by SS.Settings.check
ss = st.session_state

st.title("Step through speculative decoding")
st.caption("A proposer guesses k tokens; the target model checks all of them in one forward pass and keeps "
           "the longest prefix it agrees with, plus one token of its own. Step through it and watch every "
           "decision. p is the target's distribution, q the proposer's.")

offered = loading.methods_offered()
SS.init_state(offered)
link_step = SH.open_link(offered)  # a shared link's settings (once per session), one warning for a bad parameter

# -- settings --------------------------------------------------------------------------------
left, right = st.columns([3, 2], gap="large")
with left:
    st.selectbox("Workload preset (copy-heavy prompts carry their answer; novel ones don't)", SS.PRESETS,
                 key="stp_preset", persist_state="session", on_change=SS.use_preset)
    prompt = st.text_area("Prompt", key="stp_prompt", persist_state="session", height=150)
    chat = st.checkbox("Wrap in the chat template", key="stp_chat", persist_state="session")
    session, cache = SS.session_choice(ss["stp_preset"])
with right:
    method = st.selectbox("Method", offered, format_func=lambda m: f"{m} — {REGISTRY[m].label if m in REGISTRY else m}",
                          key="stp_method", persist_state="session")
    drafter_name = SS.drafter_choice() if method == "draft" else None
    c1, c2 = st.columns(2)
    k = c1.number_input("Draft length k", step=1, key="stp_k", persist_state="session",
                        help=f"1 to {K_MAX}; suffix and lookup's match rule size their own drafts (up to "
                             f"{SELF_SIZED_CAP} tokens), so k applies to the other methods and lookup's fixed rule")
    new = c2.number_input("Max new tokens", step=8, key="stp_new", persist_state="session",
                          help=f"1 to {NEW_MAX}")
    adaptive = st.checkbox("Adaptive k", key="stp_adaptive", persist_state="session",
                           help="k shrinks by one after a rejection and grows by one after a fully accepted draft")
    n = n_min = n_max = factor = depth = min_prob = None
    rule, k_rule = "recent", "fixed"
    if method == "lookup":
        rule, n, n_min, n_max, k_rule, factor = SS.lookup_choice()
    elif method == "suffix":
        depth, factor, min_prob = SS.suffix_choice()
    if (k_means := SS.k_meaning(method, n, k_rule)) is not None:
        st.caption(k_means)
    c1, c2 = st.columns(2)
    temp = c1.number_input("Temperature (0 = greedy)", min_value=0.0, max_value=2.0, step=0.1,
                           key="stp_temp", persist_state="session")
    seed = c2.number_input("Seed", step=1, key="stp_seed", persist_state="session")
    verify = st.radio("Verification", ["token", "block"], horizontal=True, key="stp_verify",
                      format_func={"token": "token by token", "block": "block (the chain jointly)"}.get,
                      help="block verification (Sun et al. 2024) takes chains only; tree methods are refused")

settings = SS.Settings(prompt, chat, method, drafter_name, k, new, adaptive, n, n_min, n_max, temp, seed, rule,
                       k_rule, factor, depth, min_prob, session, cache, verify)
SS.range_error(settings)  # a field left empty or with letters reads as 0: say so now, not at Play


def label_for(dec):
    tok = dec.target.tokenizer
    return lambda t: vz.token_label(tok, t)


def tally(dec, box):
    s = dec.summary()
    with box.container():
        c = st.columns(5)
        c[0].metric("Target passes", s.target_passes)
        c[1].metric("Tokens generated", len(s.token_ids))
        c[2].metric("Tokens per pass τ", F.num(s.tokens_per_pass if s.target_passes else None))
        c[3].metric("Draft acceptance rate α̂", F.num(s.draft_acceptance_rate, ".0%"))
        c[4].metric("Accepted / drafted", f"{s.accepted} / {s.drafted}")
        if any(r.is_tree for r in dec.steps):  # α̂ counts every node of a tree: show what the tree kept
            t = st.columns(5)
            t[0].caption("A tree drafts alternatives that cannot all be kept, so α̂ counts every node; "
                         "these say how well it did:")
            for col, (lab, val, hlp) in zip(t[1:], anatomy.tree_tally(s)):
                col.metric(lab, val, help=hlp)


def draw_text(dec):
    """The tally and the text so far (Play redraws them as it goes)."""
    tally(dec, tally_box)
    text_box.markdown(vz.text_html(dec.steps, label_for(dec)), unsafe_allow_html=True)


# -- buttons ---------------------------------------------------------------------------------
b = st.columns([1, 1, 1, 2])
one = b[0].button("One step", type="primary", width="stretch", key="stp_one")
play = b[1].button("Play to the end", width="stretch", key="stp_play")
reset = b[2].button("Reset", width="stretch", key="stp_reset")
link_box = b[3].container()
run = S.current()

# a run served from the server's recordings can be re-timed live (the button is drawn below, once this click's run
# is known; a clicked button's value is in the session state from the start of the rerun)
again = bool(ss.get("stp_again")) and S.served(run) and not S.stale(run, settings)
tally_box, text_box, live_box = st.empty(), st.empty(), st.empty()
if reset:
    run = S.session(settings, fresh=True) or run
elif one or play or again:
    new_run = S.session(settings, fresh=bool(again), live=bool(again))
    run = new_run or run
    if new_run is not None:
        dec = run["dec"]
        if dec.finished and not again:
            st.info("This run has finished: press Reset (or change a setting) to start again.")
        elif one:
            S.one_step(dec, live_box)
        else:
            S.play(dec, live_box, lambda: draw_text(dec))
        ss["stp_show"] = S.step_to_show(dec, played=bool(play or again))
        S.remember(run)
elif link_step:
    run = S.session(settings) or run
    if run is not None:
        SH.go_to(run, link_step, live_box)
if S.served(run) and not S.stale(run, settings):
    b[3].button("Measure again", key="stp_again", help="Run these settings live now: the same steps, timed now")
run = SH.recordings_panel(run)  # after the click: the download holds the step just made
if S.stale(run, settings):
    b[3].caption("Settings changed: the next click starts a new run (the one below is kept until then).")
SH.share(None if S.stale(run, settings) else run, offered, link_box)


# No st.stop() on this page: in Streamlit 1.67 a page that stops during a session's first run makes
# the browser show a spurious "Page not found" dialog.
def show_run(run):
    dec = run["dec"]
    if S.served(run):
        SH.served_note(run)
    label = label_for(dec)
    draw_text(dec)
    st.markdown(vz.legend_html() + " &nbsp; hover a token to see its step", unsafe_allow_html=True)
    if dec.cfg.sampling.greedy:
        st.info(T.GREEDY_RULE)
    st.plotly_chart(vz.passes_figure(dec.steps), width="stretch", key="stp_passes")
    if not dec.steps:
        st.caption(f"{len(dec.prompt)} prompt tokens ready; nothing generated yet.")
        return
    show_step(run, dec, label)
    SP.check_panel(run, label)


def show_step(run, dec, label):
    st.subheader("One step in detail")
    ss["stp_show"] = min(max(1, ss.get("stp_show", len(dec.steps))), len(dec.steps))
    i = st.slider("Step", 1, max(2, len(dec.steps)), key="stp_show", disabled=len(dec.steps) < 2) - 1
    rec = dec.steps[i]
    chips = " ".join(f"`{label(t)}`" for t in rec.drafted) or "*(nothing)*"
    st.markdown(f"**Step {rec.index + 1}** · context {rec.context_len} tokens · k = {rec.k} · drafted: {chips}")
    for line in T.seen_in_lines(rec, label):  # lookup, suffix: the earlier text; recycle: the earlier step
        st.markdown("Where it came from: " + line)
    if not rec.drafted:
        st.markdown(T.no_draft(rec, run["method"], label))
    elif rec.is_tree:
        show_tree(rec, label)
    else:
        # a static table: the browser draws it for ~0.5 s less CPU than a data grid after a Play (troubleshooting.md)
        st.table(vz.as_cells(vz.decision_rows(rec, label)), hide_index=True)
        if rec.block is not None:                 # --verify block: its weights beside the token-wise bars
            st.dataframe(T.block_rows(rec, label), hide_index=True, width="stretch")
            st.markdown(T.block_summary(rec))
        fig = vz.decision_figure(rec, label)
        if fig is not None:
            st.plotly_chart(fig, width="stretch", key="stp_decisions")
        SP.pq_charts(rec, label)
        for note in T.chain_notes(rec):
            st.caption(note)
        rf = vz.residual_figure(rec, label) if rec.next_origin == "correction" and not rec.greedy else None
        if rf is not None:
            st.plotly_chart(rf, width="stretch", key="stp_residual")
        st.markdown(T.outcome(rec, label))
    emitted = " ".join(f"`{label(t)}`" for t in rec.emitted)
    timed = " (the recording's times)" if run.get("replay") is not None else ""
    st.caption(f"Emitted this step: {emitted} · draft {rec.draft_s * 1e3:.0f} ms · verify {rec.verify_s * 1e3:.0f} ms"
               + timed)
    SP.anatomy_panel(rec, label, run["method"])


# -- trees (tree methods: the draft is a tree, drawn with its accepted path) --------------------
def show_tree(rec, label):
    from specviz.viz import tree as vt

    path = " ".join(f"`{label(rec.drafted[j])}`" for j in rec.path) or "*(none)*"
    st.markdown(f"A **tree** of {rec.n_drafted} candidate tokens, {rec.depth} deep, checked in one target pass. "
                f"Accepted path: {path}; then the {rec.next_origin} “{label(rec.next_token)}”.")
    st.plotly_chart(vt.tree_figure(rec, label), width="stretch", key="stp_tree")
    st.caption("Green: the accepted path. Red: tested and rejected. Grey: never tested. The anatomy below draws "
               "this pass's tree attention mask; the Trees page compares chain and tree on the same heads.")
    st.page_link("pages/trees.py", label="Open the Trees lesson", icon=":material/account_tree:")


if run is None:
    st.info("Choose a prompt and a method, then press **One step** or **Play to the end**.")
    # the (empty) chart of passes is drawn before any run: the browser loads its chart library while the
    # user chooses, not after Play (measured: that load added ~1 s to a 48-token Play)
    st.plotly_chart(vz.passes_figure([]), width="stretch", key="stp_passes")
else:
    show_run(run)
