"""Step through: real speculative decoding one target pass at a time, each decision drawn from its record."""
import time

import streamlit as st

from specviz.ui import support as app
from specviz.engine import workloads
from specviz.core.errors import InputError
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.methods import METHODS, encode_prompt
from specviz.core.errors import ModelError
from specviz.core.neartie import bf16_ulp
from specviz.engine.measure import against_plain
from specviz.core.sampling import SamplingConfig
from specviz.viz import step as vz
from specviz.viz import anatomy as vza
from specviz.teach import anatomy

K_MAX, N_MAX, NEW_MAX = 16, 8, 256
REDRAW_S = 1.0    # Play redraws the text and tally once a second (and at the end), not per pass:
BAR_S = 0.25      # the progress bar (a small message) moves four times a second. Measured: redrawing the
                  # text twice a second made a 48-token Play ~15% slower (the browser shares the 2 cores)
OWN = "(your own prompt)"
ss = st.session_state

st.title("Step through speculative decoding")
st.caption("A proposer guesses k tokens; the target model checks all of them in one forward pass and keeps "
           "the longest prefix it agrees with, plus one token of its own. Step through it and watch every "
           "decision. p is the target's distribution, q the proposer's.")


def use_preset():
    name = ss["stp_preset"]
    if name != OWN:
        w = workloads.get(name.split(" · ")[0])
        ss["stp_prompt"], ss["stp_chat"] = w.prompt, w.chat


presets = [OWN] + [f"{w.name} · {w.kind}" for w in workloads.ALL]
FIRST = workloads.of_kind(workloads.COPY)[0]  # a copy-heavy preset: lookup has something to copy on the first Play
DEFAULTS = {"stp_prompt": FIRST.prompt, "stp_preset": f"{FIRST.name} · {FIRST.kind}",
            "stp_chat": FIRST.chat, "stp_k": 4, "stp_new": 16 if app.TINY else 48,
            "stp_n": 3, "stp_nmin": 1, "stp_nmax": 4, "stp_temp": 0.0, "stp_seed": 0}
for key, value in DEFAULTS.items():  # defaults live here, not in the widgets (their state outlives a page)
    ss.setdefault(key, value)

# -- settings --------------------------------------------------------------------------------
left, right = st.columns([3, 2], gap="large")
with left:
    st.selectbox("Workload preset (copy-heavy prompts carry their answer; novel ones don't)", presets,
                 key="stp_preset", persist_state="session", on_change=use_preset)
    prompt = st.text_area("Prompt", key="stp_prompt", persist_state="session", height=150)
    chat = st.checkbox("Wrap in the chat template", key="stp_chat", persist_state="session")
with right:
    offered = app.methods_offered()
    ss.setdefault("stp_method", "lookup" if "lookup" in offered else offered[0])  # opens on something speculative
    method = st.selectbox("Method", offered, format_func=lambda m: f"{m} — {METHODS.get(m, m)}",
                          key="stp_method", persist_state="session")
    drafter_name = None
    if method == "draft":
        names = app.drafter_names()
        other = "another model (type its folder or id)"
        pick = st.selectbox("Draft model", names + [other], key="stp_drafter_pick", persist_state="session")
        drafter_name = (st.text_input("Draft model folder or Hugging Face id", key="stp_drafter_path",
                                      persist_state="session").strip()
                        if pick == other else pick)
    c1, c2 = st.columns(2)
    k = c1.number_input("Draft length k", step=1, key="stp_k", persist_state="session", help=f"1 to {K_MAX}")
    new = c2.number_input("Max new tokens", step=8, key="stp_new", persist_state="session",
                          help=f"1 to {NEW_MAX}")
    adaptive = st.checkbox("Adaptive k (shrink after a rejection, grow after full acceptance)", key="stp_adaptive",
                           persist_state="session")
    n = n_min = n_max = None
    rule = "recent"
    if method == "lookup":
        rule = st.radio("Copy from which earlier occurrence", ["recent", "earliest"], horizontal=True,
                        key="stp_rule", persist_state="session",
                        format_func={"recent": "most recent (specviz)",
                                     "earliest": "earliest of the longest (vLLM)"}.get)
        if st.radio("Match length", ["fixed n", "widest of n-min..n-max"], horizontal=True,
                    key="stp_nmode", persist_state="session") == "fixed n":
            n = st.number_input("n (tokens matched)", step=1, key="stp_n", persist_state="session",
                                help=f"1 to {N_MAX}")
        else:
            c1, c2 = st.columns(2)
            n_min = c1.number_input("n-min", step=1, key="stp_nmin", persist_state="session")
            n_max = c2.number_input("n-max", step=1, key="stp_nmax", persist_state="session")
    c1, c2 = st.columns(2)
    temp = c1.number_input("Temperature (0 = greedy)", min_value=0.0, max_value=2.0, step=0.1,
                           key="stp_temp", persist_state="session")
    seed = c2.number_input("Seed", step=1, key="stp_seed", persist_state="session")

