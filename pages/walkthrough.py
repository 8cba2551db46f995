"""A guided walkthrough for a class, and interview prep: every answer quotes a number measured now."""
import streamlit as st

from specviz.ui import support as app
from specviz.teach import interview as I
from specviz.core.errors import InputError
from specviz.core.errors import ModelError

st.title("Walkthrough & interview prep")
target = app.target()
if target is None:
    st.stop()
drafter = app.drafter(app.drafter_names()[0]) if app.drafter_names() else None


def measure(fn, key: str) -> None:
    """Run one measurement with a progress bar; keep the result (and earlier ones) in the session."""
    bar = st.progress(0.0, "measuring…")
    try:
        st.session_state.setdefault("wt_measured", {})[key] = fn(
            target, drafter, app.TINY, progress=lambda f, t=None: bar.progress(min(1.0, f), t))
    except (InputError, ModelError) as e:
        st.error(str(e))
    bar.empty()


mode = st.radio("Mode", ["Guided walkthrough", "Interview prep"], horizontal=True, key="wt_mode")
done = st.session_state.setdefault("wt_measured", {})

if mode == "Guided walkthrough":
    i = st.session_state.setdefault("wt_stop", 0)

    def _move(d: int) -> None:
        st.session_state["wt_stop"] = min(len(I.STOPS) - 1, max(0, st.session_state["wt_stop"] + d))

    c1, c2, c3 = st.columns([1, 4, 1])
    c1.button("← Previous", key="wt_prev", disabled=i == 0, on_click=_move, args=(-1,))
    c3.button("Next →", key="wt_next", disabled=i == len(I.STOPS) - 1, on_click=_move, args=(1,))
    stop = I.STOPS[i]
    c2.progress((i + 1) / len(I.STOPS), f"Stop {i + 1} of {len(I.STOPS)}")
    st.subheader(f"{i + 1}. {stop.title}")
    st.markdown(f"**Question:** {stop.question}")
    key = f"stop:{stop.measure.__name__}"
    if st.button("Run the experiment for this stop", type="primary", key="wt_run"):
        measure(stop.measure, key)
    if key in done:
        st.success(I.answer(stop.answer, done[key]))
        st.caption(f"What ran: {done[key]['run']}.")
    else:
        st.info("Press the button: the answer is filled in from a run made now, on this machine.")
    st.page_link(stop.page, label="Open the page that shows this in depth", icon=":material/arrow_forward:")
else:
    level = st.radio("Depth", I.LEVELS, horizontal=True, key="iv_level")
    st.caption("Each answer quotes a number measured by the button next to it; the run is described below "
               "the answer. Wrong answers are the ones interviewers hear most.")
    for q in I.QUESTIONS:
        with st.container(border=True):
            st.markdown(f"**{q.text}**")
            key = f"q:{q.measure.__name__}"
            if st.button("Measure and answer", key=f"iv_run_{q.key}"):
                measure(q.measure, key)
            if key in done:
                st.markdown(f"*{level}:* " + I.answer(q.answers[level], done[key]))
                st.caption(f"What ran: {done[key]['run']}.")
                for wrong, why in q.wrong:
                    st.markdown(f"- ✗ *“{wrong}”* — {I.answer(why, done[key])}")
            else:
                st.caption("Not measured yet in this session.")
