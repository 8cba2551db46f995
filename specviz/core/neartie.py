"""Greedy equality against plain decoding, and bfloat16 near-ties (docs/metrics.md).

At the first position d where a method's ids differ from plain decoding's, take the plain run's
logits at d: it is a near-tie when top1 - top2 <= 2 bf16 ulps of top1, with
ulp = 2^(floor(log2 |top1|) - 7). A divergence at a near-tie is numerics; anything else is a bug.
Nothing after d is compared (the contexts differ from there on).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from specviz.core.records import StepRecord


def bf16_ulp(x: float) -> float:
    return 2.0 ** (math.floor(math.log2(abs(x))) - 7) if x != 0 else 2.0 ** -133


@dataclass
class Divergence:
    position: int        # index into the generated tokens
    plain_token: int | None
    other_token: int | None
    top1: float          # plain run's top logit there
    gap: float           # plain run's top1 - top2 there
    near_tie: bool

    def describe(self) -> str:
        kind = "a near-tie (numerics, not a bug)" if self.near_tie else "NOT a near-tie"
        return (f"differs from plain decoding at generated token {self.position}: top-2 logit gap "
                f"{self.gap:.4g} at top logit {self.top1:.4g} (2 bf16 ulps = {2 * bf16_ulp(self.top1):.4g}) "
                f"— {kind}")


def emitted_logit_stats(steps: list[StepRecord]) -> tuple[list[float], list[float]]:
    """(top1, gap) of the target's logits at every emitted token of a run, in order."""
    top1, gap = [], []
    for s in steps:
        top1 += s.logit_top1[: len(s.emitted)]
        gap += s.logit_gap[: len(s.emitted)]
    return top1, gap


def first_difference(a: list[int], b: list[int]) -> int | None:
    """The first index where the two id lists differ (the shorter one's length when one is a prefix of the
    other); None when they are equal."""
    if list(a) == list(b):
        return None
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def first_divergence(plain_ids: list[int], plain_steps: list[StepRecord],
                     other_ids: list[int]) -> Divergence | None:
    """None when other_ids equals plain_ids; else where and whether it is a near-tie."""
    d = first_difference(plain_ids, other_ids)
    if d is None:
        return None
    top1, gap = emitted_logit_stats(plain_steps)
    if d >= len(top1):  # one run stopped early (EOS) where the other did not: no logits to judge
        return Divergence(d, None, None, float("nan"), float("nan"), False)
    return Divergence(d, plain_ids[d] if d < len(plain_ids) else None,
                      other_ids[d] if d < len(other_ids) else None,
                      top1[d], gap[d], gap[d] <= 2 * bf16_ulp(top1[d]))
