"""Linear layers on the CPU with their weights packed once for oneDNN, as torch.compile does.

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
picks another kernel for the two and their sums differ. Anything that needs gradients (the op has no backward)
or runs off the CPU stays on `F.linear`.

Float32 runs packed where the CPU's best kernels are AVX2 (no AVX512: the CPUs without native bfloat16, where
`--dtype auto` picks float32). Measured on a 2-core AMD EPYC with AVX2 only (torch 2.13, 2 threads, 2026-12-06,
docs/profile_plain_step.md): the 211 linear layers of SmolLM2-135M take 0.70-0.75 of `F.linear`'s time at 1 to
25 rows (38 against 51 ms at one row), so both the one-token step and a verify pass get cheaper. In float32 the
packed kernel does not give `F.linear`'s bits (neither gives the same bits for a row whatever the number of
rows: both differ from a one-row pass in the last bit or two, which is why float32 greedy equality is a test on
real outputs, not a property of the kernel); MKL's own packed path measured no faster. On AVX512 CPUs float32
stays on `F.linear`: not measured there.

The packed copy is kept beside the weight (the weight itself stays: state_dict, fingerprint, tied embedding),
so a packed model holds its linear weights twice (SmolLM2-135M: ~260 MiB more in bfloat16, ~510 MiB in float32);
it is rebuilt when the weight changes (another tensor, an in-place update, a cast) and is not copied by deepcopy or
pickle.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

MAX_ROWS = 32   # passes of up to this many rows run packed (bfloat16: there oneDNN's result equals F.linear's)
# A one-row bfloat16 pass runs as two rows (the row twice, the first result kept). On the AVX512-BF16 EPYC without AMX
# (2026-12-08, docs/profile_plain_step.md) oneDNN computes a one-row pass through the 1536-wide down projection with
# another summation than any pass of 2 to 48 rows (packed or F.linear): for some inputs a row of a verify pass then
# differs in its last bit from the one-token step at the same position, and the bench saw greedy copy-recycle leave
# plain's text at a 3-ulp gap. Every pass of 2 or more rows gave each row the same bits there (random inputs, 1 and 2
# threads, tests/tiny/test_packed.py); with AMX a one-row pass already matched. The second row costs the matmul
# little, but the copy that makes it is a few small operators: only the shapes where this CPU sums a lone row
# otherwise are padded (lone_row_differs); padding all 211 layers made a one-token step dearer than a short verify
# pass (the bench of 2026-12-08 02:30 measured v(1..5) < 1 with it).
ONE_AS_TWO = True
_LONE: dict[tuple, bool] = {}


def lone_row_differs(shape: tuple[int, int], rows: int = 64) -> bool:
    """Whether a one-row bfloat16 pass through a packed layer of this (out, in) shape gives other bits than the same
    row inside a two-row pass, on this CPU: random weights and `rows` random rows, probed once per shape and process
    (the kernel oneDNN picks depends on the shapes, not the values)."""
    key = tuple(shape)
    if key not in _LONE:
        g = torch.Generator().manual_seed(0)
        w = (torch.randn(*key, generator=g) * 0.02).to(torch.bfloat16)                     # (out, in)
        x = torch.randn(rows, key[1], generator=g).to(torch.bfloat16)                      # (rows, in)
        with torch.inference_mode(False), torch.no_grad():
            p = torch.ops.mkldnn._reorder_linear_weight(w, 1)
            one = torch.cat([torch.ops.mkldnn._linear_pointwise(x[j:j + 1], p, None, "none", [], "")
                             for j in range(rows)])                                         # (rows, out)
            two = torch.cat([torch.ops.mkldnn._linear_pointwise(x[j:j + 1].expand(2, -1).contiguous(), p, None,
                                                                "none", [], "")[:1] for j in range(rows)])
        _LONE[key] = not torch.equal(one, two)
    return _LONE[key]
F32_CAPABILITY = "AVX2"   # the CPU capability where float32 packing was measured faster (the docstring)


def available(dtype: torch.dtype = torch.bfloat16) -> bool:
    """Whether `dtype` linears run packed on this CPU: bfloat16 where oneDNN has native bfloat16 (AVX512-BF16 or
    AMX), float32 where the CPU's kernels are AVX2 (the docstring's measurement)."""
    try:
        if not torch.backends.mkldnn.is_available():
            return False
        if dtype is torch.bfloat16:
            return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
        return dtype is torch.float32 and torch.backends.cpu.get_cpu_capability() == F32_CAPABILITY
    except (AttributeError, RuntimeError):
        return False


PACKS = tuple(dt for dt in (torch.bfloat16, torch.float32) if available(dt))   # this process's packed dtypes


def label(device: torch.device | str = "cpu") -> str:
    """How a model's linear layers run on `device`, as the dtype cache's key and the bench's results name it:
    "aten" (F.linear), "onednn-packed" (bfloat16 packed) or "onednn-packed-<dtypes>" (e.g. float32 on AVX2)."""
    if torch.device(device).type != "cpu" or not PACKS:
        return "aten"
    names = [str(dt).removeprefix("torch.") for dt in PACKS]
    return "onednn-packed" + ("" if names == ["bfloat16"] else "-" + "-".join(names))


class PackedLinear(torch.nn.Linear):
    """nn.Linear whose CPU forward without gradients runs oneDNN on a weight packed once (the dtypes in PACKS)."""

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
        if (x.dtype is w.dtype and w.dtype in PACKS and x.device.type == "cpu"
                and x.numel() <= MAX_ROWS * x.shape[-1]
                and w.device.type == "cpu" and not (torch.is_grad_enabled() and (x.requires_grad or w.requires_grad))):
            if ONE_AS_TWO and x.numel() == x.shape[-1] and w.dtype is torch.bfloat16 and lone_row_differs(w.shape):
                two = x.reshape(1, -1).expand(2, -1).contiguous()                       # (2, in)
                out = torch.ops.mkldnn._linear_pointwise(two, self._pack(), self.bias, "none", [], "")[:1]
                return out.view(*x.shape[:-1], out.shape[-1])                           # (..., out)
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
    Nothing changes where no dtype runs packed (PACKS). Returns the number of layers turned."""
    if not PACKS:
        return 0
    n = 0
    for m in model.modules():
        if type(m) is torch.nn.Linear:
            m.__class__ = PackedLinear
            n += 1
    return n


def prepack(model: torch.nn.Module) -> int:
    """Pack now every PackedLinear whose weight is on the CPU in a packed dtype (what its first forward would do),
    so that packing is part of loading the model, not of its first run. Returns the number packed."""
    n = 0
    for m in model.modules():
        if isinstance(m, PackedLinear) and m.weight.dtype in PACKS and m.weight.device.type == "cpu":
            m._pack()
            if ONE_AS_TWO and m.weight.dtype is torch.bfloat16:
                lone_row_differs(tuple(m.weight.shape))      # probed now, at load, not in the first run
            n += 1
    return n
