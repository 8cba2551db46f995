"""The two statistics every measured figure is reported with (docs/metrics.md, "Over several runs").

    median  the middle of the values that were measured (None, "not measured", is skipped)
    spread  interquartile range with 4 or more values, the range with 2 or 3, None with fewer
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
