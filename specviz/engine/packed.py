"""bfloat16 linear layers on the CPU with their weights packed once for oneDNN, as torch.compile does.

Profiled on an Intel Xeon with AMX (torch 2.13, bfloat16, docs/profile_plain_step.md): aten::mm is ~78% of a
plain step, and oneDNN's verbose log shows why it is slower than the bytes allow: `F.linear` hands oneDNN the
weight in its stored (out, in) layout, so every call of its AMX matmul first reorders that weight into the
blocked layout the kernel reads. torch.compile's freezing pass (torch/_inductor/fx_passes/mkldnn_fusion.py)
replaces each bfloat16 `mm` with a constant weight by `mkldnn._reorder_linear_weight` once and
`mkldnn._linear_pointwise` per call. This module does exactly that without compiling anything: PackedLinear
packs its weight once (about a millisecond per layer; `prepack` does it when the model is loaded, so that the first
run does not pay it: on a loaded 2-core machine it cost that run's first step ~0.7 s) and calls the same op.

Measured (scripts/compile_trial.py, docs/profile_plain_step.md, 2026-12-04): the same bits as `F.linear` for every
pass of up to MAX_ROWS rows (1 and 2 threads), so every token specviz writes is unchanged, and speculative greedy
output still equals plain greedy output; plain greedy decoding 1.19-1.24x end to end (1 thread), a plain step
0.39 -> 0.47-0.50 of the bandwidth limit. Longer passes (a prompt's prefill) stay on `F.linear`: there oneDNN
picks another kernel for the two and their sums differ. Float32 stays on `F.linear` (MKL's packed path
measured no faster), as does anything that needs gradients (the op has no backward) or runs off the CPU.

The packed copy is kept beside the weight (the weight itself stays: state_dict, fingerprint, tied embedding),
so a bfloat16 model holds its linear weights twice (~260 MiB more for SmolLM2-135M); it is rebuilt when the
weight changes (another tensor, an in-place update, a cast) and is not copied by deepcopy or pickle.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

MAX_ROWS = 32   # passes of up to this many rows run packed: there oneDNN's result equals F.linear's bit for bit


def available() -> bool:
    """oneDNN with native bfloat16 on this CPU (AVX512-BF16 or AMX): where packing pays."""
    try:
        return bool(torch.backends.mkldnn.is_available() and torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


class PackedLinear(torch.nn.Linear):
    """nn.Linear whose bfloat16 CPU forward without gradients runs oneDNN on a weight packed once."""

    _packed: torch.Tensor | None = None
    _packed_key: tuple | None = None

    def _pack(self) -> torch.Tensor:
        w = self.weight
        key = (w.data_ptr(), w._version, w.dtype)
        if self._packed_key != key:
            with torch.inference_mode(False), torch.no_grad():
                self._packed = torch.ops.mkldnn._reorder_linear_weight(w.detach(), 1)   # batch-size hint 1
            self._packed_key = key
        return self._packed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        w = self.weight
        if (x.dtype is torch.bfloat16 and w.dtype is torch.bfloat16 and x.device.type == "cpu"
                and x.numel() <= MAX_ROWS * x.shape[-1]
                and w.device.type == "cpu" and not (torch.is_grad_enabled() and (x.requires_grad or w.requires_grad))):
            return torch.ops.mkldnn._linear_pointwise(x, self._pack(), self.bias, "none", [], "")
        return F.linear(x, w, self.bias)

    def __getstate__(self) -> dict:
        state = super().__getstate__() if hasattr(super(), "__getstate__") else self.__dict__.copy()
        state = dict(state)
        state.pop("_packed", None)                       # an opaque oneDNN tensor: rebuilt on first use
        state.pop("_packed_key", None)
        return state


def pack_linears(model: torch.nn.Module) -> int:
    """Turn every plain nn.Linear of `model` into a PackedLinear (in place; the weights are packed on first use).
    Nothing changes where oneDNN has no native bfloat16. Returns the number of layers turned."""
    if not available():
        return 0
    n = 0
    for m in model.modules():
        if type(m) is torch.nn.Linear:
            m.__class__ = PackedLinear
            n += 1
    return n


def prepack(model: torch.nn.Module) -> int:
    """Pack now every PackedLinear whose weight is bfloat16 on the CPU (what its first forward would do), so that
    packing is part of loading the model, not of its first run. Returns the number packed."""
    n = 0
    for m in model.modules():
        if isinstance(m, PackedLinear) and m.weight.dtype is torch.bfloat16 and m.weight.device.type == "cpu":
            m._pack()
            n += 1
    return n
