"""Break-even per family, side by side: the α each kind of proposer needs before speculation pays, from the one cost
model (core/costmodel.py) with each family's draft cost c — lookup (c ≈ 0), the draft model and the heads (c measured
on this machine from a short run each, against plain decoding), and layer truncation (c priced from the target's
own parameters: its first N layers plus its output layer, core/costmodel.py `truncation_cost`)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from specviz.core import costmodel as be
from specviz.core.sampling import SamplingConfig

if TYPE_CHECKING:
    from specviz.engine.experiment import Experiment

LOOKUP, TRUNCATION = "lookup", "layer truncation"
MEASURED = ("draft", "medusa", "eagle")        # the families whose c is measured here, when available


@dataclass
class Family:
    name: str
    c: float
    source: str                                 # how c was obtained, in a few words

    def breakeven(self, k: int, v: be.VCost) -> float | None:
        return be.breakeven_alpha(k, self.c, v)


def layer_params(model) -> be.LayerParams:
    """The parameters one pass of `model` (a transformers causal LM) reads, by part: each decoder layer, and the
    output layer with the final norm. A tied input embedding is the output layer (counted once); an untied one
    is read one row per token and goes to `other`."""
    body = model.get_decoder()
    head = model.get_output_embeddings().weight
    layers = tuple(sum(p.numel() for p in layer.parameters()) for layer in body.layers)
    head_n = head.numel() + sum(p.numel() for p in body.norm.parameters())
    total = sum(p.numel() for p in model.parameters())     # parameters() yields a tied weight once
    return be.LayerParams(layers, head_n, total - sum(layers) - head_n)


def truncation(params: be.LayerParams, used: int) -> Family:
    """Self-speculation with the first `used` layers and the output layer, c from the parameters it reads."""
    c = be.truncation_cost(params, used)
    share = params.head / (sum(params.layers) + params.head)
    first = sum(params.layers[:used]) / 1e6
    return Family(TRUNCATION, c, f"c ≈ {c:.2f}: the first {used} of {len(params.layers)} layers ({first:.1f}M "
                  f"parameters) plus the output layer ({params.head / 1e6:.1f}M, {share:.0%} of a pass), read per "
                  "draft")


def families(measured: dict[str, float], trunc: Family) -> list[Family]:
    """Lookup, every measured family, layer truncation: in order of cost."""
    out = [Family(LOOKUP, 0.0, "c ≈ 0: a search in the context, no model")]
    out += [Family(m, c, f"c = {c:.3f}, measured: median draft time per drafted token ÷ one plain step")
            for m, c in measured.items()]
    return out + [trunc]


def breakevens(fams: list[Family], k: int, v: be.VCost) -> dict[str, float | None]:
    """{family: break-even α at draft length k} (0.0: pays at any α; None: never pays at this k)."""
    return {f.name: f.breakeven(k, v) for f in fams}


def cost_plan(methods: list[str], k: int, tokens: int) -> Experiment:
    """The runs measure_costs makes: one greedy run of each method at draft length k against one plain run, on the
    first novel workload (its describe() is the lab's label)."""
    from specviz.engine.experiment import Experiment, Setting
    from specviz.engine.workloads import NOVEL, of_kind
    return Experiment(tuple(Setting.resolve(m, k) for m in methods), (of_kind(NOVEL)[0].name,), tokens)


def measure_costs(target, drafter, plan: Experiment, progress=None) -> dict[str, float]:
    """c for each method of `plan` (cost_plan, of MEASURED) from its one greedy run, against one plain run's step
    time (costmodel.draft_cost, costmodel.plain_step_time)."""
    from specviz.engine.comparisons import run_one
    from specviz.engine.workloads import BY_NAME

    w = BY_NAME[plan.workloads[0]]
    _, plain_steps = run_one(target, w, "plain", 1, None, SamplingConfig(), plan.new_tokens)
    t1 = be.plain_step_time(plain_steps)
    out = {}
    for i, s in enumerate(plan.settings):
        _, steps = run_one(target, w, s.method, s.k, s.n, SamplingConfig(), plan.new_tokens, drafter=drafter)
        out[s.method] = be.draft_cost(steps, t1)
        if progress:
            progress((i + 1) / len(plan.settings), s.method)
    return out
