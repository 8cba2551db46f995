"""Break-even's drafter-sizing lab (lessons.md concept 20): real speculative decoding on one prompt with drafters of
increasing cost — the target's own first N layers and its output layer for several N (untrained), the shipped draft
model, the heads — each measured for α, c and speedup through the one measuring path (engine/measure.interleaved,
every drafter against the same plain runs), each built by the registry (engine/methods.make_proposer)."""
from __future__ import annotations

from dataclasses import dataclass

from specviz.core import costmodel as be
from specviz.core.sampling import SamplingConfig
from specviz.engine import measure, methods as M
from specviz.engine.comparisons import decode_config
from specviz.engine.experiment import mode_words, runs_words
from specviz.teach.families import layer_params, truncation

SHARES = (1 / 8, 1 / 4, 1 / 2, 3 / 4)    # the self-drafters: these shares of the target's layers (at least 1)
OTHERS = ("draft", "eagle")              # then the shipped drafter and the heads, where they build


@dataclass(frozen=True)
class Drafter:
    label: str
    method: str
    layers: int | None = None            # self-draft: the first N layers
    priced_c: float | None = None        # self-draft: c from the parameters its pass reads (layers + output layer)


@dataclass
class Row:
    drafter: Drafter
    alpha: float | None                  # accepted ÷ tested
    c: float                             # measured: median draft time per drafted token ÷ the plain step t1
    tau: float                           # tokens per pass
    speedup: float                       # median over repeats of tokens/s ÷ plain's tokens/s in the same repeat
    spread: float | None
    repeats: int = 1


def self_layers(n_layers: int, shares=SHARES) -> list[int]:
    """The N of each self-drafter: round(share × L), kept within 1 … L − 1, without repeats."""
    return list(dict.fromkeys(min(n_layers - 1, max(1, round(s * n_layers))) for s in shares))


def drafters(target, usable: list[str], shares=SHARES) -> list[Drafter]:
    """The self-drafters (cheapest first), then the shipped drafter and the heads among `usable` methods."""
    params = layer_params(target.model)
    L = len(params.layers)
    out = [Drafter(f"first {n} of {L} layers", "self-draft", n, truncation(params, n).c)
           for n in self_layers(L, shares)]
    names = {"draft": "draft model (trained, 'draft')", "eagle": "EAGLE head (trained, 'eagle')"}
    return out + [Drafter(names[m], m) for m in OTHERS if m in usable]


def describe(ds: list[Drafter], workload: str, k: int, tokens: int, repeats: int, temperature: float = 0.0) -> str:
    """The experiment in words: every drafter, k, mode, tokens, repeats, prompt."""
    return (f"{', '.join(d.label for d in ds)}, each at k = {k} vs plain decoding, {mode_words(temperature)}, "
            f"{tokens} new tokens, {runs_words(repeats)}, on '{workload}'")


def measure_drafters(target, ds: list[Drafter], workload, k: int = 4, tokens: int = 24, repeats: int = 2,
                     drafter=None, progress=None) -> list[Row]:
    """Every drafter against plain decoding on one prompt, interleaved (measure.interleaved): α and τ of its median
    repeat, c against that repeat's plain step time (costmodel.draft_cost, plain_step_time), the median speedup."""
    ids = M.encode_prompt(target.tokenizer, workload.prompt, workload.chat)
    cfg = decode_config(k, SamplingConfig(), tokens, 0)

    def factory(d: Drafter):
        return lambda: M.make_proposer(d.method, target, drafter=drafter, layers=d.layers)

    got, _ = measure.interleaved(target, ids, {d.label: (factory(d), cfg) for d in ds}, measure.plain_config(cfg),
                                 repeats, target.tokenizer.eos_token_id, progress)
    rows = []
    for d in ds:
        m = got[d.label]
        c = be.draft_cost(m.steps, be.plain_step_time(m.plain_steps))
        rows.append(Row(d, m.summary.alpha, c, m.summary.tokens_per_pass, m.speedup, m.spread, len(m.ratios)))
    return rows


def verdict(rows: list[Row]) -> dict:
    """{"fastest": label, "most accurate": label (highest α)}: the scored answer and its foil."""
    fastest = max(rows, key=lambda r: r.speedup)
    accurate = max(rows, key=lambda r: -1.0 if r.alpha is None else r.alpha)
    return {"fastest": fastest.drafter.label, "most accurate": accurate.drafter.label}


def breakeven(rows: list[Row], k: int, v: be.VCost) -> dict[str, float | None]:
    """{label: break-even α at k with that drafter's measured c} (None: never pays at this k)."""
    return {r.drafter.label: be.breakeven_alpha(k, r.c, v) for r in rows}
