"""How far token recycling could go on plain decoding's own texts, and where its speedup goes: no clock.

    .venv/bin/python scripts/recycle_bound.py [--nodes 12 --nodes 24] [--new 128] [--dtype bfloat16] [--regenerate]

For each novel workload (the bench's), greedy: plain decoding writes the text, then a real `recycle` run of n nodes
(the bench's settings: k cap 24, top 8 kept per token, the prompt's last 16 rows) writes it again while every row
it hands the table (its inputs and the target's top 8) is recorded. Both are cached in
data/recycle_rows/<dtype>-<new>-n<nodes>.json (token ids, the model's fingerprint); later runs replay with no model.
core/recyclebound.py replays the run from those rows, checks that every pass feeds the tree it re-reads (the
replay's τ is the real run's), and bounds it at the same passes with the same table (its docstring; docs/recycling.md
defines each column). The cost split: the cost model prices a pass at v_tree(nodes) (bench/results/<kind>/results.json
for this machine's kind); the bench's own greedy row gives τ and the measured speedup S, so its measured cost per
pass is τ ÷ S (with the prefill, the drafting and the clock's noise in it).
"""
import argparse
import json
import os
import statistics

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from specviz.bench.results import bench_where, latest_bench
from specviz.core import recyclebound as rb
from specviz.core.recycle import TOP_K, static_tree
from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.device import describe_machine, machine
from specviz.engine.measure import run
from specviz.engine.methods import SELF_SIZED_CAP, encode_prompt, make_proposer
from specviz.engine.models import load_model
from specviz.proposers.recycle import FILL, TREE_NODES

ROOT = os.path.join(os.path.dirname(__file__), "..")
ROWS = os.path.join(ROOT, "data", "recycle_rows")


def recorded_run(t, w, new: int, nodes: int) -> dict:
    """Plain greedy text, then a real recycle run with every row it hands the table recorded."""
    ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
    cfg = DecodeConfig(k=SELF_SIZED_CAP, max_new_tokens=new, record=False)
    plain, _ = run(t, None, ids, DecodeConfig(k=1, max_new_tokens=new, record=False), t.tokenizer.eos_token_id)
    p = make_proposer("recycle", t, recycle={"nodes": nodes})
    rows, observe = [], p.observe

    def recording(inputs, logits, step):
        top = torch.topk(logits.float(), TOP_K, dim=-1).indices
        rows.append([step, inputs.tolist(), top.tolist()])
        observe(inputs, logits, step)
    p.observe = recording
    s, steps = run(t, p, ids, cfg, t.tokenizer.eos_token_id)
    return {"prompt_ids": list(map(int, ids)), "plain_ids": list(plain.token_ids), "run_ids": list(s.token_ids),
            "passes": len(steps), "vocab": int(p.table.succ.shape[0]), "rows": rows}


def cached(dtype: str, new: int, nodes: int, regenerate: bool) -> tuple[dict, dict]:
    path = os.path.join(ROWS, f"{dtype}-{new}-n{nodes}.json")
    if os.path.exists(path) and not regenerate:
        have = json.load(open(path))
    else:
        t = load_model("default", device="cpu", dtype=dtype)
        have = {"model": t.name, "fingerprint": t.fingerprint(), "dtype": dtype, "new_tokens": new, "nodes": nodes,
                "decoding": "greedy", "torch": torch.__version__.split("+")[0],
                "machine": describe_machine(machine(t.device, t.dtype)), "texts": {}}
        for w in workloads.of_kind(workloads.NOVEL):
            have["texts"][w.name] = recorded_run(t, w, new, nodes)
            print(f"recorded {w.name}: {have['texts'][w.name]['passes']} passes", flush=True)
        os.makedirs(ROWS, exist_ok=True)
        with open(path, "w") as f:
            json.dump(have, f, separators=(",", ":"))
    return have["texts"], {k: v for k, v in have.items() if k != "texts"}


