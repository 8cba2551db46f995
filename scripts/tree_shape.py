"""Tree shape as a lever: the shipped heads drafting chains and trees of several sizes, against plain decoding.

    OMP_WAIT_POLICY=PASSIVE .venv/bin/python scripts/tree_shape.py [--new 64] [--repeats 2] [--temp 0]
Every contender runs interleaved with one shared plain run per repeat (engine.measure.interleaved, the
bench's path), on every workload. Prints per workload τ, drafted per pass and speedup, then the medians
over the workloads of each kind. A tree of m nodes costs one target pass over m + 1 positions (v_tree).
"""
import argparse
import os
import statistics

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from specviz.core.sampling import SamplingConfig  # noqa: E402
from specviz.engine import artifacts, workloads  # noqa: E402
from specviz.engine.decode import DecodeConfig  # noqa: E402
from specviz.engine.measure import interleaved, plain_config  # noqa: E402
from specviz.engine.methods import encode_prompt  # noqa: E402
from specviz.engine.models import load_model  # noqa: E402
from specviz.proposers import eagle_tree  # noqa: E402
from specviz.proposers.eagle_tree import EagleTree  # noqa: E402
from specviz.proposers.medusa import MEDUSA_TREE, MEDUSA_TREE_20, MedusaTree  # noqa: E402

EAGLE_SHAPES = [(8, 4, 2), (12, 5, 3), (20, 5, 4), (32, 6, 4)]                           # (nodes, depth, width)
MEDUSA_SHAPES = {"8 nodes": MEDUSA_TREE, "20 nodes": MEDUSA_TREE_20}
SHIPPED = " (shipped)"

a = argparse.ArgumentParser()
a.add_argument("--new", type=int, default=64)
a.add_argument("--repeats", type=int, default=2)
a.add_argument("--temp", type=float, default=0.0)
a.add_argument("--workloads", default=",".join(w.name for w in workloads.WORKLOADS))
args = a.parse_args()

t = load_model("default", "cpu", "bfloat16")
eos = t.tokenizer.eos_token_id


def cfg(k):
    return DecodeConfig(k=k, max_new_tokens=args.new, sampling=SamplingConfig(args.temp), seed=0, record=False)


# every proposer is built once, from one load of each artifact: interleaved() resets it before each run
eagle, medusa = artifacts.load_eagle(t), artifacts.load_medusa(t)
trees = {f"eagle-tree {n} nodes d{d} w{w}" + (SHIPPED if (n, d, w) == (eagle_tree.NODES, eagle_tree.DEPTH,
                                                                      eagle_tree.WIDTH) else ""):
         (EagleTree(eagle.head, eagle.embed, eagle.out, depth=d, width=w, nodes=n), cfg(d))
         for n, d, w in EAGLE_SHAPES}
contenders = {
    "eagle k=2": (eagle, cfg(2)),
    "medusa k=4": (medusa, cfg(4)),
    **{f"medusa-tree {n}" + (SHIPPED if paths == MEDUSA_TREE else ""): (MedusaTree(medusa.heads, medusa.out, paths),
                                                                     cfg(4)) for n, paths in MEDUSA_SHAPES.items()},
    **trees,
}
contenders = {m: (lambda p=p: p, c) for m, (p, c) in contenders.items()}
rows: dict = {}
print("| workload | method | τ | drafted/pass | speedup |\n|---|---|---|---|---|")
for name in args.workloads.split(","):
    w = workloads.get(name)
    ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
    got, _ = interleaved(t, ids, contenders, plain_config(cfg(4)), args.repeats, eos)
    for m, r in got.items():
        s = r.summary
        rows.setdefault(m, {}).setdefault(w.kind, []).append((s.tokens_per_pass, s.mean_k, r.speedup))
        print(f"| {name} ({w.kind}) | {m} | {s.tokens_per_pass:.2f} | {s.mean_k:.1f} | {r.speedup:.2f}× |", flush=True)
kinds = sorted({k for v in rows.values() for k in v})
print("\n| method | " + " | ".join(f"{k} τ | {k} drafted/pass | {k} ×" for k in kinds) + " |")
print("|---|" + "---|" * 3 * len(kinds))
for m, by in rows.items():
    cells = []
    for k in kinds:
        xs = by[k]
        cells += [f"{statistics.median(x[i] for x in xs):.2f}" for i in range(3)]
    print(f"| {m} | " + " | ".join(cells) + " |")
