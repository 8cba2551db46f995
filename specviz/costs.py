"""Measured costs, relative to one plain target decode step t1 (metrics.md): v(k) and c.

v(k) = time of one target pass over k+1 new positions / t1.
c    = time to draft one token / t1 (from a run's step records).
Medians of interleaved repeats: these machines are noisy.
"""
from __future__ import annotations

import statistics
import time

import torch
from transformers import DynamicCache

from .models import LoadedModel
from .records import StepRecord


@torch.inference_mode()
def measure_v(target: LoadedModel, ks=(1, 2, 4, 8, 16), context: int = 256, repeats: int = 7,
              progress=None) -> dict[int, float]:
    """{k: v(k)} on this model and device, over a cache of `context` random tokens."""
    m, dev = target.model, target.device
    body, head = m.get_decoder(), m.get_output_embeddings()
    V = target.vocab_size
    g = torch.Generator().manual_seed(0)
    cache = DynamicCache(config=m.config)
    body(input_ids=torch.randint(0, V, (1, context), generator=g).to(dev), cache=cache, use_cache=True)

    def one(n: int) -> float:
        x = torch.randint(0, V, (1, n), generator=g).to(dev)
        if dev.type == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        head(body(input_ids=x, cache=cache, use_cache=True).last_hidden_state).float().cpu()
        if dev.type == "cuda":
            torch.cuda.synchronize()
        dt = time.perf_counter() - t
        cache.crop(-n)
        return dt

    sizes = [1] + [k + 1 for k in ks]
    for n in sizes:  # warm-up
        one(n)
    times: dict[int, list[float]] = {n: [] for n in sizes}
    for r in range(repeats):  # interleaved
        for n in sizes:
            times[n].append(one(n))
        if progress:
            progress((r + 1) / repeats)
    t1 = statistics.median(times[1])
    return {k: statistics.median(times[k + 1]) / t1 for k in ks}


def interpolate_v(table: dict[int, float], k: float) -> float:
    """v at any k from a measured table (linear between points, flat outside; v(0) = 1)."""
    pts = sorted({0: 1.0, **table}.items())
    if k <= pts[0][0]:
        return pts[0][1]
    for (k0, v0), (k1, v1) in zip(pts, pts[1:]):
        if k <= k1:
            return v0 + (v1 - v0) * (k - k0) / (k1 - k0)
    return pts[-1][1]


def draft_cost(steps: list[StepRecord], t1: float) -> float:
    """c: median drafting time per drafted token over steps that drafted, divided by t1."""
    per = [s.draft_s / s.n_drafted for s in steps if s.n_drafted]
    return statistics.median(per) / t1 if per and t1 > 0 else 0.0


def plain_step_time(steps: list[StepRecord]) -> float:
    """t1 from a plain run's records: median verify time of its one-token passes."""
    ts = [s.verify_s for s in steps if s.n_drafted == 0]
    return statistics.median(ts) if ts else 0.0
