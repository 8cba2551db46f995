"""Step through's panels below the run: the check against plain decoding (measured speedup, the tokens'
verdict, remembered for the calculator) and the anatomy of one verification pass, opened by a guess."""
from __future__ import annotations

import streamlit as st

from specviz.core.neartie import bf16_ulp
from specviz.engine import measure
from specviz.teach import anatomy, predict as P
from specviz.ui import guess as G, memory, state, stepping as S, waiting
from specviz.viz import step as vz, tree as vt

CHECK_REPEATS = 2  # the check against plain decoding: plain and the method, interleaved twice
PQ_CHARTS = 4      # p-vs-q panels drawn at once. With one chart per tested position (up to 24 for lookup) the browser
                   # drew for 2.3-2.7 s after Play's last pass, with four 1.8-2.1 s (AVX2 EPYC, 2 cores shared with
                   # Chromium; docs/troubleshooting.md); the four are one figure


# -- one step's p and q ----------------------------------------------------------------------------
def pq_window(n: int, start: int | None) -> range:
    """The tested positions (0-based) whose p-vs-q charts are drawn: PQ_CHARTS from `start` (1-based, as the
    slider says it), by default the last ones tested, where a rejection is."""
    first = max(0, n - PQ_CHARTS) if start is None else min(max(0, start - 1), max(0, n - PQ_CHARTS))
    return range(first, min(n, first + PQ_CHARTS))


def pq_charts(rec, label) -> None:
    """p against q at the step's tested positions, PQ_CHARTS at a time (a slider picks which when more were
    tested)."""
    n = len(rec.decisions)
    if n == 0:
        return
    start = None
    if n > PQ_CHARTS:
        start = st.slider(f"p and q below: {PQ_CHARTS} of the {n} tested positions, starting at position", 1,
                          n - PQ_CHARTS + 1, value=n - PQ_CHARTS + 1, key=f"stp_pq_from_{rec.index}_{n}",
                          help="The first of the drafted positions whose p and q bars are drawn below.")
    st.plotly_chart(vz.pq_figure(rec, list(pq_window(n, start)), label), width="stretch", key="stp_pq")


# -- the check against plain decoding ------------------------------------------------------------
def check_against_plain(run: dict, bar) -> measure.Measured:
    """Plain decoding and this method to the end, interleaved CHECK_REPEATS times (engine/measure), each run
    in its own turn; kept in `run` and remembered for the calculator."""
    r = S.recipe(run)
    with waiting.measuring(bar) as between:  # each run timed alone; other sessions step in between runs
        chk = measure.against_plain(r["target"], r["make"], r["ids"], r["cfg"], r["target"].tokenizer.eos_token_id,
                                    repeats=CHECK_REPEATS, progress=lambda f, t: (bar.progress(f, t), between()))
    bar.empty()
    for rep in chk.repeats:  # bounded memory: top tokens only, no full-vocabulary p/q vectors
        rep.steps, rep.plain_steps = memory.lean(rep.steps), memory.lean(rep.plain_steps)
    run["check"], run["check_shared"] = chk, between.shared
    state.remember_run(run["method"], chk.summary, chk.steps, chk.plain, k=run["k"], n=run["n"],
                       self_sized=run.get("self_sized", False), mode=run.get("mode"), setting=S.setting_of(run),
                       plain_steps=chk.plain_steps, speedup=chk.speedup)  # the speedup the panel shows
    return chk


def check_panel(run: dict, label) -> None:
    """The check against plain decoding: its button, its numbers and its verdict on the tokens."""
    st.subheader("Check against plain decoding")
    if S.opened_file(run):
        st.caption("A recording opened from a file: close it (above) to measure plain decoding beside a live run.")
        return
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
            st.warning(waiting.SHARED_NOTE)
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
