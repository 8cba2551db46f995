"""Plain greedy decoding end to end: the eager model against library speed-ups of its one-token step (issue 33 §5).

Each variant is its own copy of the target (models.as_dtype: the same weights), made faster one way:
- eager:    the model as specviz loads it, linear layers on F.linear (the baseline);
- packed:   bfloat16 linear weights packed once for oneDNN (engine/packed.py: what torch.compile's freezing
            does to a bfloat16 linear, without compiling);
- compile:  torch.compile of the decoder body and the output layer (inductor, mode default, dynamic=True;
            the C++ kernels built with the installed gcc);
- compile-frozen: the same with torch._inductor.config.freezing (constant weights folded and packed);
- compile-max: mode "max-autotune-no-cudagraphs" (inductor's C++ GEMM templates; long to compile).
Dynamo's caches are per process, so run compile and compile-frozen in separate invocations (each beside eager).

Every repeat runs every variant once, in a rotated order (a busy moment hits each alike): the prompt of a
bench workload, then --new plain greedy tokens (stop_at_eos off). Reported: each variant's tokens/s (median),
the median of its per-repeat ratios to eager, the first run's extra time (compile time, and the packing) and
whether its token ids equal eager's (torch.equal). Threads are pinned (--threads) so that compiled kernels and
eager ones run on the same count.

    python scripts/compile_trial.py --dtype bfloat16 --new 96 --repeats 3 --variants eager packed compile
"""
from __future__ import annotations

import argparse
import os
import time

import torch

from specviz import runtime
from specviz.core.stats import median
from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.device import describe_machine, machine
from specviz.engine.methods import encode_prompt
from specviz.engine.models import as_dtype, load_model
from specviz.engine.packed import PackedLinear, pack_linears

VARIANTS = ("eager", "packed", "compile", "compile-frozen", "compile-max")


def unpacked(m) -> None:
    """Undo packing in a copy (load_model may already pack): every PackedLinear back to nn.Linear."""
    for mod in m.model.modules():
        if type(mod) is PackedLinear:
            mod.__class__ = torch.nn.Linear


def make(base, name: str, dtype: str):
    m = as_dtype(base, dtype)
    unpacked(m)
    if name == "packed":
        pack_linears(m.model)
    elif name.startswith("compile"):
        import torch._dynamo.config as dc
        import torch._inductor.config as ic
        ic.freezing = name == "compile-frozen"
        dc.allow_unspec_int_on_nn_module = True   # layer_idx: one graph for all 30 layers, not a recompile each
        dc.recompile_limit = 64
        mode = "max-autotune-no-cudagraphs" if name == "compile-max" else None
        m.model.get_decoder().compile(dynamic=True, mode=mode)
        m.model.get_output_embeddings().compile(dynamic=True, mode=mode)
    return m


def decode(m, ids: list[int], new: int) -> tuple[torch.Tensor, float]:
    d = Decoder(m, None, ids, DecodeConfig(k=1, max_new_tokens=new, record=False, stop_at_eos=False))
    t0 = time.perf_counter()
    for _ in d.run():
        pass
    return torch.tensor(d.new_tokens), time.perf_counter() - t0


def load() -> str:
    return open("/proc/loadavg").read().split()[0]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--new", type=int, default=96)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--workload", default="summarise-passage")
    ap.add_argument("--variants", nargs="+", default=["eager", "packed", "compile"], choices=VARIANTS)
    a = ap.parse_args()
    runtime.use_threads(a.threads)
    base = load_model("default", "cpu", "float32")
    w = workloads.get(a.workload)
    ids = encode_prompt(base.tokenizer, w.prompt, w.chat)
    gcc = os.popen("gcc -dumpversion").read().strip()
    print(f"{describe_machine(machine(base.device, getattr(torch, a.dtype)))}; {torch.get_num_threads()} threads "
          f"pinned; {a.workload} ({len(ids)} prompt tokens) + {a.new} new; gcc {gcc}")
    models, first = {}, {}
    for v in a.variants:                                   # build, then the first run: compile / packing included
        t0 = time.perf_counter()
        models[v] = make(base, v, a.dtype)
        out, s = decode(models[v], ids, a.new)
        first[v] = (time.perf_counter() - t0, out)
        print(f"  {v}: first run {first[v][0]:.1f} s (load {load()})", flush=True)
    ref = first["eager"][1] if "eager" in first else None
    tps = {v: [] for v in a.variants}
    same = {v: ref is None or torch.equal(first[v][1], ref) for v in a.variants}
    for r in range(a.repeats):
        order = a.variants[r % len(a.variants):] + a.variants[:r % len(a.variants)]
        for v in order:
            out, s = decode(models[v], ids, a.new)
            tps[v].append(a.new / s)
            same[v] = same[v] and (ref is None or torch.equal(out, ref))
        shown = ", ".join(f"{v} {tps[v][-1]:.1f}" for v in a.variants)
        print(f"  repeat {r + 1}: {shown} tok/s (load {load()})", flush=True)
    print(f"\n{a.dtype}, {a.new} new tokens, {a.repeats} repeats, load average now {load()}:")
    print(f"{'variant':16s} {'tok/s':>7s} {'x eager':>8s} {'first run s':>11s} {'extra s':>8s}  greedy == eager")
    for v in a.variants:
        ratio = median([t / e for t, e in zip(tps[v], tps["eager"])]) if "eager" in tps else float("nan")
        steady = a.new / median(tps[v])
        print(f"{v:16s} {median(tps[v]):7.2f} {ratio:8.2f} {first[v][0]:11.1f} {first[v][0] - steady:8.1f}  "
              f"{same[v]}")


if __name__ == "__main__":
    main()
