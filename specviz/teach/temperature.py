"""Acceptance against temperature and top-p, measured: the same prompt through each proposer at several
warpings (p and q always warped alike, core/sampling.py `logits_to_probs`), one short run each."""
from __future__ import annotations

from specviz.core.sampling import SamplingConfig
from specviz.engine.experiment import Setting
from specviz.engine.workloads import Workload

TEMPS = (0.0, 0.3, 0.7, 1.0, 1.5)
TOP_PS = (0.9, 0.5)            # at T = 1; top-p = 1 is the T = 1 point of the temperature sweep
K = 4


def settings(methods: list[str]) -> tuple[Setting, ...]:
    """The sweep's methods as every point runs them: k = K, lookup on the fixed rule."""
    return tuple(Setting.resolve(m, K, k_rule="fixed") for m in methods)


def experiment(methods: list[str], workload: Workload, tokens: int) -> str:
    """The sweep's runs in words, rendered from the Settings that run (Setting.describe)."""
    return (f"{'; '.join(s.describe() for s in settings(methods))}, {tokens} new tokens, one run per point (seed 0), "
            f"on '{workload.name}'; T = {', '.join(f'{t:g}' for t in TEMPS)}, and top-p = "
            f"{', '.join(f'{x:g}' for x in TOP_PS)} at T = 1")


def sweep(target, methods: list[str], workload: Workload, tokens: int, drafter=None, progress=None) -> list[dict]:
    """[{method, T, top_p, alpha, alpha_hat, tau, tested}] for every method at every T, then every top-p at T = 1.
    α = accepted ÷ tested (the chance a tested draft is kept), α̂ = accepted ÷ drafted (docs/metrics.md)."""
    from specviz.engine.comparisons import run_one

    points = [(t, 1.0) for t in TEMPS] + [(1.0, x) for x in TOP_PS]
    ran = settings(methods)
    rows, total = [], len(ran) * len(points)
    for i, one in enumerate(ran):
        m = one.method
        for j, (t, top_p) in enumerate(points):
            s, _ = run_one(target, workload, m, one.k, one.n, SamplingConfig(temperature=t, top_p=top_p), tokens,
                           drafter=drafter, k_rule=one.k_rule or "fixed")
            rows.append({"method": m, "T": t, "top_p": top_p, "alpha": s.alpha,
                         "alpha_hat": s.draft_acceptance_rate, "tau": s.tokens_per_pass, "tested": s.tested})
            if progress:
                progress((i * len(points) + j + 1) / total, f"{m} at T = {t:g}, top-p = {top_p:g}")
    return rows


def alpha_at(rows: list[dict], method: str, t: float, top_p: float = 1.0) -> float | None:
    return next((r["alpha"] for r in rows if r["method"] == method and r["T"] == t and r["top_p"] == top_p), None)


def trend(rows: list[dict], method: str) -> str:
    """'falls', 'rises' or 'about the same' from T = 0 to the highest T (a change within 0.05 is the same)."""
    a0, a1 = alpha_at(rows, method, TEMPS[0]), alpha_at(rows, method, TEMPS[-1])
    if a0 is None or a1 is None:
        return "not measured (nothing tested)"
    return "falls" if a1 < a0 - 0.05 else "rises" if a1 > a0 + 0.05 else "about the same"
