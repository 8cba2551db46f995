"""What one page leaves in the session for another, behind named accessors: the session keys live here.

Compare proposers keeps its last comparison; Take it to a server starts from its recommendation.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from specviz.engine import experiments as E

COMPARISON = "cmp_result"  # ui/memory.HEAVY_KEYS evicts it from an idle session


@dataclass(frozen=True)
class Comparison:
    runs: list            # engine.experiments.Run, every repeat
    mode: str             # "greedy" or "sampled T=…"
    shared: bool = False  # other sessions took turns on the model meanwhile


def keep_comparison(c: Comparison) -> None:
    st.session_state[COMPARISON] = {"runs": c.runs, "mode": c.mode, "shared": c.shared}


def comparison() -> Comparison | None:
    """This session's last comparison (Compare proposers), if any."""
    got = st.session_state.get(COMPARISON)
    return Comparison(got["runs"], got["mode"], got.get("shared", False)) if got else None


def recommended(methods) -> tuple[E.Recommendation, int | None] | None:
    """The last comparison's first recommendation whose method is in `methods`, with the lookup n it ran
    (None when lookup did not run); None without a comparison or such a recommendation."""
    c = comparison()
    if c is None:
        return None
    picked = next((r for r in E.recommend(c.runs).values() if r.method in methods), None)
    if picked is None:
        return None
    return picked, next((r.n for r in c.runs if r.method == "lookup" and r.n), None)
