"""The guess-first widget: the learner commits to a number or a choice, then the page measures and scores it."""
from __future__ import annotations

import streamlit as st

from specviz.teach import scorecard as SC
from specviz.teach.guess import Guess, asked, score

CARD = "scorecard"   # {(key, experiment, guess): teach.scorecard.Entry}, kept for the session


def ask(key: str, g: Guess):
    """Draw the guess input (a number or a choice); returns its current value."""
    label = asked(g)
    if g.choices:
        return st.radio(label, list(g.choices), index=None, key=f"{key}_guess")
    return st.number_input(label, min_value=float(g.lo), max_value=float(g.hi),
                           value=None, step=float(g.step), key=f"{key}_guess", placeholder="type a number")


def lock(key: str, value, g: Guess | None = None) -> bool:
    """Keep the guess that was in force when the learner asked to measure (and, given g, the experiment it
    named, which the score repeats even if the settings change afterwards); False (and a warning) when none."""
    if value is None:
        st.warning("Commit to a guess first: the measurement is more instructive when you have one to check.")
        return False
    st.session_state[f"{key}_locked"] = value
    if g is not None:
        st.session_state[f"{key}_experiment"] = g.experiment
    return True


def ask_and_lock(key: str, g: Guess, button: str, **kw) -> bool:
    """The guess input, then the measure button (key f"{key}_run"): True when pressed with a guess, now locked."""
    value = ask(key, g)
    return st.button(button, key=f"{key}_run", **kw) and lock(key, value, g)


def show(key: str, g: Guess, measured: dict, level: str = SC.LAB) -> None:
    """The score of the locked guess against the measurement (nothing when no guess was locked); the scored guess
    joins the session's scorecard (`level`: teach.scorecard's LAB, WALKTHROUGH or an interview depth)."""
    locked = st.session_state.get(f"{key}_locked")
    if locked is None or g.truth not in measured:
        return
    experiment = st.session_state.get(f"{key}_experiment")
    s = score(g, locked, measured, experiment)
    (st.success if s.close else st.info)(("✓ " if s.close else "✗ ") + s.text, icon=None)
    e = SC.entry(key, g, locked, measured, experiment, level)
    if e is not None:
        st.session_state.setdefault(CARD, {})[(key, e.experiment, e.guessed)] = e


def card() -> list:
    """The session's scored guesses, in the order they were first scored."""
    return list(st.session_state.get(CARD, {}).values())
