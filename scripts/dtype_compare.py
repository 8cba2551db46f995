"""The CLI as a user runs it (one process per run), in forced bfloat16, forced float32 and auto: plain and lookup.

Interleaved: each repeat runs every (dtype, method) once, in a rotated order. auto's first run times the machine
into a fresh cache folder (its wall time says what the cold measurement cost); later runs read it back.
Prints tokens/s per run, medians, the ratios, and what auto chose and why.

    python scripts/dtype_compare.py --workload summarise-passage --max-new-tokens 96 --repeats 2
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from specviz.core.stats import median


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="summarise-passage")
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--methods", default="plain,lookup")
    a = ap.parse_args()
    env = {**os.environ, "SPECVIZ_CACHE_DIR": tempfile.mkdtemp(prefix="specviz-dtype-")}
    combos = [(dt, m) for dt in ("auto", "bfloat16", "float32") for m in a.methods.split(",")]
    tps: dict = {}
    why: dict = {}
    for r in range(a.repeats):
        order = combos[r % len(combos):] + combos[:r % len(combos)]
        for dt, m in order:
            t0 = time.perf_counter()
            p = subprocess.run([sys.executable, "-m", "specviz", "generate", "--workload", a.workload, "--method", m,
                                "--max-new-tokens", str(a.max_new_tokens), "--dtype", dt, "--json"],
                               capture_output=True, text=True, env=env)
            wall = time.perf_counter() - t0
            if p.returncode:
                sys.exit(p.stderr)
            s = json.loads(p.stdout)["summary"]
            tps.setdefault((dt, m), []).append(s["tokens_per_s"])
            why[(dt, m)] = (s["machine"]["dtype"], s["dtype_reason"])
            print(f"repeat {r + 1}: {dt:8s} {m:6s} {s['tokens_per_s']:6.1f} tok/s (ran {s['machine']['dtype']}, "
                  f"process {wall:.0f} s)", flush=True)
            machine = s["machine"]
    print(f"\nmachine: {machine}; {a.workload}, {a.max_new_tokens} new tokens, greedy, medians of {a.repeats}")
    med = {k: median(v) for k, v in tps.items()}
    for m in a.methods.split(","):
        best = max(med[("bfloat16", m)], med[("float32", m)])
        print(f"{m}: bfloat16 {med[('bfloat16', m)]:.1f}, float32 {med[('float32', m)]:.1f}, "
              f"auto {med[('auto', m)]:.1f} "
              f"tok/s; float32 ÷ bfloat16 {med[('float32', m)] / med[('bfloat16', m)]:.2f}, auto ÷ faster fixed "
              f"{med[('auto', m)] / best:.2f}; auto ran {why[('auto', m)][0]}: {why[('auto', m)][1]}")
    if "plain" in a.methods and "lookup" in a.methods:
        for dt in ("bfloat16", "float32", "auto"):
            print(f"lookup ÷ plain in {dt}: {med[(dt, 'lookup')] / med[(dt, 'plain')]:.2f}")


if __name__ == "__main__":
    main()
