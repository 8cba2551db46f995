"""Step-level A/B of docs/trials/fused_projections.patch: one plain bfloat16 Decoder, the fused groups switched on
and off in alternated blocks of one-row steps (the same cache and context for both), medians per block.

    git worktree add /tmp/fused HEAD && cd /tmp/fused && git apply docs/trials/fused_projections.patch
    PYTHONPATH=/tmp/fused python docs/trials/fused_ab.py --threads 2 --blocks 12 --steps 8
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.methods import encode_prompt
from specviz.engine.models import load_model
from specviz.engine.packed import PackedLinear


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--blocks", type=int, default=12)
    ap.add_argument("--steps", type=int, default=8, help="one-row steps per block")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    target = load_model("default", "cpu", "bfloat16")
    members = [(m, m._group) for m in target.model.modules()
               if isinstance(m, PackedLinear) and getattr(m, "_group", None) is not None]
    if not members:
        raise SystemExit("no fused groups: apply docs/trials/fused_projections.patch first (see --help)")
    w = workloads.get("summarise-passage")
    ids = encode_prompt(target.tokenizer, w.prompt, w.chat)
    d = Decoder(target, None, ids, DecodeConfig(k=1, max_new_tokens=2 * a.blocks * a.steps + 20, record=False,
                                                stop_at_eos=False))
    d.prefill()
    for _ in range(4):
        d.step()                                                            # warm-up
    per = {True: [], False: []}
    for b in range(a.blocks):
        for fused in ((True, False) if b % 2 else (False, True)):          # alternate which goes first
            for m, g in members:
                m._group = g if fused else None
            ts = []
            for _ in range(a.steps):
                t0 = time.perf_counter()
                d.step()
                ts.append(time.perf_counter() - t0)
            per[fused].append(statistics.median(ts))
    ratios = [f / s for f, s in zip(per[True], per[False])]
    print(f"{a.threads} threads, load average {open('/proc/loadavg').read().split()[0]}: separate "
          f"{statistics.median(per[False]) * 1e3:.2f} ms, fused {statistics.median(per[True]) * 1e3:.2f} ms a step; "
          f"fused/separate per block median {statistics.median(ratios):.3f} "
          f"(range {min(ratios):.3f}-{max(ratios):.3f}; "
          f"{a.blocks} blocks of {a.steps} steps each)")


if __name__ == "__main__":
    main()
