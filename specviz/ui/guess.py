"""The guess-first widget: the learner commits to a number or a choice, then the page measures and scores it."""
from __future__ import annotations

import streamlit as st

from specviz.teach.guess import Guess, score


def ask(key: str, g: Guess):
    """Draw the guess input (a number or a choice); returns its current value."""
    if g.choices:
        return st.radio(f"Your guess first: {g.prompt}", list(g.choices), index=None, key=f"{key}_guess")
    return st.number_input(f"Your guess first: {g.prompt}", min_value=float(g.lo), max_value=float(g.hi),
                           value=None, step=float(g.step), key=f"{key}_guess", placeholder="type a number")


def lock(key: str, value) -> bool:
    """Keep the guess that was in force when the learner asked to measure; False (and a warning) when none."""
    if value is None:
        st.warning("Commit to a guess first: the measurement is more instructive when you have one to check.")
        return False
    st.session_state[f"{key}_locked"] = value
    return True


def show(key: str, g: Guess, measured: dict) -> None:
    """The score of the locked guess against the measurement (nothing when no guess was locked)."""
    locked = st.session_state.get(f"{key}_locked")
    if locked is None or g.truth not in measured:
        return
    s = score(g, locked, measured)
    (st.success if s.close else st.info)(("✓ " if s.close else "✗ ") + s.text, icon=None)