sig = (tuple(app.settings().values()), prompt, chat, method, drafter_name, k, new, adaptive, n, n_min, n_max,
       temp, seed, rule)


def check_ranges() -> None:
    if not 1 <= k <= K_MAX:
        raise InputError(f"k must be between 1 and {K_MAX}, got {k}")
    if not 1 <= new <= NEW_MAX:
        raise InputError(f"max new tokens must be between 1 and {NEW_MAX}, got {new}")
    for name, val in (("n", n), ("n-min", n_min), ("n-max", n_max)):
        if val is not None and not 1 <= val <= N_MAX:
            raise InputError(f"{name} must be between 1 and {N_MAX}, got {val}")
    if n_min is not None and n_min > n_max:
        raise InputError(f"n-min ({n_min}) must not exceed n-max ({n_max})")
    if method == "draft" and not drafter_name:
        raise InputError("type the folder or id of a draft model")


def build():
    """(Decoder, recipe) for the current settings; raises InputError/ModelError on bad input."""
    check_ranges()
    tgt = app.target()
    if tgt is None:
        raise InputError("the target model did not load (see above)")
    ids = encode_prompt(tgt.tokenizer, prompt, chat)
    dm = None
    if method == "draft":
        dm = app.drafter(drafter_name)
        if dm is None:
            raise InputError("the draft model did not load (see above)")

    def make():
        return app.proposer_for(method, tgt, n or 3, n_min, n_max, dm, lookup_rule=rule)

    cfg = DecodeConfig(k=int(k), max_new_tokens=int(new), sampling=SamplingConfig(float(temp)), seed=int(seed),
                       adaptive=adaptive, record=True)
    dec = Decoder(tgt, make(), ids, cfg, eos_token_id=tgt.tokenizer.eos_token_id)
    return dec, {"make": make, "ids": ids, "cfg": cfg, "target": tgt}


def session(fresh: bool = False):
    """The session's decoder for the current settings (a new one if they changed). None on bad input."""
    cur = ss.get("stp")
    if cur is not None and cur["sig"] == sig and not fresh:
        return cur
    try:
        dec, recipe = build()
    except (InputError, ModelError, ValueError) as e:
        st.error(f"Cannot start a run: {e}")
        return None
    ss["stp"] = {"sig": sig, "dec": dec, "recipe": recipe, "method": method, "k": int(k),
                 "n": n if n is not None else (f"{n_min}..{n_max}" if n_min is not None else None),
                 "check": None}
    return ss["stp"]


def label_for(dec):
    tok = dec.target.tokenizer
    return lambda t: vz.token_label(tok, t)


def tally(dec, box):
    s = dec.summary()
    with box.container():
        c = st.columns(5)
        c[0].metric("Target passes", s.target_passes)
        c[1].metric("Tokens generated", len(s.token_ids))
        c[2].metric("Tokens per pass τ", f"{s.tokens_per_pass:.2f}" if s.target_passes else "–")
        c[3].metric("Acceptance rate α̂", "–" if s.draft_acceptance_rate is None else f"{s.draft_acceptance_rate:.0%}")
        c[4].metric("Accepted / drafted", f"{s.accepted} / {s.drafted}")


def done(run):
    dec = run["dec"]
    if dec.finished and not run.get("remembered"):
        app.remember_run(run["method"], dec.summary(), list(dec.steps), k=run["k"], n=run["n"])
        run["remembered"] = True


