"""The one way to time runs, and to run methods to the end against plain decoding, and report (docs/metrics.md).

    timed    wall seconds of any piece of work, end to end, read after the device has finished it
    run      one timed run to the end: tokens/s end to end (proposer reset and prefill included,
             model load excluded), timed from the outside so every caller counts the same things
    ratio    method tokens/s ÷ plain tokens/s of the plain run in the same repeat
    speedup  the median of the per-repeat ratios, reported with their spread
    spread   interquartile range of the repeats (4 or more), their range (2 or 3), unknown (1)
    quote    a figure whose spread is larger than its distance from 1 is too noisy to quote

Each repeat runs plain decoding once and every contender once, in an order rotated per repeat
(`one_repeat`), so a slow minute of a shared machine falls on all of them alike, and every contender
shares that plain run. `interleaved` repeats that for the decode loop; the bench calls `one_repeat`
with its own runs (transformers' generate() among them), v(k) (engine/passcost.py) with its steps.
Greedy equality is judged by specviz.core.neartie (the first divergence, and whether it is a near-tie).
The app (Compare, k/n experiments, Step through), the CLI, the bench, the interview answers and the
training evaluation all measure through this module.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Hashable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import TypeVar

import torch

from specviz.core.neartie import Divergence, first_divergence
from specviz.core.records import RunSummary, StepRecord
from specviz.core.stats import ratio, speedup, spread
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.device import sync
from specviz.engine.models import LoadedModel
from specviz.proposers.base import Proposer

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)

TOO_NOISY = "too noisy to quote, re-measure"


# -- the turn on a shared model ---------------------------------------------------------------------------
_TURN: list[Callable[[], AbstractContextManager]] = [nullcontext]


def hold_turns(factory: Callable[[], AbstractContextManager]) -> None:
    """Install the app's turn on its shared model (ui/turns.py installs TURNS.hold): from then on every piece
    of work timed here, and every round of v(k), runs inside the calling session's turn. The CLI, the bench
    and the tests own their model and keep the default (no turn)."""
    _TURN[0] = factory


def turn() -> AbstractContextManager:
    """The calling session's turn on the model (re-entrant: a session that holds it keeps it)."""
    return _TURN[0]()


# -- one run ------------------------------------------------------------------------------------------
def timed(device: torch.device, work: Callable[[], T]) -> tuple[T, float]:
    """(work(), its wall seconds), inside the session's turn on the model: the clock is read after the device
    has finished the work queued before and by it (a GPU runs asynchronously; a CPU needs no wait)."""
    with turn():
        sync(device)
        t0 = time.perf_counter()
        out = work()
        sync(device)
        return out, time.perf_counter() - t0


def run(target: LoadedModel, proposer: Proposer | None, prompt_ids, cfg: DecodeConfig,
        eos_token_id=None) -> tuple[RunSummary, list[StepRecord]]:
    """One run to the end through the decode loop, timed end to end from the outside."""
    def to_end() -> Decoder:
        d = Decoder(target, proposer, prompt_ids, cfg, eos_token_id)
        for _ in d.run():
            pass
        return d

    d, wall = timed(target.device, to_end)
    return d.summary().retimed(wall), d.steps


# -- the rules -----------------------------------------------------------------------------------------
def too_noisy(value: float, sp: float | None, reference: float = 1.0) -> bool:
    """True when the spread is larger than the effect shown (the distance from the reference)."""
    return sp is not None and sp > abs(value - reference)


def quote(value: float, sp: float | None, repeats: int, reference: float = 1.0, unit: str = "×") -> str:
    """A measured figure as text, or the refusal when its spread exceeds its effect."""
    if too_noisy(value, sp, reference):
        return f"{TOO_NOISY} ({value:.2f}{unit}, spread {sp:.2f} over {repeats} repeats)"
    if sp is None:
        return f"{value:.2f}{unit} (one repeat: spread unknown)"
    return f"{value:.2f}{unit} (spread {sp:.2f} over {repeats} repeats)"


# -- the result type --------------------------------------------------------------------------------------
@dataclass
class Repeat:
    summary: RunSummary
    steps: list[StepRecord] = field(repr=False)
    plain: RunSummary = field(repr=False)
    plain_steps: list[StepRecord] = field(repr=False)

    @property
    def ratio(self) -> float:
        return ratio(self.summary.tokens_per_s, self.plain.tokens_per_s)


