"""The roofline of one decode step (pure): how long a pass over B sequences × (k + 1) new tokens must take on a
machine that moves `bandwidth` bytes/s and computes `peak` FLOP/s, and the verify cost v_B(k) it predicts.

A decode step reads every weight once (plus each sequence's KV cache) and does about 2 FLOPs per parameter per
token it computes (a multiply and an add). Its time is bounded below by both the reading and the arithmetic:

    t_B(k) = max(bytes ÷ bandwidth, FLOPs ÷ peak),   bytes = W + B·kv,   FLOPs = 2·P·B·(k + 1)
    v_B(k) = t_B(k) ÷ t_B(0)                          (one plain step at the same batch = 1)

Arithmetic intensity = FLOPs ÷ bytes. With the KV cache left out it is 2·B·(k + 1) ÷ (bytes per weight):
B·(k + 1) FLOP per byte for 16-bit weights, half that for float32. The ridge point = peak ÷ bandwidth: below it a
pass is bound by memory (extra tokens ride on the weight read), above it by arithmetic (extra tokens cost time).
Attention's own FLOPs over the cache are left out: at a short context they are a small share.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Machine:
    """What the roofline needs of a machine: bytes/s it moves and FLOP/s it computes, and where they came from."""
    name: str
    bandwidth: float   # bytes / s
    peak: float        # FLOP / s
    source: str = ""

    @property
    def ridge(self) -> float:
        """FLOP per byte at which the roof turns flat: above it a pass is bound by arithmetic."""
        return ridge(self.peak, self.bandwidth)


@dataclass(frozen=True)
class Step:
    """One decode step's model: parameters it computes with, bytes of weights it reads, KV bytes per sequence."""
    params: float      # parameters used per token (2 FLOPs each)
    weight_bytes: float
    kv_bytes: float = 0.0   # KV cache read per sequence per step (its context × bytes per token)

    def flops(self, batch: int, k: int) -> float:
        return 2.0 * self.params * batch * (k + 1)

    def bytes(self, batch: int) -> float:
        return self.weight_bytes + batch * self.kv_bytes

    def intensity(self, batch: int, k: int) -> float:
        """FLOP per byte read."""
        return self.flops(batch, k) / self.bytes(batch)


def ridge(peak: float, bandwidth: float) -> float:
    """The ridge point: peak FLOP/s ÷ bytes/s, in FLOP per byte."""
    return peak / bandwidth


def attainable(intensity: float, m: Machine) -> float:
    """The roof: the FLOP/s a kernel of this arithmetic intensity can reach, min(peak, intensity × bandwidth)."""
    return min(m.peak, intensity * m.bandwidth)


def step_time(s: Step, batch: int, k: int, m: Machine) -> float:
    """The roofline's lower bound on one pass, in seconds: max(bytes ÷ bandwidth, FLOPs ÷ peak)."""
    return max(s.bytes(batch) / m.bandwidth, s.flops(batch, k) / m.peak)


def predicted_v(s: Step, batch: int, k: int, m: Machine) -> float:
    """v_B(k) the roofline predicts: a pass over k + 1 tokens per sequence ÷ a pass over 1, at the same batch."""
    return step_time(s, batch, k, m) / step_time(s, batch, 0, m)


def intensity_per_byte(batch: int, k: int, bytes_per_weight: float) -> float:
    """The weights-only intensity 2·B·(k + 1) ÷ bytes per weight: B·(k + 1) for 16-bit weights, half for float32."""
    return 2.0 * batch * (k + 1) / bytes_per_weight


def compute_bound_batch(k: int, m: Machine, bytes_per_weight: float) -> float:
    """The batch at which a pass over k + 1 tokens per sequence reaches the ridge (weights only): past it every
    drafted token costs arithmetic time."""
    return m.ridge * bytes_per_weight / (2.0 * (k + 1))


def first_batch_over(v_by_batch: dict[int, float], limit: float) -> int | None:
    """The smallest batch whose v_B(k) exceeds `limit` (None: none of those measured or predicted does)."""
    return next((b for b in sorted(v_by_batch) if v_by_batch[b] > limit), None)


def throughput(batch: int, speedup: float, t1: float) -> float:
    """Tokens per second for the whole machine: B sequences, each `speedup` × one token per plain step of t1 s."""
    return batch * speedup / t1


def share_of_limit(tokens_per_s: float, bandwidth: float, bytes_per_token: float) -> float:
    """Plain decoding's share of the memory limit: its tokens/s ÷ (bandwidth ÷ bytes each token must read). 1.0 reads
    every byte at the copy's speed; the rest is time spent on something else (kernel launches, Python, arithmetic)."""
    return tokens_per_s * bytes_per_token / bandwidth
