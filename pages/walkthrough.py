"""A guided walkthrough for a class, and interview prep: every answer quotes a number measured now."""
import streamlit as st

from specviz.teach import interview as I
from specviz.ui import guess as G, links as L, loading

st.title("Walkthrough & interview prep")
MODES = ["Guided walkthrough", "Interview prep"]
LINK = [L.Param("wt_mode", "choice", options=tuple(MODES)), L.Param("iv_level", "choice", options=tuple(I.LEVELS)),
        L.Param("stop", "int", 1, len(I.STOPS))]
linked = L.check("walkthrough", LINK)  # a shared link: one warning naming any parameter the page will not take
if "stop" in linked:                   # the stop is the page's own state (Previous / Next), not a widget
    st.session_state["wt_stop"] = linked["stop"] - 1
link_box = st.container()              # "Link to this experiment", filled once the stop is drawn
target = loading.target_or_stop()
drafter = loading.first_drafter()


def measure(fn, key: str) -> None:
    """Run one measurement with a progress bar; keep the result (and earlier ones) in the session."""
    cached = {"load_tuned": loading.finetuned_target} if fn is I.heads_on_finetune else {}  # the cached fine-tune
    with G.measuring() as step:
        st.session_state.setdefault("wt_measured", {})[key] = fn(target, drafter, loading.TINY, progress=step,
                                                                 **cached)


mode = st.radio("Mode", MODES, horizontal=True, key="wt_mode", bind=L.BIND)
done = st.session_state.setdefault("wt_measured", {})


def guess_then_measure(key: str, fn, g, button: str, button_key: str, level: str) -> tuple[bool, bool]:
    """Ask for the guess, measure on click (only with a guess), then score it. (measured, pressed now)."""
    value = G.ask(key, g) if g else None
    pressed = st.button(button, type="primary", key=button_key)
    if pressed and (g is None or G.lock(key, value, g)):
        measure(fn, key)
    if key in done and g:
        G.show(key, g, done[key], level)
    return key in done, pressed


if mode == "Guided walkthrough":
    i = st.session_state.setdefault("wt_stop", 0)  # kept per browser session, like the measurements

    def _move(d: int) -> None:
        st.session_state["wt_stop"] = min(len(I.STOPS) - 1, max(0, st.session_state["wt_stop"] + d))

    c1, c2, c3 = st.columns([1, 4, 1])
    c1.button("← Previous", key="wt_prev", disabled=i == 0, on_click=_move, args=(-1,))
    c3.button("Next →", key="wt_next", disabled=i == len(I.STOPS) - 1, on_click=_move, args=(1,))
    stop = I.STOPS[i]
    progress = c2.empty()  # filled after this stop's button, so a measurement made now is counted now
    st.subheader(f"{i + 1}. {stop.title}")
    st.markdown(f"**Question:** {stop.question}")
    key = f"stop:{stop.measure.__name__}"
    asked = I.guess_for(stop, loading.TINY, I.has_drafter(drafter))   # names the plan the measurement runs
    measured, pressed = guess_then_measure(key, stop.measure, asked, "Lock in my guess and run the experiment",
                                           "wt_run", "walkthrough")
    finished = sum(f"stop:{s.measure.__name__}" in done for s in I.STOPS)
    progress.progress((i + 1) / len(I.STOPS), f"Stop {i + 1} of {len(I.STOPS)} · {finished} measured in this session")
    if measured:
        st.success(I.answer(stop.answer, done[key]))
        st.caption(f"What ran: {done[key]['run']}.")
    elif not pressed:  # pressed without a guess: the warning above says what to do, one box is enough
        st.info("Commit to a guess, then press the button: the answer is filled in from a run made now, on this "
                "machine, and your guess is scored against it.")
    st.page_link(stop.page, label="Open the page that shows this in depth", icon=":material/arrow_forward:")
    st.query_params["stop"] = str(i + 1)  # not a widget: written here, as Step through writes its own
else:
    level = st.radio("Depth", I.LEVELS, horizontal=True, key="iv_level", bind=L.BIND)
    st.caption("Commit to an answer first; the button measures, scores your guess and shows the answer at the "
               "depth chosen, quoting the number just measured. Wrong answers are the ones interviewers hear most.")
    for q in I.QUESTIONS:
        with st.container(border=True):
            st.markdown(f"**{q.text}**")
            key = f"q:{q.measure.__name__}"
            asked = I.guess_for(q, loading.TINY, I.has_drafter(drafter))
            if guess_then_measure(key, q.measure, asked, "Lock in my answer, measure and compare",
                                  f"iv_run_{q.key}", f"interview, {level}")[0]:
                st.markdown(f"*{level}:* " + I.answer(q.answers[level], done[key]))
                st.caption(f"What ran: {done[key]['run']}.")
                for wrong, why in q.wrong:
                    st.markdown(f"- ✗ *“{wrong}”* — {I.answer(why, done[key])}")
                if q.follow_up:
                    st.markdown("**Follow-up:** " + I.answer(q.follow_up, done[key]))
            else:
                st.caption("Not measured yet in this session.")
with link_box:
    L.share("walkthrough", L.current(LINK[:2]) | ({"stop": str(st.session_state["wt_stop"] + 1)}
                                                  if mode == MODES[0] else {}),
            "this stop; press its button there to measure it on that machine")
