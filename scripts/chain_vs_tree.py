"""Chain vs tree on the same shipped heads, on the project's workloads (bfloat16, CPU by default).

    OMP_WAIT_POLICY=PASSIVE nice .venv/bin/python scripts/chain_vs_tree.py [--new 64] [--temp 0] [--seeds 1]
Prints τ, drafted per pass and speedup (vs plain, measured alongside) per method and workload,
and v of an m-node tree next to v of an m-node chain (engine.passcost.measure_v).
"""
import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from specviz.core.sampling import SamplingConfig  # noqa: E402
from specviz.engine import workloads  # noqa: E402
from specviz.engine.decode import DecodeConfig  # noqa: E402
from specviz.engine.methods import encode_prompt  # noqa: E402
from specviz.engine.models import load_model  # noqa: E402
from specviz.engine.passcost import measure_v  # noqa: E402
from specviz.teach.trees import PAIRS, chain_vs_tree  # noqa: E402

a = argparse.ArgumentParser()
a.add_argument("--new", type=int, default=64)
a.add_argument("--k", type=int, default=4)
a.add_argument("--temp", type=float, default=0.0)
a.add_argument("--seeds", type=int, default=1)
a.add_argument("--device", default="cpu")
a.add_argument("--dtype", default="bfloat16")
a.add_argument("--workloads", default=",".join(w.name for w in workloads.WORKLOADS))
a.add_argument("--v", action="store_true", help="also measure v for chains and trees of 4..24 nodes")
args = a.parse_args()

t = load_model("default", args.device, args.dtype)
eos = t.tokenizer.eos_token_id
print("| workload | method | τ | drafted/pass | speedup | same as plain |\n|---|---|---|---|---|---|")
for name in args.workloads.split(","):
    w = workloads.get(name)
    ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
    for fam in PAIRS:
        for seed in range(args.seeds):
            cfg = DecodeConfig(k=args.k, max_new_tokens=args.new, sampling=SamplingConfig(args.temp), seed=seed,
                               record=False)
            for r in chain_vs_tree(t, fam, ids, cfg, eos):
                print(f"| {name} ({w.kind}) | {r.method} s{seed} | {r.tokens_per_pass:.2f} | {r.nodes_per_pass:.1f} | "
                      f"{r.speedup:.2f}× | {r.identical} {r.divergence} |", flush=True)
if args.v:
    ks = (4, 8, 16, 20, 24)
    chain = measure_v(t, ks)
    tree = measure_v(t, ks, tree=True)
    print("| drafted nodes m-1 | v chain | v tree |\n|---|---|---|")
    for k in ks:
        print(f"| {k} | {chain[k]:.2f} | {tree[k]:.2f} |")
