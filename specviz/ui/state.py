"""What one page leaves in the session for another, behind named accessors: the session keys live here.

Every page's measured run per method (the break-even calculator fills itself from these), the v(k)
table measured for the session's target, and Compare proposers' last comparison (Take it to a server
starts from its recommendation).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import streamlit as st

from specviz.engine import comparisons as E
from specviz.engine.experiment import Setting
from specviz.engine.methods import DEFAULT_K_RULE, REGISTRY
from specviz.ui import memory
from specviz.ui.loading import model_key, target
from specviz.ui.waiting import measured_v

RUNS = "measured_runs"     # ui/memory.HEAVY_KEYS evicts it from an idle session
V_TABLES = "v_tables"
COMPARISON = "cmp_result"  # ui/memory.HEAVY_KEYS evicts it from an idle session


# -- measured runs shared between pages (the calculator fills itself from these) ----------------
def remember_run(method: str, summary, steps, plain_summary=None, k: int | None = None,
                 n: int | None = None, v_table: dict | None = None, plain_steps=None,
                 speedup: float | None = None, self_sized: bool = False, mode: str | None = None,
                 setting: Setting | None = None) -> None:
    """Keep the last measured run per method in this session (summary + step records).

    plain_summary: the plain-decoding run measured alongside it (same prompt, same settings),
    which gives t1 (and the measured speedup, unless `speedup` says it); v_table: {k: v(k)} if
    measured; plain_steps: that plain run's step records (t1 is then their median pass time rather
    than a mean); speedup: the figure the page showed, when it measured over several repeats (the
    median of their ratios): the calculator shows that one, not this run's own ratio; self_sized: the method
    sized its own drafts (lookup's match rule, suffix), so k is only its cap and the calculator takes k̄; mode:
    'greedy' or 'sampled at T = …', as the picker names the run; setting: what ran (engine/experiment.Setting, whose
    describe() the picker shows), resolved from method, k and n when not given.
    """
    if setting is None:
        setting = Setting.resolve(method, k, n if isinstance(n, int) else None)
    st.session_state.setdefault(RUNS, {})[method] = {"setting": setting,
        "summary": summary, "steps": memory.lean(steps), "plain": plain_summary, "k": k, "n": n,
        "v_table": v_table, "plain_steps": None if plain_steps is None else memory.lean(plain_steps),
        "speedup": speedup, "self_sized": self_sized, "mode": mode, "at": time.time()}


def measured_runs() -> dict:
    """{method: {"setting", "summary", "steps", "plain", "k", "n", "v_table", "plain_steps", "speedup", "self_sized",
    "mode", "at"}} for this session."""
    return st.session_state.get(RUNS, {})


def run_label(e: dict) -> str:
    """A remembered run in words, rendered from the Setting that ran (Setting.describe), then what it measured:
    k̄ where the method sized its own drafts, the mode, the tokens, and whether plain decoding ran beside it."""
    s, summary = e["setting"], e["summary"]
    spec = REGISTRY.get(s.method)
    own = e.get("self_sized") or (spec is not None and spec.sizes_own_drafts(s.k_rule or DEFAULT_K_RULE))
    mode = e.get("mode") or ("greedy" if all(x.greedy for x in e["steps"]) else "sampled")
    return (s.describe() + (f", k̄ = {summary.mean_k:.1f}" if own else "") + f", {mode}, "
            f"{len(summary.token_ids)} tokens" + ("" if e.get("plain") else " (no plain run: α only)"))


# -- v(k), measured once per model / device / dtype (ui/waiting.measured_v) -------------------------
def v_table_if_measured() -> dict[int, float] | None:
    """The v(k) table this session measured for its current target, if any."""
    return st.session_state.get(V_TABLES, {}).get(model_key())


def measure_v_table() -> dict[int, float] | None:
    """Measure (or fetch) v(k) for the session's target; st.error and None on failure."""
    if target() is None:
        return None
    table = measured_v(*model_key())
    st.session_state.setdefault(V_TABLES, {})[model_key()] = table
    return table


# -- Compare proposers' last comparison ---------------------------------------------------------
@dataclass(frozen=True)
class Comparison:
    runs: list            # engine.comparisons.Run, every repeat
    mode: str             # "greedy" or "sampled T=…"
    shared: bool = False  # other sessions took turns on the model meanwhile
    recorded: object | None = None  # opened from a recording (core/recording.Recording): its timings are its own
    settings: dict | None = None  # what the page was set to (a download carries it)


def keep_comparison(c: Comparison) -> None:
    st.session_state[COMPARISON] = {"runs": c.runs, "mode": c.mode, "shared": c.shared, "recorded": c.recorded,
                                    "settings": c.settings}


def comparison() -> Comparison | None:
    """This session's last comparison (Compare proposers), if any."""
    got = st.session_state.get(COMPARISON)
    return Comparison(got["runs"], got["mode"], got.get("shared", False), got.get("recorded"),
                      got.get("settings")) if got else None


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
