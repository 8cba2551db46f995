"""This machine's roof, measured: peak memory bandwidth (a large tensor copy) and peak FLOP/s (a large matmul in
the model's dtype). Short measurements (a few hundred ms on a CPU), medians of a few tries after a warm-up, each
timed inside the session's turn on the model (engine/measure.timed) so another session's work does not land in it.
scripts/plain_roofline.py and the Serving reality roofline lab both measure through here.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.core.stats import median
from specviz.engine import measure
from specviz.engine.attention import COMPUTE_ATTR
from specviz.engine.models import LoadedModel


@dataclass(frozen=True)
class Peaks:
    bandwidth: float     # bytes / s: bytes read + bytes written by a copy ÷ its seconds
    peak: float          # FLOP / s: 2·n³ ÷ the seconds of an n × n matmul
    copy_mib: int
    matmul_n: int
    dtype: str
    device: str
    tries: int

    def describe(self) -> str:
        return (f"a {self.copy_mib} MiB copy and a {self.matmul_n} × {self.matmul_n} {self.dtype} matmul on "
                f"{self.device}, median of {self.tries} tries each")


CPU_COPY_MIB = 512   # at least; a copy's source and destination together must be larger than the last-level cache


def last_cache_mib(path: str = "/sys/devices/system/cpu/cpu0/cache") -> int:
    """The largest CPU cache in MiB as the kernel reports it (sysfs `index*/size`, e.g. "307200K"), 0 if unknown."""
    from pathlib import Path
    units = {"K": 2**10, "M": 2**20, "G": 2**30}
    best = 0
    for f in Path(path).glob("index*/size"):
        try:
            raw = f.read_text().strip()
            best = max(best, int(raw[:-1]) * units[raw[-1]] if raw[-1] in units else int(raw))
        except (OSError, ValueError, IndexError):
            continue
    return best // 2**20


def sizes(device: torch.device) -> tuple[int, int]:
    """(copy MiB, matmul n): large enough to leave the caches and fill the arithmetic units, short on each device.
    On a CPU the copy's source alone is at least the last-level cache: a 128 MiB copy (256 MiB moved) ran from this
    VM's 300 MiB L3 and read 35.8 GB/s, against 24.0-24.9 GB/s for 512 MiB (bench/README.md, 2026-12-06)."""
    return (1024, 8192) if device.type == "cuda" else (max(CPU_COPY_MIB, last_cache_mib()), 1536)


def bandwidth(device: torch.device, mib: int = 256, tries: int = 5) -> float:
    """Bytes read + written per second by copying a `mib` MiB tensor: the median of `tries` after a warm-up."""
    src = torch.ones(mib * 2**20 // 4, device=device)                    # (n,) float32
    dst = torch.empty_like(src)
    dst.copy_(src)                                                       # warm-up: pages touched, kernels chosen
    secs = [measure.timed(device, lambda: dst.copy_(src))[1] for _ in range(tries)]
    return 2 * src.numel() * 4 / median(secs)


def flops(device: torch.device, dtype: torch.dtype, n: int = 2048, tries: int = 5) -> float:
    """FLOP/s of an n × n by n × n matmul in `dtype` (2·n³ FLOPs): the median of `tries` after a warm-up."""
    g = torch.Generator().manual_seed(0)
    a = torch.randn(n, n, generator=g).to(device=device, dtype=dtype)    # (n, n)
    b = torch.randn(n, n, generator=g).to(device=device, dtype=dtype)    # (n, n)
    torch.mm(a, b)                                                       # warm-up
    secs = [measure.timed(device, lambda: torch.mm(a, b))[1] for _ in range(tries)]
    return 2.0 * n ** 3 / median(secs)


def measure_peaks(device: torch.device, dtype: torch.dtype, tries: int = 5, copy_mib: int | None = None,
                  matmul_n: int | None = None) -> Peaks:
    """This machine's bandwidth and its peak FLOP/s in `dtype` (sizes per device unless given)."""
    mib, n = sizes(device)
    mib, n = copy_mib or mib, matmul_n or n
    with torch.inference_mode():
        bw, pk = bandwidth(device, mib, tries), flops(device, dtype, n, tries)
    return Peaks(bw, pk, mib, n, str(dtype).replace("torch.", ""), device.type, tries)


def bytes_per_token(target: LoadedModel, context: int) -> float:
    """Bytes one plain decoding step must read at `context` tokens: every weight once (the tied output layer reads
    the embedding matrix, counted once) plus the KV cache, which engine/attention.py keeps in its compute dtype
    (float64 unless the model says otherwise) rather than the weights' dtype."""
    kept = getattr(target.model, COMPUTE_ATTR, torch.float64)
    per_entry = torch.finfo(kept).bits / torch.finfo(target.dtype).bits   # kv_bytes_per_token: the weights dtype
    return target.param_bytes() + context * target.kv_bytes_per_token() * per_entry


def roof(target: LoadedModel, context: int, tries: int = 5) -> dict:
    """What plain decoding's share of the memory limit needs, measured now: this machine's bandwidth (a copy of
    sizes()' MiB, median of `tries`) and the bytes a step reads at `context` tokens."""
    mib = sizes(target.device)[0]
    bw = bandwidth(target.device, mib, tries)
    per = bytes_per_token(target, context)
    return dict(bandwidth=bw, copy_mib=mib, tries=tries, bytes_per_token=per, context=context, limit_tok_s=bw / per)
