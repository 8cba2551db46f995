"""Break-even per family, side by side: the α each kind of proposer needs before speculation pays, from the one cost
model (core/costmodel.py) with each family's draft cost c — lookup (c ≈ 0), the draft model and the heads (c measured
on this machine from a short run each, against plain decoding), and layer truncation (c ≈ N/L)."""
from __future__ import annotations

from dataclasses import dataclass

from specviz.core import costmodel as be
from specviz.core.sampling import SamplingConfig

LOOKUP, TRUNCATION = "lookup", "layer truncation"
MEASURED = ("draft", "medusa", "eagle")        # the families whose c is measured here, when available


@dataclass
class Family:
    name: str
    c: float
    source: str                                 # how c was obtained, in a few words

    def breakeven(self, k: int, v: be.VCost) -> float | None:
        return be.breakeven_alpha(k, self.c, v)


def truncation(n_layers: int, used: int) -> Family:
    layers = f"{used} layer{'s' if used != 1 else ''}"
    return Family(TRUNCATION, used / n_layers, f"c ≈ N/L = {used}/{n_layers}: the first {layers} run per draft")


def families(measured: dict[str, float], n_layers: int, used: int) -> list[Family]:
    """Lookup, every measured family, layer truncation: in order of cost."""
    out = [Family(LOOKUP, 0.0, "c ≈ 0: a search in the context, no model")]
    out += [Family(m, c, f"c = {c:.3f}, measured: median draft time per drafted token ÷ one plain step")
            for m, c in measured.items()]
    return out + [truncation(n_layers, used)]


def breakevens(fams: list[Family], k: int, v: be.VCost) -> dict[str, float | None]:
    """{family: break-even α at draft length k} (0.0: pays at any α; None: never pays at this k)."""
    return {f.name: f.breakeven(k, v) for f in fams}


def measure_costs(target, drafter, methods: list[str], k: int = 4, tokens: int = 24, progress=None
                  ) -> dict[str, float]:
    """c for each method in `methods` (of MEASURED) from one greedy run of `tokens` new tokens at draft length k,
    against one plain run's step time (costmodel.draft_cost, costmodel.plain_step_time)."""
    from specviz.engine.comparisons import run_one
    from specviz.engine.workloads import NOVEL, of_kind

    w = of_kind(NOVEL)[0]
    _, plain_steps = run_one(target, w, "plain", 1, None, SamplingConfig(), tokens)
    t1 = be.plain_step_time(plain_steps)
    out = {}
    for i, m in enumerate(methods):
        _, steps = run_one(target, w, m, k, None, SamplingConfig(), tokens, drafter=drafter)
        out[m] = be.draft_cost(steps, t1)
        if progress:
            progress((i + 1) / len(methods), m)
    return out
