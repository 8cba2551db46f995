"""Step through's session: its settings, the decoder built for them and kept, Play, the check against plain.

The page (pages/step_through.py) lays out the widgets and draws; this module holds what happens between
a click and a drawing. Input is checked once, where it is used: the app's own ranges here (Settings.check),
everything else by the engine (DecodeConfig.check, make_proposer, encode_prompt, the Decoder's context
window), whose InputError / ModelError the page shows as they are.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import streamlit as st

from specviz.core.errors import InputError, ModelError
from specviz.core.suffix import MAX_TREE_DEPTH, MIN_TOKEN_PROB, SUFFIX_FACTOR
from specviz.proposers.lookup import MATCH_FACTOR
from specviz.core.neartie import bf16_ulp
from specviz.core.sampling import SamplingConfig
from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine import measure
from specviz.engine.methods import MATCH_MIN, SELF_SIZED_CAP, draft_cap, encode_prompt
from specviz.teach import anatomy
from specviz.teach import predict as P
from specviz.viz import tree as vt
from specviz.ui import guess as G
from specviz.ui import memory
from specviz.ui import sessions
from specviz.ui import support as app
from specviz.ui.turns import TURNS

K_MAX, N_MAX, NEW_MAX = 16, 8, 256  # the app's ranges: a class shares one machine
REDRAW_S = 1.0    # Play redraws the text and tally once a second (and at the end), not per pass:
BAR_S = 0.25      # the progress bar (a small message) moves four times a second. Measured: redrawing the
                  # text twice a second made a 48-token Play ~15% slower (the browser shares the 2 cores)
CHECK_REPEATS = 2  # the check against plain decoding: plain and the method, interleaved twice
KEY = "stp"       # the session's run: {"sig", "dec", "recipe", "method", "k", "n", "check", ...}

OWN = "(your own prompt)"
PRESETS = ([OWN] + [f"{w.name} · {w.kind}" for w in workloads.ALL]
           + [f"{s.name} · {len(s.requests)} requests, the last one here" for s in workloads.SESSIONS])
FIRST = workloads.of_kind(workloads.COPY)[0]  # a copy-heavy preset: lookup has something to copy on the first Play
DEFAULTS = {"stp_prompt": FIRST.prompt, "stp_preset": f"{FIRST.name} · {FIRST.kind}",
            "stp_chat": FIRST.chat, "stp_k": 4, "stp_new": 16 if app.TINY else 48,
            "stp_n": MATCH_MIN, "stp_nmin": 1, "stp_nmax": 4, "stp_temp": 0.0, "stp_seed": 0,
            "stp_krule": "match", "stp_factor": MATCH_FACTOR,
            "stp_depth": MAX_TREE_DEPTH, "stp_sfactor": SUFFIX_FACTOR, "stp_minprob": MIN_TOKEN_PROB}
DEPTH_MAX = 64  # suffix's depth cap: match + draft (vLLM's default is 24)


def init_state(offered: list[str]) -> None:
    """The widgets' defaults, set once per session (their state outlives a page); the method opens on
    something speculative."""
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)
    st.session_state.setdefault("stp_method", "lookup" if "lookup" in offered else offered[0])


def use_preset() -> None:
    """The preset selectbox's on_change: copy the workload's prompt and chat flag into the widgets."""
    name = st.session_state["stp_preset"]
    ses = sessions.session_of(name)
    if ses is not None:
        w = ses.requests[-1]
        st.session_state["stp_prompt"], st.session_state["stp_chat"] = w.prompt, w.chat
    elif name != OWN:
        w = workloads.get(name.split(" · ")[0])
        st.session_state["stp_prompt"], st.session_state["stp_chat"] = w.prompt, w.chat


OTHER_DRAFTER = "another model (type its folder or id)"


def drafter_choice() -> str:
    """Method 'draft': the draft model to use, picked from those offered or typed in ('' when none typed)."""
    pick = st.selectbox("Draft model", app.drafter_names() + [OTHER_DRAFTER], key="stp_drafter_pick",
                        persist_state="session")
    if pick != OTHER_DRAFTER:
        return pick
    return st.text_input("Draft model folder or Hugging Face id", key="stp_drafter_path",
                         persist_state="session").strip()


def lookup_choice() -> tuple[str, int | None, int | None, int | None, str, float | None]:
    """Method 'lookup': (which earlier occurrence to copy, n, n-min, n-max, k rule, factor); a fixed n or an
    n-min..n-max; k tokens per match, or as many as the match length justifies."""
    k_rule = st.radio("Draft length", ["fixed", "match"], horizontal=True, key="stp_krule", persist_state="session",
                      format_func={"fixed": "fixed k", "match": "follows the match length"}.get,
                      help="fixed: k tokens whenever the last n tokens occurred before (transformers' and vLLM's "
                           "n-gram lookup). Match length: find the longest earlier match of the context's tail "
                           f"(m tokens) and draft factor × m tokens, at most {SELF_SIZED_CAP}; n is then the "
                           "shortest match that drafts. A long match is a copy in progress; a short one is a guess.")
    factor = None
    if k_rule == "match":
        factor = st.number_input("Spec factor (draft ≤ factor × match length)", step=0.5, key="stp_factor",
                                 persist_state="session", help="SuffixDecoding's rule (vLLM: "
                                 "suffix_decoding_max_spec_factor). Above 0; specviz's default for lookup is "
                                 f"{MATCH_FACTOR:g}.")
    rule = st.radio("Copy from which earlier occurrence", ["recent", "earliest"], horizontal=True,
                    key="stp_rule", persist_state="session",
                    format_func={"recent": "most recent (specviz)", "earliest": "earliest of the longest (vLLM)"}.get)
    if st.radio("Match length", ["fixed n", "widest of n-min..n-max"], horizontal=True,
                key="stp_nmode", persist_state="session") == "fixed n":
        return rule, st.number_input("n (shortest match that drafts)" if k_rule == "match" else "n (tokens matched)",
                                     step=1, key="stp_n", persist_state="session", help=f"1 to {N_MAX}"
                                     + ("; the draft then grows with the match" if k_rule == "match" else "")), \
            None, None, k_rule, factor
    c1, c2 = st.columns(2)
    return (rule, None, c1.number_input("n-min", step=1, key="stp_nmin", persist_state="session"),
            c2.number_input("n-max", step=1, key="stp_nmax", persist_state="session"), k_rule, factor)


def suffix_choice() -> tuple[int, float, float]:
    """Method 'suffix': (depth cap, spec factor, minimum probability), with vLLM's names in the help."""
    c = st.columns(3)
    depth = c[0].number_input("Depth cap", step=1, key="stp_depth", persist_state="session",
                              help=f"Match plus draft stay within this many tokens (2 to {DEPTH_MAX}; vLLM: "
                                   f"suffix_decoding_max_tree_depth, default {MAX_TREE_DEPTH}). k caps the tree's "
                                   "nodes.")
    factor = c[1].number_input("Spec factor", step=0.5, key="stp_sfactor", persist_state="session",
                               help="A match of m tokens drafts a tree of at most factor × m tokens (vLLM: "
                                    f"suffix_decoding_max_spec_factor, default 1.0; specviz's {SUFFIX_FACTOR:g}).")
    min_prob = c[2].number_input("Minimum probability", step=0.05, key="stp_minprob", persist_state="session",
                                 help="A continuation is drafted only if it followed at least this share of the "
                                      "times its path did (0 to 1; vLLM: suffix_decoding_min_token_prob, default "
                                      f"{MIN_TOKEN_PROB:g}).")
    return depth, factor, min_prob


