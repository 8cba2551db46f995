"""The guess-first widget: the learner commits to a number or a choice, then the page measures and scores it."""
from __future__ import annotations

from contextlib import contextmanager, nullcontext

import streamlit as st

from specviz.core.errors import InputError, ModelError
from specviz.teach import scorecard as SC
from specviz.teach.guess import Guess, asked, score
from specviz.ui import loading, waiting

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


def ask_and_lock(key: str, g: Guess, button: str, run_key: str | None = None, **kw) -> bool:
    """The guess input, then the measure button (key `run_key`, default f"{key}_run"): True when pressed with a
    guess, now locked with g's experiment."""
    value = ask(key, g)
    return st.button(button, key=run_key or f"{key}_run", **kw) and lock(key, value, g)


ERRORS = (InputError, ModelError)   # what a measurement says to the learner; anything else is a bug and raises


@contextmanager
def measuring(say: str = "{}", errors: tuple = ERRORS, bar: str | None = "measuring…", spinner: str | None = None,
              turn: bool = False):
    """The measuring half of a lab, written once: a progress bar showing `bar` (or a spinner, or neither when
    both are None), the block's work, st.error(say.format(e)) for `errors`, and the bar gone at the end. Yields
    progress(f, text=None) for the work. turn: the work is timed in the session's turns (ui/waiting.measuring)."""
    box = st.progress(0.0, bar) if bar is not None and spinner is None else None
    try:
        with (waiting.measuring(box) if turn else nullcontext()) as between, \
                (st.spinner(spinner) if spinner else nullcontext()):
            def progress(f: float, text: str | None = None) -> None:
                if box is not None:
                    box.progress(min(1.0, f), text)
                if between is not None:
                    between()
            yield progress
    except errors as e:
        st.error(say.format(e))
    finally:
        if box is not None:
            box.empty()


def lab(key: str, g: Guess, button: str, work, keep: str, before: str | None = None, run_key: str | None = None,
        say: str = "{}", errors: tuple = ERRORS, bar: str | None = "measuring…", spinner: str | None = None):
    """A guess-first lab's whole flow: the guess, the button that locks it, work(progress) measured (see
    `measuring`) and its result kept in session_state[keep] (a None result keeps the last one). Returns the kept
    result; when there is none yet, says `before` (what pressing the button will run) and returns None."""
    if ask_and_lock(key, g, button, run_key=run_key, type="primary"):
        with measuring(say, errors, bar, spinner) as progress:
            out = work(progress)
            if out is not None:
                st.session_state[keep] = out
    return kept(keep, before)


def kept(key: str, before: str | None = None):
    """A lab's kept result (session_state[key]); when there is none yet, says `before` and returns None."""
    got = st.session_state.get(key)
    if got is None and before:
        st.info(before)
    return got


def opening(title: str, text: str, sub: bool = False):
    """A lab section's title (a header, or a subheader with sub) and its first paragraph, then the session's target
    (None, after loading.target()'s error, when it did not load)."""
    (st.subheader if sub else st.header)(title)
    st.write(text)
    return loading.target()


def tv_guess(prompt: str = "the output's total variation distance from p (0 to 1)") -> Guess:
    """A guess of how far an output drifts from p (a total variation distance), close within 0.03."""
    return Guess(prompt, "tv", lo=0.0, hi=1.0, step=0.01, rel=0.0, abs_tol=0.03)


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
