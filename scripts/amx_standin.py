"""Can a CPU with AMX stand in for one without native bfloat16 (issue 33, item 3)?

Times one weight-sized matmul (rows × 576 @ 576 × 1536, the shape of one SmolLM2-135M MLP projection) at 1, 8 and
24 rows in bfloat16 and float32, natively and again in a child process whose kernels are restricted with
ONEDNN_MAX_CPU_ISA=AVX2 and ATEN_CPU_CAPABILITY=avx2, the settings that keep oneDNN and ATen off AVX512/AMX.
Medians of many repeats, one process per setting, interleaved rounds. A stand-in is only as good as its 24-row
bfloat16 ÷ 1-row ratio: on a real AVX2-only CPU (2-core AMD EPYC, 2026-12-02) it was 2874 / 128 µs ≈ 22.

    python scripts/amx_standin.py [--threads 1] [--rounds 3]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

RESTRICT = {"ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}
ROWS = (1, 8, 24)
AVX2_REAL = {"bfloat16": {1: 128, 8: 966, 24: 2874}, "float32": {1: 84, 8: 244, 24: 440}}  # µs, issue 33


def child(threads: int, reps: int) -> dict:
    import time

    import torch
    torch.set_num_threads(threads)
    out = {"capability": torch.backends.cpu.get_cpu_capability()}
    for dt in ("bfloat16", "float32"):
        w = torch.randn(1536, 576).to(getattr(torch, dt))               # [1536, 576] like nn.Linear(576, 1536)
        for r in ROWS:
            x = torch.randn(r, 576).to(w.dtype)                          # [rows, 576]
            for _ in range(20):
                torch.nn.functional.linear(x, w)                          # warm the kernel up
            ts = []
            for _ in range(reps):
                t = time.perf_counter()
                torch.nn.functional.linear(x, w)                          # [rows, 1536]
                ts.append(time.perf_counter() - t)
            out[f"{dt}/{r}"] = sorted(ts)[len(ts) // 2] * 1e6
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--child", action="store_true")
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.threads, a.reps)))
        return
    runs: dict[str, list[dict]] = {"native": [], "restricted": []}
    for _ in range(a.rounds):
        for name, extra in (("native", {}), ("restricted", RESTRICT)):
            env = {**os.environ, **extra}
            cmd = [sys.executable, __file__, "--child", "--threads", str(a.threads), "--reps", str(a.reps)]
            p = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
            runs[name].append(json.loads(p.stdout))
    print(f"threads {a.threads}, {a.rounds} rounds × {a.reps} repeats, medians (µs)")
    heads = " | ".join(f"{dt} {r} rows" for dt in AVX2_REAL for r in ROWS)
    print(f"| setting | capability | {heads} | bf16 24÷1 |")
    print("|---" * (3 + 2 * len(ROWS)) + "|")
    for name, rs in runs.items():
        med = {k: sorted(r[k] for r in rs)[len(rs) // 2] for k in rs[0] if k != "capability"}
        cells = " | ".join(f"{med[f'{dt}/{r}']:.0f}" for dt in AVX2_REAL for r in ROWS)
        print(f"| {name} | {rs[0]['capability']} | {cells} | {med['bfloat16/24'] / med['bfloat16/1']:.1f} |")
    real = AVX2_REAL
    cells = " | ".join(f"{real[dt][r]}" for dt in real for r in ROWS)
    ratio = real["bfloat16"][24] / real["bfloat16"][1]
    print(f"| real AVX2 CPU (AMD EPYC, 2 threads, issue 33) | AVX2 | {cells} | {ratio:.1f} |")


if __name__ == "__main__":
    main()
