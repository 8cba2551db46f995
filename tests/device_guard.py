"""Catching CUDA-only device bugs on a CPU: a target on the `meta` device under a device-mixing guard.

A model moved to `meta` keeps every shape and dtype but holds no data, so it stands in for a GPU:
anything left on the CPU by mistake now sits on another device than the target. Meta kernels do not
reliably refuse CPU operands (an embedding, a matmul accept them), so `MixingGuard` refuses them the
way a CUDA kernel would: one operation given tensors of one or more dimensions on two devices raises
`DeviceMixing`. Allowed, as on CUDA: moves (`.to`, `.cpu()`, `copy_`), 0-dimensional tensors (CPU
scalars mix with CUDA tensors), and CPU index tensors in `t[idx]` / `t[idx] = v`.

Reading a meta tensor back (`float`, `.item()`, `.tolist()`, `.cpu()`) gives zeros of its shape: the
values are meaningless, but the code paths after the read (logging a loss, saving a checkpoint,
sampling from CPU logits) run, which is all a placement check needs.
"""
from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode
from torch.utils._pytree import tree_flatten

T = torch.Tensor
MOVES = {T.to, T.cpu, T.copy_, T.clone, T.detach, T.__deepcopy__, T.__reduce_ex__, T.__setstate__,
         torch._has_compatible_shallow_copy_type}          # the last: Module.to asks it before moving
INDEX = {T.__getitem__, T.__setitem__}
READS = {T.item, T.__float__, T.__int__, T.__bool__, T.__index__, T.tolist, T.numpy}

META = torch.device("meta")


class DeviceMixing(RuntimeError):
    """One operation got tensors on two devices (a CUDA kernel would refuse them)."""


def _name(func) -> str:
    return getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or str(func)


def _to_cpu_target(args, kwargs) -> bool:
    """Whether a `.to(...)` call asks for the CPU (device given as text, a torch.device, or a tensor)."""
    for a in (*args[1:], kwargs.get("device")):
        if isinstance(a, (str, torch.device)):
            return torch.device(a).type == "cpu"
        if isinstance(a, torch.Tensor):
            return a.device.type == "cpu"
    return False


class MixingGuard(TorchFunctionMode):
    """Raise DeviceMixing when one op mixes devices; read meta tensors back as zeros."""

    def __init__(self):
        super().__init__()
        self.ops = 0              # operations seen: a test can check the guard was on

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        self.ops += 1
        flat, _ = tree_flatten((args, kwargs))
        ts = [a for a in flat if isinstance(a, torch.Tensor)]
        first = ts[0] if ts else None
        if first is not None and first.device == META:
            if func in READS:
                with torch._C.DisableTorchFunction():
                    return func(torch.zeros(first.shape, dtype=first.dtype), *args[1:], **kwargs)
            if func is T.cpu or (func is T.to and _to_cpu_target(args, kwargs)):
                out = torch.zeros(first.shape, dtype=first.dtype)
                rest = {k: v for k, v in kwargs.items() if k == "dtype"}
                dts = [a for a in args[1:] if isinstance(a, torch.dtype)]
                return out.to(dts[0] if dts else rest.get("dtype", out.dtype))
        if func is T.copy_ and len(ts) > 1 and ts[1].device == META and first.device.type == "cpu":
            with torch._C.DisableTorchFunction():
                return first.zero_()                 # a copy back to the CPU reads zeros
        if func not in MOVES:
            seen = [t for i, t in enumerate(ts) if t.dim() > 0
                    and not (func in INDEX and i > 0 and t.device.type == "cpu")]
            devices = {t.device for t in seen}
            if len(devices) > 1:
                raise DeviceMixing(f"{_name(func)} got tensors on {' and '.join(sorted(map(str, devices)))}")
        return func(*args, **kwargs)


def on_meta(loaded):
    """A LoadedModel's copy on the meta device (its weights' shapes and dtypes, no data)."""
    import copy
    from dataclasses import replace

    model = copy.deepcopy(loaded.model).to(META)
    return replace(loaded, model=model, device=META, _fingerprint="meta")


def misplaced(module: torch.nn.Module, device: torch.device) -> list[str]:
    """Names of the parameters and buffers of `module` that are not on `device`."""
    named = [*module.named_parameters(remove_duplicate=False), *module.named_buffers(remove_duplicate=False)]
    return [f"{n} ({t.device})" for n, t in named if t.device != device]
