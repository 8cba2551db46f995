"""Derivations, one screen each, with numbers: E[τ] as a geometric series, fed by a run measured now."""
from __future__ import annotations

from specviz.core.costmodel import expected_tokens_per_pass
from specviz.core.sampling import SamplingConfig
from specviz.engine import comparisons as E
from specviz.engine.workloads import COPY, of_kind


def series_terms(alpha: float, k: int) -> list[float]:
    """E[τ] = 1 + α + α² + … + α^k: term i is P(the first i drafts are all kept)."""
    return [alpha ** i for i in range(k + 1)]


def alpha_from_steps(steps) -> tuple[int, int, float | None]:
    """(accepted, tested, α = accepted ÷ tested); tested counts a rejection as one test, untested drafts not at all."""
    accepted = sum(s.n_accepted for s in steps)
    rejections = sum(1 for s in steps if s.n_accepted < s.n_drafted)
    tested = accepted + rejections
    return accepted, tested, (accepted / tested) if tested else None


def series_experiment(max_new: int, method: str = "lookup", k: int = 4, temperature: float = 0.0) -> str:
    """The run measured_series makes, in words: method and rule, mode, k, tokens, workload."""
    rule = ", fixed rule, n = 3" if method == "lookup" else ""
    return (f"{method}{rule}, {'greedy' if temperature <= 0 else f'sampled at T = {temperature:g}'}, k = {k}, "
            f"{max_new} new tokens, one run, on {of_kind(COPY)[0].name}")


def measured_series(target, method: str = "lookup", k: int = 4, max_new: int = 48, drafter=None,
                    temperature: float = 0.0) -> dict:
    """Run `method` on a copy-heavy prompt now (lookup: the fixed rule, k drafts per match of n = 3, the series'
    k); α from the run, E[τ](α) from the series, τ as measured."""
    w = of_kind(COPY)[0]
    s, steps = E.run_one(target, w, method, k, 3, SamplingConfig(temperature), max_new, drafter=drafter,
                         k_rule="fixed")
    acc, tested, alpha = alpha_from_steps(steps)
    full = [st for st in steps if st.n_drafted == k]
    return {"workload": w.name, "method": method, "k": k, "accepted": acc, "tested": tested, "alpha": alpha,
            "tau": s.tokens_per_pass, "k_bar": s.mean_k, "steps": len(steps), "full_steps": len(full),
            "tau_full": (sum(st.n_emitted for st in full) / len(full)) if full else None,
            "expected": expected_tokens_per_pass(alpha, k) if alpha is not None else None,
            "per_position": s.per_position_acceptance}