def play_to_end(dec):
    """Step to the end, one turn on the shared model per step; redraw at a human rate, not per pass."""
    label, bar = label_for(dec), live_box.progress(0.0, "playing…")
    note, waited, last, last_bar = [app.waiter(live_box)], [False], 0.0, 0.0

    def on_wait(ahead):
        waited[0] = True
        note[0](ahead)

    while not dec.finished:
        with app.TURNS.turn(on_wait):
            rec = dec.step()
        if waited[0]:  # the waiting note took the bar's place: bring the bar back
            waited[0], bar, note[0] = False, live_box.progress(0.0, "playing…"), app.waiter(live_box)
        now = time.monotonic()
        if now - last >= REDRAW_S or dec.finished:
            last = now
            tally(dec, tally_box)
            text_box.markdown(vz.text_html(dec.steps, label), unsafe_allow_html=True)
        if now - last_bar >= BAR_S or dec.finished:
            last_bar = now
            bar.progress(min(1.0, len(dec.new_tokens) / dec.cfg.max_new_tokens),
                         f"step {rec.index + 1}: drafted {rec.n_drafted}, accepted {rec.n_accepted}")
    live_box.empty()


# -- buttons ---------------------------------------------------------------------------------
b = st.columns([1, 1, 1, 2])
one = b[0].button("One step", type="primary", width="stretch", key="stp_one")
play = b[1].button("Play to the end", width="stretch", key="stp_play")
reset = b[2].button("Reset", width="stretch", key="stp_reset")
run = ss.get("stp")

tally_box, text_box, live_box = st.empty(), st.empty(), st.empty()
if reset:
    run = session(fresh=True) or run
elif one or play:
    new_run = session()
    run = new_run or run
    if new_run is not None:
        dec = run["dec"]
        if dec.finished:
            st.info("This run has finished: press Reset (or change a setting) to start again.")
        elif one:
            with app.TURNS.turn(app.waiter(live_box)):
                dec.step()
            live_box.empty()
        else:
            play_to_end(dec)
        drafted = [r.index + 1 for r in dec.steps if r.n_drafted] if play else []
        ss["stp_show"] = drafted[-1] if drafted else len(dec.steps)  # after a play: the last step that drafted
        done(run)
if run is not None and run["sig"] != sig:
    b[3].caption("Settings changed: the next click starts a new run (the one below is kept until then).")


# No st.stop() on this page: in Streamlit 1.67 a page that stops during a session's first run makes
# the browser show a spurious "Page not found" dialog.
def show_run(run):
    dec = run["dec"]
    label = label_for(dec)
    tally(dec, tally_box)
    text_box.markdown(vz.text_html(dec.steps, label), unsafe_allow_html=True)
    st.markdown(vz.legend_html() + " &nbsp; hover a token to see its step", unsafe_allow_html=True)
    if dec.cfg.sampling.greedy:
        st.info("Temperature 0: the rule in force is **same argmax** — a drafted token is kept when it is the "
                "token the target itself would pick. No random draw is made. The bars below show the target's "
                "softmax at temperature 1, the distribution each argmax is taken from.")
    st.plotly_chart(vz.passes_figure(dec.steps), width="stretch", key="stp_passes")
    if not dec.steps:
        st.caption(f"{len(dec.prompt)} prompt tokens ready; nothing generated yet.")
        return
    show_step(run, dec, label)
    show_check(run, label)


