"""The session's scorecard: every guess scored on any page (through teach.guess.score), how many fell within
tolerance, by level, and the same as JSON or CSV to download."""
from __future__ import annotations

import csv
import io
import json
from dataclasses import asdict, dataclass, fields

from specviz.teach.guess import Guess, score

LAB = "lab"                 # a guess on a lesson page or a lab
WALKTHROUGH = "walkthrough"  # a stop of the guided walkthrough; the interview's guesses carry its depth


@dataclass(frozen=True)
class Entry:
    key: str            # the guess's widget key (which question on which page)
    level: str          # LAB, WALKTHROUGH or the interview's depth (junior ... principal)
    question: str
    experiment: str     # what it was scored against, as the page named it when the guess was locked
    guessed: str
    measured: str
    within_tolerance: bool
    tolerance: str      # "±20 % or ±0.05", "exact choice"


def tolerance_words(g: Guess) -> str:
    if g.choices:
        return "the same choice"
    rel = f"±{g.rel:.0%}" if g.rel else ""
    return " or ".join(x for x in (rel, f"±{g.abs_tol:g}" if g.abs_tol or not rel else "") if x)


def _fmt(x) -> str:
    return f"{x:.4g}" if isinstance(x, float) else str(x)


def entry(key: str, g: Guess, guessed, measured: dict, experiment: str | None, level: str = LAB) -> Entry | None:
    """The scored guess as a scorecard row; None when nothing was measured to score it against."""
    truth = measured.get(g.truth)
    if truth is None:
        return None
    s = score(g, guessed, measured, experiment)
    return Entry(key, level, g.prompt, g.experiment if experiment is None else experiment, _fmt(guessed),
                 _fmt(truth), s.close, tolerance_words(g))


def tally(entries: list[Entry]) -> dict:
    """{"total", "close", "levels": {level: (close, total)}} in the order levels first appear."""
    levels: dict[str, list[int]] = {}
    for e in entries:
        c = levels.setdefault(e.level, [0, 0])
        c[0] += e.within_tolerance
        c[1] += 1
    return {"total": len(entries), "close": sum(e.within_tolerance for e in entries),
            "levels": {lv: tuple(c) for lv, c in levels.items()}}


COLUMNS = [f.name for f in fields(Entry)]


def to_json(entries: list[Entry]) -> str:
    return json.dumps({"tally": tally(entries), "guesses": [asdict(e) for e in entries]}, ensure_ascii=False,
                      indent=1)


def to_csv(entries: list[Entry]) -> str:
    out = io.StringIO()
    w = csv.DictWriter(out, COLUMNS)
    w.writeheader()
    for e in entries:
        w.writerow(asdict(e))
    return out.getvalue()