@dataclass
class Measured:
    """One contender against plain decoding over interleaved repeats: one request, or a session of requests
    (engine.sessions.SessionMeasured, whose repeats are whole sessions). What it reports comes from the per-repeat
    ratios (core.stats.ratio): the speedup is their median, with their spread."""
    label: str
    repeats: list[Repeat]
    divergence: Divergence | None    # greedy only: where its output first differs from plain's
    compared: bool                   # False when sampling (tokens are not expected to match)

    @property
    def ratios(self) -> list[float]:
        return [r.ratio for r in self.repeats]

    @property
    def speedup(self) -> float:
        """core.stats.speedup: the median over repeats of each repeat's ratio."""
        return speedup((r.summary.tokens_per_s, r.plain.tokens_per_s) for r in self.repeats) or 0.0

    @property
    def spread(self) -> float | None:
        return spread(self.ratios)

    @property
    def too_noisy(self) -> bool:
        return too_noisy(self.speedup, self.spread)

    def quote(self) -> str:
        return quote(self.speedup, self.spread, len(self.ratios))

    def typical_index(self) -> int:
        """The repeat whose ratio is the median (the lower one of two middles)."""
        r = self.ratios
        return sorted(range(len(r)), key=lambda i: r[i])[(len(r) - 1) // 2]

    @property
    def typical(self) -> Repeat:
        return self.repeats[self.typical_index()]

    summary = property(lambda self: self.typical.summary)
    steps = property(lambda self: self.typical.steps)
    plain = property(lambda self: self.typical.plain)
    plain_steps = property(lambda self: self.typical.plain_steps)

    @property
    def identical(self) -> bool:
        return self.compared and self.divergence is None


# -- interleaved measuring -----------------------------------------------------------------------------------
Contender = tuple[Callable[[], Proposer | None], DecodeConfig]  # (proposer factory, its settings)


def one_repeat(order: list[K], r: int, run_one: Callable[[K], T], done: Callable[[K], None] | None = None
               ) -> dict[K, T]:
    """Repeat r (from 0) of an interleaved measurement: every entry of `order` (plain decoding first)
    run once through run_one, starting at entry r mod len(order) and wrapping round, so that across
    repeats no contender always runs first or last. done(entry) is called after each run."""
    i = r % len(order) if order else 0
    got = {}
    for x in order[i:] + order[:i]:
        got[x] = run_one(x)
        if done:
            done(x)
    return got


def each_repeat(order: list[K], repeats: int, run_one: Callable[[K], T], progress=None, prefix: str = ""):
    """one_repeat for r = 0 … repeats − 1, yielding each repeat's {entry: result}; progress(fraction, text) after
    every run, the text naming the repeat and the entry (None: plain) after `prefix`."""
    total, done = repeats * len(order), [0]
    for r in range(repeats):
        def tick(x, r=r):
            done[0] += 1
            if progress:
                progress(done[0] / total, f"{prefix}repeat {r + 1}/{repeats}: {'plain' if x is None else x}")
        yield one_repeat(order, r, run_one, tick)


def interleaved(target: LoadedModel, prompt_ids, contenders: dict[str, Contender], plain_cfg: DecodeConfig,
                repeats: int = 3, eos_token_id=None, progress=None) -> tuple[dict[str, Measured], list]:
    """Every contender against plain decoding, `repeats` interleaved rounds sharing one plain run each.

    Returns ({label: Measured}, the plain runs as (summary, steps), one per repeat). A factory is called
    once per run; it may return the same proposer each time (the decoder resets it)."""
    if repeats < 1:
        raise ValueError("repeats must be >= 1")
    labels = list(contenders)
    order = [None, *labels]               # None = plain
    runs: dict[str, list] = {x: [] for x in labels}
    plains: list = []
    warm_up(target, prompt_ids, contenders, plain_cfg, eos_token_id)

    def run_one(x):
        if x is None:
            return run(target, None, prompt_ids, plain_cfg, eos_token_id)
        make, cfg = contenders[x]
        return run(target, make(), prompt_ids, cfg, eos_token_id)

    for got in each_repeat(order, repeats, run_one, progress):
        plains.append(got[None])
        for x in labels:
            runs[x].append(Repeat(*got[x], *got[None]))
    out = {}
    for x in labels:
        greedy = contenders[x][1].sampling.greedy and plain_cfg.sampling.greedy
        first = runs[x][0]
        div = first_divergence(first.plain.token_ids, first.plain_steps, first.summary.token_ids) if greedy else None
        out[x] = Measured(x, runs[x], div, compared=greedy)
    return out, plains


WARM_UP_TOKENS = 4


def warm_up(target: LoadedModel, prompt_ids, contenders: dict[str, Contender], plain_cfg: DecodeConfig,
            eos_token_id=None) -> None:
    """Short untimed runs of plain and of every contender before the first timed repeat: the first passes
    after a load (on a GPU: CUDA's one-time start-up, kernel selection) are slower than the rest, and would
    otherwise fall on whichever run comes first."""
    short = lambda cfg: replace(cfg, max_new_tokens=min(WARM_UP_TOKENS, cfg.max_new_tokens))  # noqa: E731
    run(target, None, prompt_ids, short(plain_cfg), eos_token_id)
    for make, cfg in contenders.values():
        run(target, make(), prompt_ids, short(cfg), eos_token_id)


def plain_config(cfg: DecodeConfig) -> DecodeConfig:
    """Plain decoding with the same prompt settings: max new tokens, sampling, seed, EOS handling."""
    return replace(cfg, adaptive=False, k=max(1, cfg.k))


def against_plain(target: LoadedModel, make_proposer: Callable[[], Proposer | None], prompt_ids,
                  cfg: DecodeConfig, eos_token_id=None, repeats: int = 3, progress=None) -> Measured:
    """One method against plain decoding (the Step-through check, the CLI's --against-plain)."""
    got, _ = interleaved(target, prompt_ids, {"method": (make_proposer, cfg)}, plain_config(cfg),
                         repeats, eos_token_id, progress)
    return got["method"]