def bounds(r: dict, nodes: int, new: int, v_tree: dict) -> dict:
    """One workload's replay: τ of the run, of the replay and of each bound, and each one's cost-model speedup."""
    text = r["run_ids"]
    template = static_tree(FILL * nodes, by_score=True)
    rows = [rb.Rows(s, tuple(i), tuple(map(tuple, top))) for s, i, top in r["rows"]]
    passes = rb.replay(r["prompt_ids"], text, rows, r["vocab"], TOP_K, template, nodes, new, SELF_SIZED_CAP)
    n = len(text)
    c_actual = rb.cost_per_pass(v_tree, [p.nodes for p in passes])
    c_full = rb.cost_per_pass(v_tree, [nodes])
    tmpl = rb.perfect(n, rb.rank0_depth(template, nodes), new, SELF_SIZED_CAP)
    full = rb.perfect(n, nodes, new, SELF_SIZED_CAP)
    taus = {"run": rb.tau(n, r["passes"]), "replay": rb.tau(n, len(passes)),
            "same size": rb.at_same_passes(n, passes, "same_size"), "n nodes": rb.at_same_passes(n, passes, "full"),
            "perfect, template": rb.tau(n, len(tmpl)), "perfect, n": rb.tau(n, len(full))}
    costs = {"replay": c_actual, "same size": c_actual, "n nodes": c_full, "perfect, template": c_full,
             "perfect, n": c_full}
    return {"tau": taus, "model": {c: taus[c] / costs[c] for c in costs}, "nodes": statistics.mean(
        p.nodes for p in passes), "cost": c_actual, "same_text": text == r["plain_ids"], "tokens": n,
            "stops": {w: sum(p.stop == w for p in passes) for w in rb.STOPS}}


def bench_row(bench: dict, workload: str) -> tuple[float, float] | None:
    """The bench's greedy recycle row on this workload: (τ, measured speedup)."""
    for e in bench.get("cost_model", []):
        if e["method"] == "recycle" and e["workload"] == workload:
            return e["tau"], e["measured"]
    return None


COLS = ["run", "replay", "same size", "n nodes", "perfect, template", "perfect, n"]


def show(texts: dict, nodes: int, new: int, bench: dict) -> None:
    """One row per workload, τ (and the cost-model speedup) of the run and each bound, then the medians."""
    print(f"{'workload':11s} " + " ".join(f"{c:>15s}" for c in COLS) +
          "  nodes/pass  v_tree  same text   bench τ, S, τ÷S   the n-node bound stopped: " + ", ".join(rb.STOPS))
    got = []
    for name, r in texts.items():
        b = bounds(r, nodes, new, bench["v_tree"])
        br = bench_row(bench, name) if nodes == TREE_NODES and new == bench["meta"]["max_new_tokens"] else None
        b["bench"] = br
        got.append(b)
        tail = f"{br[0]:.2f}, {br[1]:.2f}×, {br[0] / br[1]:.3f}" if br else "–"
        print(f"{name:11s} " + " ".join(f"{b['tau'][c]:6.2f}" + (f" (×{b['model'][c]:.2f})" if c in b["model"]
                                                                  else " " * 9) for c in COLS) +
              f"  {b['nodes']:10.2f}  {b['cost']:6.3f}  {str(b['same_text']):9s}   {tail:15s}  "
              + ", ".join(str(b["stops"][w]) for w in rb.STOPS), flush=True)
    med = statistics.median
    tail = f"{med(b['bench'][1] for b in got):.2f}× measured" if all(b["bench"] for b in got) else ""
    print(f"{'median':11s} " + " ".join(f"{med(b['tau'][c] for b in got):6.2f}" +
                                       (f" (×{med(b['model'][c] for b in got):.2f})" if c in got[0]["model"]
                                        else " " * 9) for c in COLS) + f"  {med(b['nodes'] for b in got):10.2f}"
          f"  {med(b['cost'] for b in got):6.3f}  {'':9s}   {tail}")


def main() -> None:
    a = argparse.ArgumentParser()
    a.add_argument("--nodes", type=int, action="append", default=[], help="tree sizes (repeatable; default 12)")
    a.add_argument("--new", type=int, default=128)
    a.add_argument("--dtype", default="bfloat16")
    a.add_argument("--regenerate", action="store_true")
    a = a.parse_args()
    torch.set_num_threads(min(2, torch.get_num_threads()))
    found = latest_bench(ROOT, here=machine("cpu", a.dtype))
    if found is None:
        raise SystemExit("no bench results to read v_tree from: run `python -m specviz bench --out bench`")
    path, bench = found
    where = bench_where(bench, here=machine("cpu", a.dtype))
    print(f"v_tree and the measured speedups from {os.path.relpath(path)}, {where}")
    for nodes in a.nodes or [TREE_NODES]:
        texts, head = cached(a.dtype, a.new, nodes, a.regenerate)
        print(f"\n{head['model']} (fingerprint {head['fingerprint'][:12]}…), {head['dtype']}, {head['new_tokens']} new "
              f"tokens, greedy, recycle n = {nodes}, rows recorded on {head['machine']}")
        show(texts, nodes, a.new, bench)

if __name__ == "__main__":
    main()