def show_step(run, dec, label):
    st.subheader("One step in detail")
    ss["stp_show"] = min(max(1, ss.get("stp_show", len(dec.steps))), len(dec.steps))
    i = st.slider("Step", 1, max(2, len(dec.steps)), key="stp_show", disabled=len(dec.steps) < 2) - 1
    rec = dec.steps[i]
    chips = " ".join(f"`{label(t)}`" for t in rec.drafted) or "*(nothing)*"
    st.markdown(f"**Step {rec.index + 1}** · context {rec.context_len} tokens · k = {rec.k} · drafted: {chips}")
    if not rec.drafted:
        why = ("lookup found no earlier occurrence of the last n tokens" if run["method"] == "lookup"
               else "this method does not draft" if run["method"] == "plain" else "no draft this step")
        st.markdown(f"No draft ({why}): this target pass is an ordinary decoding step and commits one token, "
                    f"“{label(rec.next_token)}”.")
    elif rec.is_tree:
        show_tree(rec, label)
    else:
        st.dataframe(vz.decision_rows(rec, label), hide_index=True, width="stretch")
        fig = vz.decision_figure(rec, label)
        if fig is not None:
            st.plotly_chart(fig, width="stretch", key="stp_decisions")
        tested = len(rec.decisions)
        cols = st.columns(2)
        for j in range(tested):
            with cols[j % 2]:
                st.plotly_chart(vz.pq_figure(rec, j, label), width="stretch", key=f"stp_pq_{j}")
        if tested < rec.n_drafted:
            st.caption(f"Positions {tested + 1}–{rec.n_drafted} were not tested: once a position is rejected, "
                       "everything drafted after it is discarded.")
        if rec.greedy and not rec.q_deterministic:
            st.caption("At temperature 0 the draft model proposes its own argmax, so its q is drawn one-hot too.")
        if rec.q_deterministic:
            st.caption("Prompt lookup has no distribution of its own: q puts all its mass on the copied token, so "
                       "p(x)/q(x) = p(x) and the draft is kept with probability p(x).")
        if rec.next_origin == "correction":
            if rec.greedy:
                st.markdown(f"Rejected at position {rec.n_accepted + 1}: the target's argmax there is "
                            f"“{label(rec.next_token)}”, which becomes the **correction** token.")
            else:
                rf = vz.residual_figure(rec, label)
                if rf is not None:
                    st.plotly_chart(rf, width="stretch", key="stp_residual")
                st.markdown(f"The **correction** “{label(rec.next_token)}” is sampled from the residual: the "
                            "mass p has where q had too little. That is what makes the output follow p exactly.")
        else:
            st.markdown(f"Every draft was accepted, so the same target pass also gives a **bonus** token: "
                        f"“{label(rec.next_token)}”.")
    emitted = " ".join(f"`{label(t)}`" for t in rec.emitted)
    st.caption(f"Emitted this step: {emitted} · draft {rec.draft_s * 1e3:.0f} ms · verify {rec.verify_s * 1e3:.0f} ms")
    show_anatomy(rec, label)


def show_anatomy(rec, label):
    """The verification pass opened up, from this step's record."""
    st.subheader("Anatomy of this verification pass")
    a = anatomy.of(rec)
    st.markdown("**1 · The inputs.** The target is fed k + 1 = " + f"{len(a.fed)} tokens in one pass: "
                + ", ".join(f"`{label(t)}` ({role}, position {pos})" for pos, t, role in a.fed) + ".")
    st.plotly_chart(vza.mask_figure(a, label), width="stretch", key="stp_mask")
    st.markdown("**2 · The one-position shift.** Row i has seen the inputs up to i, so its distribution is for "
                "the *next* position: row 0 (fed the last committed token) tests d1, row i tests d(i+1), and the "
                "last row, which has seen every draft, is where a **bonus** token comes from.")
    st.dataframe([{"output row": r.row, "sees": r.sees, "is p for": r.scores, "this step": r.verdict}
                  for r in a.rows], hide_index=True, width="stretch")
    t0, t1, t2 = a.target_cache
    st.markdown(f"**3 · The KV caches, measured.** Target: **{t0}** entries before the pass → **{t1}** after it "
                f"(+{t1 - t0}, one per fed token) → **{t2}** after the rollback"
                + (f", dropping the entries of positions {a.dropped_positions[0]}–{a.dropped_positions[-1]} "
                   "(the rejected and untested drafts)" if a.dropped_positions else ", nothing dropped") + ". "
                f"The {rec.n_emitted - 1 if rec.n_emitted else 0} kept drafts' entries stay; the correction or "
                "bonus token has no entry yet — it is fed first next step.")
    if a.drafter_cache:
        d0, d1, d2 = a.drafter_cache
        st.markdown(f"Drafter: **{d0}** → **{d1}** after drafting → **{d2}** after the rollback"
                    + (f" (positions {a.drafter_dropped[0]}–{a.drafter_dropped[-1]} dropped)" if a.drafter_dropped
                       else " (nothing dropped)") + ". It never feeds its last draft, and it catches up on the "
                    "committed tokens it has not seen at the start of the next step.")
    else:
        st.caption("This proposer keeps no KV cache of its own (lookup searches the token ids; heads read the "
                   "target's hidden states — a real EAGLE deployment does keep its own small cache).")


# -- trees (tree methods: the draft is a tree, drawn with its accepted path) --------------------
def show_tree(rec, label):
    from specviz.viz import tree as vt

    path = " ".join(f"`{label(rec.drafted[j])}`" for j in rec.path) or "*(none)*"
    st.markdown(f"A **tree** of {rec.n_drafted} candidate tokens, {rec.depth} deep, checked in one target pass. "
                f"Accepted path: {path}; then the {rec.next_origin} “{label(rec.next_token)}”.")
    st.plotly_chart(vt.tree_figure(rec, label), width="stretch", key="stp_tree")
    st.caption("Green: the accepted path. Red: tested and rejected. Grey: never tested. The Trees page draws "
               "the tree attention mask and compares chain and tree on the same heads.")
    st.page_link("pages/trees.py", label="Open the Trees lesson", icon=":material/account_tree:")


