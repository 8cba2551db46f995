"""The checkpoint-coupling lesson, measured on every workload: shipped heads on the base target and on a fine-tune.

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python scripts/coupling.py [--lora models] [--new 64] [--k 4] \
        [--temp 0.8 --seeds 3]
For each workload, teach.checkpoints.checkpoint_swap (the Tokenizers & checkpoints page's measurement)
runs plain, the heads and lookup on both checkpoints (greedy, or sampled over seeds). Printed per method: median τ on
each, and the share of the gain in τ over plain decoding (τ − 1) the fine-tune took away.
"""
import argparse
import os
import statistics

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from specviz.core.sampling import SamplingConfig  # noqa: E402
from specviz.engine import artifacts, workloads  # noqa: E402
from specviz.engine.models import load_model  # noqa: E402
from specviz.teach.checkpoints import (
    checkpoint_swap,  # noqa: E402
    gain_lost,  # noqa: E402
)

a = argparse.ArgumentParser()
a.add_argument("--lora", default=None, help="folder with lora.safetensors/.json (default: models/)")
a.add_argument("--new", type=int, default=64)
a.add_argument("--k", type=int, default=4)
a.add_argument("--methods", default="medusa,eagle,lookup")
a.add_argument("--temp", type=float, default=0.0, help="0: greedy; else sampled at this temperature")
a.add_argument("--seeds", type=int, default=1, help="sampled: seeds per workload (τ medians over them)")
a.add_argument("--workloads", default=",".join(w.name for w in workloads.WORKLOADS))
args = a.parse_args()

base = load_model("default", "cpu", "bfloat16")
tuned = artifacts.load_finetuned_target(base, args.lora)
methods = args.methods.split(",")
taus: dict = {}
print("| workload | method | τ base | τ fine-tuned | gain lost |\n|---|---|---|---|---|")
for name in args.workloads.split(","):
    w = workloads.get(name)
    runs = [checkpoint_swap(base, tuned, w, methods, args.k, SamplingConfig(args.temp), args.new, seed)[0]
            for seed in range(args.seeds if args.temp > 0 else 1)]
    for m in methods:
        tb, tt = (statistics.median(next(r["tokens_per_pass"] for r in rows if r["method"] == m and r["target"] == t)
                                    for rows in runs) for t in ("base", "fine-tuned"))
        taus.setdefault(m, []).append((tb, tt))
        print(f"| {name} ({w.kind}) | {m} | {tb:.2f} | {tt:.2f} | {gain_lost(tb, tt):.0%} |", flush=True)
print("\n| method | median τ base | median τ fine-tuned | gain lost (medians) |\n|---|---|---|---|")
for m, xs in taus.items():
    tb, tt = statistics.median(x[0] for x in xs), statistics.median(x[1] for x in xs)
    print(f"| {m} | {tb:.2f} | {tt:.2f} | {gain_lost(tb, tt):.0%} |")
