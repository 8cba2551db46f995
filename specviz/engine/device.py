"""Where models run: the default device, the half-precision type it computes natively, waiting for its queue.

One place for what differs between a CPU and a GPU. Kernels on a CUDA device run asynchronously: a timer
read without `sync` measures kernel launches, not compute. bfloat16 is native on CUDA GPUs of compute
capability 8.0 and up (A100, H100, RTX 30xx+); older ones (T4, V100) only emulate it, slowly, so they get
float16 (`torch.cuda.is_bf16_supported(including_emulation=False)`).
"""
from __future__ import annotations

import contextlib
import os

import torch

from specviz import runtime


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


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo on Linux, else platform's), e.g. 'AMD EPYC'."""
    import platform
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def bf16_units(flags: str | None = None) -> str:
    """The CPU's own bfloat16 arithmetic, from its flags (/proc/cpuinfo's, or `flags`): 'AMX' (tile matrix units:
    a verify pass of 24 rows costs little more than one row), 'AVX512_BF16' (bfloat16 dot products in vector
    registers), or '' (none: bfloat16 is converted to float32). torch's capability names the vector width only
    (AVX512 for both of the first two), so two machines of one capability can differ several-fold in v(k)."""
    if flags is None:
        try:
            with open("/proc/cpuinfo") as f:
                flags = next((line for line in f if line.startswith("flags")), "")
        except OSError:
            flags = ""
    words = set(flags.split())
    return "AMX" if "amx_bf16" in words else "AVX512_BF16" if "avx512_bf16" in words else ""


def machine(device: str | torch.device | None = None, dtype: torch.dtype | str | None = None) -> dict:
    """Where a number was measured: CPU model and the kernels torch dispatches on it (its capability: AVX2,
    AVX512...) and, on a CPU, its own bfloat16 units (bf16_units: AMX or AVX512_BF16), torch's threads (the count
    set, which following the load may lower), torch's version, the GPU's name when the device is CUDA, and the
    dtype when given. Recorded beside every speed (CLI --json, the bench) and keyed by autodtype."""
    dev = torch.device(device) if device not in (None, "auto") else default_device()
    out = {"cpu": cpu_model(), "capability": torch.backends.cpu.get_cpu_capability(),
           "threads": runtime.threads_ceiling(), "torch": torch.__version__.split("+")[0]}
    if dev.type == "cuda":
        out["gpu"] = torch.cuda.get_device_name(dev)
    if restricted := kernel_restriction():
        out["restricted"] = restricted
    elif dev.type == "cpu" and (units := bf16_units()):
        out["bf16"] = units                                 # a restricted CPU stands in for one without them
    if dtype is not None:
        out["dtype"] = str(dtype).removeprefix("torch.")
    return out


RESTRICTING = ("ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY")   # the variables that keep oneDNN and ATen off kernels


def kernel_restriction() -> str:
    """'ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2' when this process keeps oneDNN or ATen off the CPU's best
    kernels (a CPU with AMX standing in for an AVX2-only one, docs/dtype.md), else ''."""
    return " ".join(f"{k}={os.environ[k]}" for k in RESTRICTING if os.environ.get(k))


def describe_machine(m: dict) -> str:
    """One line: 'AMD EPYC (AVX512, AVX512_BF16), 2 threads, torch 2.13.0, bfloat16' (a GPU first when there is
    one); a CPU whose kernels were restricted says so: its figures stand in for another kind of CPU."""
    where = f"{m['gpu']} GPU, host " if m.get("gpu") else ""
    cap = m.get("capability", "?") + (f", {m['bf16']}" if m.get("bf16") else "")
    if m.get("restricted"):
        cap += f" by {m['restricted']}: standing in for a CPU of that kind"
    s = (f"{where}{m.get('cpu', '?')} ({cap}), {m.get('threads', '?')} threads, "
         f"torch {m.get('torch', '?')}")
    return s + (f", {m['dtype']}" if m.get("dtype") else "")