def show_check(run, label):
    st.subheader("Check against plain decoding")
    st.caption("Runs plain decoding and this method to the end, interleaved twice, on the same prompt and "
               "settings: the measured speedup (median of the per-repeat ratios), the exact-match check at temperature 0, "
               "and the numbers the break-even calculator fills itself from.")
    if st.button("Run plain decoding alongside", key="stp_check_btn"):
        r = run["recipe"]
        bar = st.progress(0.0, "measuring…")
        with app.measuring(bar) as between:  # each run timed alone; other sessions step in between runs
            chk = against_plain(r["target"], r["make"], r["ids"], r["cfg"], r["target"].tokenizer.eos_token_id,
                                repeats=2, progress=lambda f, t: (bar.progress(f, t), between()))
        bar.empty()
        for rep in chk.repeats:  # bounded memory: top tokens only, no full-vocabulary p/q vectors
            rep.steps, rep.plain_steps = app.memory.lean(rep.steps), app.memory.lean(rep.plain_steps)
        run["check"], run["check_shared"] = chk, between.shared
        app.remember_run(run["method"], chk.summary, chk.steps, chk.plain, k=run["k"], n=run["n"],
                         plain_steps=chk.plain_steps, speedup=chk.speedup)  # the speedup shown below
    chk = run.get("check")
    if chk is not None:
        c = st.columns(4)
        c[0].metric("Plain tokens/s", f"{chk.plain.tokens_per_s:.1f}")
        c[1].metric(f"{run['method']} tokens/s", f"{chk.summary.tokens_per_s:.1f}")
        c[2].metric("Measured speedup", "too noisy" if chk.too_noisy else f"{chk.speedup:.2f}×",
                    help=chk.quote())
        c[3].metric("Tokens per pass τ", f"{chk.summary.tokens_per_pass:.2f}")
        if run.get("check_shared"):
            st.warning(app.SHARED_NOTE)
        if not chk.compared:
            st.caption("Sampling (temperature > 0): the two runs draw different random numbers, so their tokens are "
                       "not expected to match — only their distribution is. The 'Is it lossless?' page tests that.")
        elif chk.identical:
            st.success(f"Same {len(chk.plain.token_ids)} tokens as plain greedy decoding.")
        elif chk.divergence.plain_token is None or chk.divergence.other_token is None:
            st.info(f"No token differs, but one run stopped earlier (at an end-of-text token), after "
                    f"{chk.divergence.position} tokens.")
        else:
            d = chk.divergence
            where = (f"at new token {d.position + 1}: plain decoding chose “{label(d.plain_token)}”, "
                     f"{run['method']} “{label(d.other_token)}”. Plain's top two logits there differ by "
                     f"{d.gap:.3f} (top logit {d.top1:.2f}; 2 bfloat16 ulps there = {2 * bf16_ulp(d.top1):.3f}).")
            if d.near_tie:
                st.warning("**A near-tie flip, not a bug.** The outputs differ " + where +
                           " In bfloat16 a pass over k+1 tokens rounds differently from k+1 one-token passes, "
                           "so an argmax that sits on a (near-)tie can go either way. After this token the two "
                           "contexts differ, so nothing further is compared. Switch to float32 in the sidebar "
                           "to compare without bfloat16 rounding (flips become rare there, not impossible).")
            else:
                st.error("The outputs differ " + where + " That gap is larger than a rounding near-tie: "
                         "likely a bug — confirm in float32 (sidebar), where such flips are rare, though not impossible.")
        st.page_link("pages/breakeven.py", label="Open the break-even calculator with these numbers",
                     icon=":material/calculate:")


if run is None:
    st.info("Choose a prompt and a method, then press **One step** or **Play to the end**.")
    # the (empty) chart of passes is drawn before any run: the browser loads its chart library while the
    # user chooses, not after Play (measured: that load added ~1 s to a 48-token Play)
    st.plotly_chart(vz.passes_figure([]), width="stretch", key="stp_passes")
else:
    show_run(run)
