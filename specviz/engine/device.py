"""Where models run: the default device, the half-precision type it computes natively, waiting for its queue.

One place for what differs between a CPU and a GPU. Kernels on a CUDA device run asynchronously: a timer
read without `sync` measures kernel launches, not compute. bfloat16 is native on CUDA GPUs of compute
capability 8.0 and up (A100, H100, RTX 30xx+); older ones (T4, V100) only emulate it, slowly, so they get
float16 (`torch.cuda.is_bf16_supported(including_emulation=False)`).
"""
from __future__ import annotations

import contextlib

import torch


def default_device() -> torch.device:
    """A CUDA GPU when there is one, else the CPU (MPS only when asked for by name)."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def half_dtype(device: str | torch.device) -> torch.dtype:
    """bfloat16, except float16 on a CUDA GPU without native bfloat16."""
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_bf16_supported(including_emulation=False):
        return torch.float16
    return torch.bfloat16


def autocast(device: str | torch.device):
    """Mixed precision for training on `device` (half_dtype); none on devices without autocast here."""
    dev = torch.device(device)
    if dev.type not in ("cpu", "cuda"):
        return contextlib.nullcontext()
    return torch.autocast(dev.type, dtype=half_dtype(dev))


def sync(device: str | torch.device) -> None:
    """Wait until `device` has finished its queued work (CUDA only; the CPU is synchronous)."""
    dev = torch.device(device)
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)
