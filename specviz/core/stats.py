"""The two statistics every measured figure is reported with (docs/metrics.md, "Over several runs").

    median  the middle of the values that were measured (None, "not measured", is skipped)
    spread  interquartile range with 4 or more values, the range with 2 or 3, None with fewer
    ratio   method tokens/s ÷ plain tokens/s of the same repeat
    speedup the median of those ratios over repeats
"""
from __future__ import annotations

import statistics
from collections.abc import Iterable


def median(xs: Iterable[float | None]) -> float | None:
    """The median of the values that are not None; None when none is."""
    got = [x for x in xs if x is not None]
    return statistics.median(got) if got else None


def spread(xs: Iterable[float | None]) -> float | None:
    """Interquartile range with 4 or more values, the range with 2 or 3, None with fewer (None skipped)."""
    got = sorted(x for x in xs if x is not None)
    if len(got) < 2:
        return None
    if len(got) < 4:
        return got[-1] - got[0]
    q = statistics.quantiles(got, n=4, method="inclusive")
    return q[2] - q[0]


def ratio(method_tokens_per_s: float, plain_tokens_per_s: float) -> float:
    """One repeat's ratio: method tokens/s ÷ the tokens/s of the plain run of the same repeat (0.0 when the
    plain run has none). The speedup of several repeats is median() of these (docs/metrics.md, "Speedup")."""
    return method_tokens_per_s / plain_tokens_per_s if plain_tokens_per_s else 0.0


def speedup(pairs: Iterable[tuple[float, float]]) -> float | None:
    """The speedup rule in one place: the median over repeats of ratio(method, plain) for each repeat's
    (method tokens/s, plain tokens/s); None when no repeat was measured."""
    return median(ratio(m, p) for m, p in pairs)
