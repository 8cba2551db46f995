"""Issue 33's lesson, "the same method is 4× on one machine and 1.2× on another": v(k) measured in each dtype
`--dtype auto` chooses from, on the loaded target and a cast copy of it (models.as_dtype), and what the cost
model makes of one chain of drafts with each."""
from __future__ import annotations

from specviz.core import costmodel as be
from specviz.engine.autodtype import candidates
from specviz.engine.device import describe_machine, machine
from specviz.engine.models import LoadedModel, as_dtype
from specviz.engine.passcost import measure_v

K = 24                   # the widest pass the copying methods verify (lookup's and suffix's cap)
# The other kind of machine, committed (docs/dtype.md, "What auto measured and chose"): 2-core AMD EPYC, AVX2 only,
# torch 2.13.0, 2026-12-02, v(24) through the decode loop while other work loaded the CPU.
AVX2_MEASURED = {"bfloat16": 12.4, "float32": 3.5}


def experiment(target: LoadedModel, repeats: int, context: int) -> str:
    """The measurement in words, from its own settings."""
    return (f"v({K}) = one verify pass of {K + 1} rows ÷ one one-token step, timed through the decode loop on a "
            f"{context}-token random prompt, {repeats} interleaved rounds (median), in "
            f"{' and '.join(candidates(target.device))} on {describe_machine(machine(target.device))}")


def v_by_dtype(target: LoadedModel, repeats: int = 5, context: int = 256, progress=None) -> dict[str, float]:
    """{dtype: v(K)} for every dtype auto chooses from on this device; the target itself for its own dtype, a cast
    copy for the other (a second or so, and the copy's memory until it returns)."""
    out = {}
    dts = candidates(target.device)
    for i, dt in enumerate(dts):
        same = str(target.dtype).removeprefix("torch.") == dt
        model = target if same else as_dtype(target, dt)
        out[dt] = measure_v(model, ks=(K,), repeats=repeats, context=context)[K]
        if progress:
            progress((i + 1) / len(dts), f"v({K}) in {dt}")
    return out


def chain_speedup(alpha: float, v: float) -> float:
    """The cost model's speedup of a chain of K free drafts (c = 0, as for copying) kept at α, at this v(K)."""
    return be.speedup(alpha, K, 0.0, v)
