"""The cost-model check of a bench results file, priced two ways (docs/metrics.md, "Cost-model check").

    .venv/bin/python scripts/cost_terms.py data/costcheck/cpu-avx2-2026-12-07.json

For every cost-model row: the decode-only prediction τ ÷ (v(k̄) + k̄·c) with one pass of the mean draft length, beside
the row's own prediction (format 2 on: v̄, the mean of v(kᵢ) over the run's passes), each against the measured
decode-only speedup, and the worst |error| per method both ways.
"""
from __future__ import annotations

import json
import sys

from specviz.core.costmodel import v_at


def main(path: str) -> int:
    d = json.load(open(path))
    v = {int(k): x for k, x in d["v"].items()}
    own = "v̄" if d.get("format", 1) >= 2 else "v(k̄)"
    print("v(k):", ", ".join(f"{k}: {x:.2f}" for k, x in sorted(v.items())))
    print(f"{'method':24} {'workload':18} {'k̄':>5} {'v(k̄)':>6} {own:>6} {'measured':>8} "
          f"{'pred v(k̄)':>10} {'pred ' + own:>9} {'err v(k̄)':>9} {'err ' + own:>8}")
    worst: dict[str, list[float]] = {}
    for r in d["cost_model"]:
        if not r.get("measured_decode") or r.get("c") is None:
            continue
        vk = v_at(v, r["k_bar"])
        at_mean = r["tau"] / (vk + r["k_bar"] * r["c"])
        err_mean = at_mean / r["measured_decode"] - 1
        print(f"{r['method'][:24]:24} {r['workload'][:18]:18} {r['k_bar']:5.1f} {vk:6.3f} {r['v']:6.3f} "
              f"{r['measured_decode']:8.2f} {at_mean:10.2f} {r['predicted']:9.2f} {err_mean:+9.1%} "
              f"{r['error_decode']:+8.1%}")
        w = worst.setdefault(r["method"], [0.0, 0.0])
        w[0], w[1] = max(w[0], abs(err_mean)), max(w[1], abs(r["error_decode"]))
    for m, (a, b) in worst.items():
        print(f"worst |error| decode only, {m}: with v(k̄) {a:.3f}, with {own} {b:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