@dataclass(frozen=True)
class Settings:
    """What the widgets say. Two equal Settings (and the same sidebar model) mean the same run."""
    prompt: str
    chat: bool
    method: str
    drafter: str | None          # method 'draft': a folder, an id or the trained drafter's label
    k: int
    max_new: int
    adaptive: bool
    n: int | None                # lookup with a fixed n ...
    n_min: int | None            # ... or the widest match of n-min..n-max
    n_max: int | None
    temperature: float
    seed: int
    rule: str = "recent"         # lookup: which earlier occurrence to copy
    k_rule: str = "match"        # lookup: 'match' (factor x the match length, at most the cap) or 'fixed' (k per match)
    factor: float | None = None  # lookup's match rule, or suffix: the spec factor
    max_depth: int | None = None  # suffix: match + draft within this many tokens
    min_prob: float | None = None  # suffix: continuations below this share are not drafted
    session: str | None = None   # a session preset: this prompt is its last request ...
    cache: bool = False          # ... and suffix's cache holds the earlier ones (run first, in order)

    def check(self) -> None:
        """The app's ranges; the rest (n-min <= n-max, an empty prompt, the context window) is the engine's."""
        for name, val, lo, hi in (("k", self.k, 1, K_MAX), ("max new tokens", self.max_new, 1, NEW_MAX),
                                  ("n", self.n, 1, N_MAX), ("n-min", self.n_min, 1, N_MAX),
                                  ("n-max", self.n_max, 1, N_MAX), ("the depth cap", self.max_depth, 2, DEPTH_MAX)):
            if val is not None and not lo <= val <= hi:
                raise InputError(f"{name} must be between {lo} and {hi}, got {val}"
                                 + (" (an empty field, or one with letters, reads as 0)" if val == 0 else ""))
        if self.factor is not None and not 0 < self.factor <= 16:
            raise InputError(f"the spec factor must be above 0 and at most 16, got {self.factor:g}")
        if self.min_prob is not None and not 0 <= self.min_prob <= 1:
            raise InputError(f"the minimum probability must be between 0 and 1, got {self.min_prob:g}")
        if self.method == "draft" and not self.drafter:
            raise InputError("type the folder or id of a draft model")

    def config(self) -> DecodeConfig:
        return DecodeConfig(k=draft_cap(self.method, int(self.k), self.k_rule), max_new_tokens=int(self.max_new),
                            seed=int(self.seed),
                            sampling=SamplingConfig(float(self.temperature)), adaptive=self.adaptive, record=True)

    def suffix_opts(self) -> dict | None:
        """Method 'suffix': the proposer's depth cap and minimum probability (the factor goes as spec_factor)."""
        if self.method != "suffix":
            return None
        return {k: v for k, v in (("max_depth", self.max_depth), ("min_prob", self.min_prob)) if v is not None}

    @property
    def n_label(self):
        """lookup's n as the runs remembered for other pages carry it: n, 'n-min..n-max' or None."""
        return self.n if self.n is not None else (f"{self.n_min}..{self.n_max}" if self.n_min is not None else None)


