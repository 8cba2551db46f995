"""Guess first, then measure: score a learner's guess against the number measured on the spot."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Guess:
    """What the learner is asked to commit to before a measurement, and where the answer is."""
    prompt: str                         # the question, in a few words
    truth: str                          # key of the measured dict that holds the answer (a float or a choice)
    choices: tuple[str, ...] = ()       # empty: a number
    lo: float = 0.0                     # number input range and step
    hi: float = 100.0
    step: float = 0.1
    rel: float = 0.2                    # "close" when within this fraction of the measured value ...
    abs_tol: float = 0.05               # ... or within this absolute distance
    experiment: str = ""                # what will be measured (mode, method, k, n, tokens, repeats), if not in prompt


def asked(g: Guess) -> str:
    """The guess as the page asks it: the question, then the experiment that will score it."""
    return f"Your guess first: {g.prompt}" + (f" ({g.experiment})" if g.experiment else "")


@dataclass
class Score:
    close: bool
    text: str


def score(g: Guess, guessed, measured: dict, experiment: str | None = None) -> Score:
    """Compare the locked-in guess with measured[g.truth]; one sentence that says how far off it was, then the
    experiment it was scored against (`experiment`: the one named when the guess was locked; default g's)."""
    s = _score(g, guessed, measured)
    ex = g.experiment if experiment is None else experiment
    return Score(s.close, s.text + (f" Scored against: {ex}." if ex else ""))


def _score(g: Guess, guessed, measured: dict) -> Score:
    truth = measured[g.truth]
    if truth is None:   # nothing was measured (e.g. no draft tested): a guess cannot be scored against it
        return Score(False, f"Not scored: this run measured nothing to compare with your guess ({guessed}); "
                            "see the answer for why.")
    if g.choices:
        if guessed == truth:
            return Score(True, f"Your guess, “{guessed}”, is what the measurement shows.")
        return Score(False, f"You guessed “{guessed}”; the measurement says “{truth}”.")
    t, x = float(truth), float(guessed)
    off = x - t
    close = abs(off) <= max(g.abs_tol, g.rel * abs(t))
    if close:
        return Score(True, f"Your guess {x:g} is close to the measured {t:.3g} (off by {abs(off):.2g}).")
    how = "high" if off > 0 else "low"
    ratio = f", {x / t:.1f}× the measured value" if t else ""
    return Score(False, f"Your guess {x:g} is {how}: measured {t:.3g} (off by {abs(off):.2g}{ratio}).")
