"""Old head against new on the same runs: EAGLE heads from several folders drafting a chain at fixed k and the
default EAGLE-2 tree, interleaved with one shared plain run per repeat (engine.measure.interleaved, the bench's
path), on the bench's workloads. The bench itself tunes k on short runs; this fixes k so the heads compare alone.

    .venv/bin/python scripts/heads_speed.py --heads old=runs/old-models/eagle,new=models/eagle,eagle3=models/eagle3 \
        [--k 2] [--new 128] [--repeats 2] [--temp 0] [--seeds 1] [--kind novel]

Prints per workload τ, drafted per pass and speedup, then the medians over the workloads.
"""
import argparse
import os
import statistics
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from specviz.core.sampling import SamplingConfig  # noqa: E402
from specviz.engine import artifacts, workloads  # noqa: E402
from specviz.engine.decode import DecodeConfig  # noqa: E402
from specviz.engine.measure import interleaved, plain_config  # noqa: E402
from specviz.engine.methods import encode_prompt  # noqa: E402
from specviz.engine.models import load_model  # noqa: E402
from specviz.proposers.eagle_tree import DEPTH, EagleTree  # noqa: E402

a = argparse.ArgumentParser()
a.add_argument("--heads", required=True, help="label=folder/kind, comma-separated (kind: eagle or eagle3)")
a.add_argument("--k", type=int, default=2)
a.add_argument("--new", type=int, default=128)
a.add_argument("--repeats", type=int, default=2)
a.add_argument("--temp", type=float, default=0.0)
a.add_argument("--seeds", type=int, default=1, help="sampled: seeds 1..N, one interleaved round each")
a.add_argument("--kind", default="novel", help="workload kind (novel, copy-heavy) or 'all'")
args = a.parse_args()

t = load_model("default", "cpu", "bfloat16")
eos = t.tokenizer.eos_token_id


def cfg(k, seed):
    return DecodeConfig(k=k, max_new_tokens=args.new, sampling=SamplingConfig(args.temp), seed=seed, record=False)


heads = {}
for item in args.heads.split(","):
    label, path = item.split("=")
    folder, kind = Path(path).parent, Path(path).name
    heads[label] = artifacts.load_eagle(t, folder, kind=kind)
chosen = [w for w in workloads.WORKLOADS if args.kind == "all" or w.kind == args.kind]
seeds = list(range(1, args.seeds + 1)) if args.temp > 0 else [0]
rows: dict = {}
print(f"T = {args.temp}, {args.new} new tokens, {args.repeats} repeat(s) × seeds {seeds}, chain k = {args.k}, "
      f"tree: the default EAGLE-2 tree (depth {DEPTH})")
print("| workload | method | τ | drafted/pass | speedup |\n|---|---|---|---|---|")
for w in chosen:
    ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
    for seed in seeds:
        contenders = {}
        for label, p in heads.items():
            tree = EagleTree(p.head, p.embed, p.out)
            contenders[f"{label} k={args.k}"] = (lambda p=p: p, cfg(args.k, seed))
            contenders[f"{label} tree"] = (lambda tr=tree: tr, cfg(DEPTH, seed))
        got, _ = interleaved(t, ids, contenders, plain_config(cfg(args.k, seed)), args.repeats, eos)
        for m, r in got.items():
            s = r.summary
            rows.setdefault(m, []).append((s.tokens_per_pass, s.mean_k, r.speedup))
            print(f"| {w.name} (seed {seed}) | {m} | {s.tokens_per_pass:.2f} | {s.mean_k:.1f} | {r.speedup:.2f}× |",
                  flush=True)
print("\n| method | τ | drafted/pass | × plain |\n|---|---|---|---|")
for m, xs in rows.items():
    print(f"| {m} | " + " | ".join(f"{statistics.median(x[i] for x in xs):.2f}" for i in range(3)) + " |")
