"""Derivations, one screen each, with numbers: E[τ] as a geometric series, fed by a run measured now."""
from __future__ import annotations

from specviz.core.costmodel import expected_tokens_per_pass
from specviz.engine import comparisons as E
from specviz.engine.experiment import Experiment, Setting
from specviz.engine.methods import DEFAULT_K_RULE
from specviz.engine.workloads import COPY, get, of_kind


def series_terms(alpha: float, k: int) -> list[float]:
    """E[τ] = 1 + α + α² + … + α^k: term i is P(the first i drafts are all kept)."""
    return [alpha ** i for i in range(k + 1)]


def alpha_from_steps(steps) -> tuple[int, int, float | None]:
    """(accepted, tested, α = accepted ÷ tested); tested counts a rejection as one test, untested drafts not at all."""
    accepted = sum(s.n_accepted for s in steps)
    rejections = sum(1 for s in steps if s.n_accepted < s.n_drafted)
    tested = accepted + rejections
    return accepted, tested, (accepted / tested) if tested else None


def plan_series(max_new: int = 48, method: str = "lookup", k: int = 4) -> Experiment:
    """The series lesson's run: fixed k drafts per step (lookup: k tokens per match of n = 3), so E[τ] at k
    is the law the run can be held to."""
    return Experiment((Setting.resolve(method, k, 3, "fixed" if method == "lookup" else None),),
                      (of_kind(COPY)[0].name,), max_new, against_plain=False)


def plan_server_view(method: str, workload: str, max_new: int) -> Experiment:
    """The server-view lesson's run: `method` at its default rule, k = 4 for a fixed-k method, lookup from n = 3."""
    return Experiment((Setting.resolve(method, 4, 3 if method == "lookup" else None),), (workload,), max_new,
                      against_plain=False)


def run_plan(target, ex: Experiment, drafter=None):
    """One run of a one-method plan (its first workload): (summary, steps)."""
    s = ex.settings[0]
    return E.run_one(target, get(ex.workloads[0]), s.method, s.k, s.n, ex.sampling, ex.new_tokens, drafter=drafter,
                     k_rule=s.k_rule or DEFAULT_K_RULE)


def run_settings(ex: Experiment) -> dict:
    """What decided run_plan's run, as a recording's settings carry it."""
    s = ex.settings[0]
    return {"method": s.method, "k": s.k, "n": s.n, "k_rule": s.k_rule or DEFAULT_K_RULE, "max_new": ex.new_tokens,
            "temperature": ex.sampling.temperature, "experiment": ex.describe()}


def measured_series(target, method: str = "lookup", k: int = 4, max_new: int = 48, drafter=None) -> dict:
    """Run plan_series now; α from the run, E[τ](α) from the series, τ as measured."""
    ex = plan_series(max_new, method, k)
    w = get(ex.workloads[0])
    s, steps = run_plan(target, ex, drafter)
    acc, tested, alpha = alpha_from_steps(steps)
    full = [st for st in steps if st.n_drafted == k]
    return {"workload": w.name, "method": method, "k": k, "accepted": acc, "tested": tested, "alpha": alpha,
            "tau": s.tokens_per_pass, "k_bar": s.mean_k, "steps": len(steps), "full_steps": len(full),
            "tau_full": (sum(st.n_emitted for st in full) / len(full)) if full else None,
            "expected": expected_tokens_per_pass(alpha, k) if alpha is not None else None,
            "per_position": s.per_position_acceptance}