def range_error(s: Settings) -> None:
    """st.error as soon as a number is out of the app's range (Streamlit turns a number field that is left empty or
    holds letters into its default, 0 here, without a word), not only when a run is started."""
    try:
        s.check()
    except InputError as e:
        st.error(f"Check the settings: {e}")


def signature(s: Settings) -> tuple:
    """The sidebar's model and the page's settings: a run is kept while this stays the same."""
    return tuple(app.settings().values()), s


def build(s: Settings) -> tuple[Decoder, dict]:
    """(Decoder, recipe) for these settings; raises InputError / ModelError on bad input."""
    s.check()
    tgt = app.target()
    if tgt is None:
        raise InputError("the target model did not load (see above)")
    ids = encode_prompt(tgt.tokenizer, s.prompt, s.chat)
    dm = None
    if s.method == "draft":
        dm = app.drafter(s.drafter)
        if dm is None:
            raise InputError("the draft model did not load (see above)")

    cfg = s.config()
    cache = None
    if s.method == "suffix" and s.session and s.cache:  # the session's earlier requests first, remembered in order
        ses = workloads.SESSION_BY_NAME[s.session]
        with st.spinner(f"Running the session's {len(ses.requests) - 1} earlier requests to fill suffix's cache…"), \
                TURNS.turn(app.waiter(st.empty())):
            cache = sessions.prime(tgt, ses, lambda c: app.proposer_for(
                "suffix", tgt, spec_factor=s.factor, suffix={**s.suffix_opts(), "cache": c}), cfg)

    def make():
        opts = s.suffix_opts() if cache is None else {**s.suffix_opts(), "cache": cache}
        return app.proposer_for(s.method, tgt, s.n, s.n_min, s.n_max, dm, lookup_rule=s.rule, k_rule=s.k_rule,
                                spec_factor=s.factor, suffix=opts)

    dec = Decoder(tgt, make(), ids, cfg, eos_token_id=tgt.tokenizer.eos_token_id)
    return dec, {"make": make, "ids": ids, "cfg": cfg, "target": tgt}


def current() -> dict | None:
    """The session's run (the last one built), whatever the settings say now."""
    return st.session_state.get(KEY)


def session(s: Settings, fresh: bool = False) -> dict | None:
    """The session's run for these settings (a new one if they changed, or when fresh). st.error and None
    on bad input: the earlier run stays."""
    sig = signature(s)
    cur = current()
    if cur is not None and cur["sig"] == sig and not fresh:
        return cur
    try:
        dec, recipe = build(s)
    except (InputError, ModelError, ValueError) as e:
        st.error(f"Cannot start a run: {e}")
        return None
    st.session_state[KEY] = {"sig": sig, "dec": dec, "recipe": recipe, "method": s.method, "k": int(s.k),
                             "n": s.n_label, "check": None}
    return st.session_state[KEY]


def stale(run: dict | None, s: Settings) -> bool:
    """True when the settings changed since `run` was built (the next click starts a new one)."""
    return run is not None and run["sig"] != signature(s)


# -- stepping ----------------------------------------------------------------------------------
def one_step(dec: Decoder, box) -> None:
    """One step, in a turn on the shared model (a waiting note in `box` meanwhile)."""
    with TURNS.turn(app.waiter(box)):
        dec.step()
    box.empty()


def play(dec: Decoder, box, redraw) -> None:
    """Step to the end, one turn on the shared model per step. A progress bar in `box` moves BAR_S apart;
    redraw() (the page's text and tally) runs REDRAW_S apart and after the last step."""
    bar, note, waited = box.progress(0.0, "playing…"), [app.waiter(box)], [False]
    last = last_bar = 0.0

    def on_wait(ahead):
        waited[0] = True
        note[0](ahead)

    for rec in dec.run(lambda: TURNS.turn(on_wait)):  # each step in its own turn; redraws outside it
        if waited[0]:  # the waiting note took the bar's place: bring the bar back
            waited[0], bar, note[0] = False, box.progress(0.0, "playing…"), app.waiter(box)
        now = time.monotonic()
        if now - last >= REDRAW_S or dec.finished:
            last = now
            redraw()
        if now - last_bar >= BAR_S or dec.finished:
            last_bar = now
            bar.progress(min(1.0, len(dec.new_tokens) / dec.cfg.max_new_tokens),
                         f"step {rec.index + 1}: drafted {rec.n_drafted}, accepted {rec.n_accepted}")
    box.empty()


def step_to_show(dec: Decoder, played: bool) -> int:
    """The step the detail opens on: after a Play the last step that drafted, else the newest step."""
    drafted = [r.index + 1 for r in dec.steps if r.n_drafted] if played else []
    return drafted[-1] if drafted else len(dec.steps)


def remember(run: dict) -> None:
    """A finished run, once, for the calculator and the other pages."""
    dec = run["dec"]
    if dec.finished and not run.get("remembered"):
        app.remember_run(run["method"], dec.summary(), list(dec.steps), k=run["k"], n=run["n"])
        run["remembered"] = True


# -- the check against plain decoding ------------------------------------------------------------
def check_against_plain(run: dict, bar) -> measure.Measured:
    """Plain decoding and this method to the end, interleaved CHECK_REPEATS times (engine/measure), each run
    in its own turn; kept in `run` and remembered for the calculator."""
    r = run["recipe"]
    with app.measuring(bar) as between:  # each run timed alone; other sessions step in between runs
        chk = measure.against_plain(r["target"], r["make"], r["ids"], r["cfg"], r["target"].tokenizer.eos_token_id,
                                    repeats=CHECK_REPEATS, progress=lambda f, t: (bar.progress(f, t), between()))
    bar.empty()
    for rep in chk.repeats:  # bounded memory: top tokens only, no full-vocabulary p/q vectors
        rep.steps, rep.plain_steps = memory.lean(rep.steps), memory.lean(rep.plain_steps)
    run["check"], run["check_shared"] = chk, between.shared
    app.remember_run(run["method"], chk.summary, chk.steps, chk.plain, k=run["k"], n=run["n"],
                     plain_steps=chk.plain_steps, speedup=chk.speedup)  # the speedup the panel shows
    return chk


def check_panel(run: dict, label) -> None:
    """The check against plain decoding: its button, its numbers and its verdict on the tokens."""
    st.subheader("Check against plain decoding")
    st.caption(f"Runs plain decoding and this method to the end, interleaved {CHECK_REPEATS} times, on the same "
               "prompt and settings: the measured speedup (median of the per-repeat ratios), the exact-match check "
               "at temperature 0, and the numbers the break-even calculator fills itself from.")
    if st.button("Run plain decoding alongside", key="stp_check_btn"):
        check_against_plain(run, st.progress(0.0, "measuring…"))
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
        level, said = verdict(chk, run["method"], label)
        getattr(st, level)(said)
        st.page_link("pages/breakeven.py", label="Open the break-even calculator with these numbers",
                     icon=":material/calculate:")


def verdict(chk: measure.Measured, method: str, label) -> tuple[str, str]:
    """(level, text) for the tokens' check: level is 'caption', 'success', 'info', 'warning' or 'error'
    (the Streamlit element check_panel draws it with); label(token id) -> its text."""
    if not chk.compared:
        return "caption", ("Sampling (temperature > 0): the two runs draw different random numbers, so their tokens "
                           "are not expected to match — only their distribution is. The 'Is it lossless?' page tests "
                           "that.")
    if chk.identical:
        return "success", f"Same {len(chk.plain.token_ids)} tokens as plain greedy decoding."
    d = chk.divergence
    if d.plain_token is None or d.other_token is None:
        return "info", (f"No token differs, but one run stopped earlier (at an end-of-text token), after "
                        f"{d.position} tokens.")
    where = (f"at new token {d.position + 1}: plain decoding chose “{label(d.plain_token)}”, "
             f"{method} “{label(d.other_token)}”. Plain's top two logits there differ by "
             f"{d.gap:.3f} (top logit {d.top1:.2f}; 2 bfloat16 ulps there = {2 * bf16_ulp(d.top1):.3f}).")
    if d.near_tie:
        return "warning", ("**A near-tie flip, not a bug.** The outputs differ " + where +
                           " specviz's own attention makes a pass over k+1 tokens round as k+1 one-token passes "
                           "do, but this model or device rounded them differently, and an argmax that sits on a "
                           "(near-)tie can then go either way. After this token the two "
                           "contexts differ, so nothing further is compared. Switch to float32 in the sidebar "
                           "to compare without bfloat16 rounding (flips become rare there, not impossible).")
    return "error", ("The outputs differ " + where + " That gap is larger than a rounding near-tie: likely a bug — "
                     "confirm in float32 (sidebar), where such flips are rare, though not impossible.")


def session_choice(preset: str) -> tuple[str | None, bool]:
    """A session preset: (its name, whether suffix's cache holds its earlier requests); (None, False) otherwise."""
    ses = sessions.session_of(preset)
    if ses is None:
        return None, False
    cache = st.checkbox(f"Suffix remembers the session's {len(ses.requests) - 1} earlier requests", value=True,
                        key="stp_cache", persist_state="session",
                        help=f"{ses.task}. On: the earlier requests run first, in order, and suffix's cache keeps "
                             "their outputs, so this last request can copy from them (Step through names the "
                             "request each branch came from). Off: an empty cache. Lookup copies within this "
                             "request only.")
    return ses.name, cache


def anatomy_opened(rec, method: str) -> bool:
    """Guess first: how many of the entries this pass wrote stay in the target's cache. The anatomy of the pass
    opens once a guess is locked for this step (scored against the cache lengths the step measured)."""
    g = P.anatomy_guess(rec, method)
    this = (rec.index, rec.context_len, tuple(rec.drafted), rec.next_token)
    if G.ask_and_lock("stp_anat", g, "Lock in my guess and open the pass"):
        st.session_state["stp_anat_open"] = this
    if st.session_state.get("stp_anat_open") != this:
        return False
    G.show("stp_anat", g, P.anatomy_truth(rec))
    return True


def anatomy_panel(rec, label, method):
    """The verification pass opened up, from this step's record (the texts come from teach/anatomy.py)."""
    st.subheader("Anatomy of this verification pass")
    if not anatomy_opened(rec, method):
        return
    a = anatomy.of(rec)
    st.markdown(anatomy.inputs_text(a, label))
    st.plotly_chart(vt.mask_figure(rec, label), width="stretch", key="stp_mask")
    st.caption(("Tree attention mask" if a.is_tree else "Causal mask") + " of the pass: row = the token fed "
               "(query), column = what it may attend to (key); the cached context, seen by every row, is left "
               "out. Green: the root and the accepted path.")
    st.markdown(anatomy.shift_text(a))
    st.dataframe([{"output row": r.row, "fed": r.fed, "sees": r.sees, "is p for": r.scores, "this step": r.verdict}
                  for r in a.rows], hide_index=True, width="stretch")
    st.markdown(anatomy.cache_text(a, rec))
    st.markdown(anatomy.drafter_text(a, method))
