"""Block against token-wise verification without the uniforms' noise: expected tokens per pass from recorded weights.

    .venv/bin/python scripts/block_gain.py [--methods draft,eagle] [--ks 2,4,8] [--seeds 1,2] [--new 48]

Sampled runs (T = 0.8, the bench's) of each chain method with `--verify block`, on the bench's novel workloads. Every
drafting step's record carries, for its own drafts, block verification's weights h_i and the token-wise rule's
ratios p(X_i)/q(X_i) (core/block.py). Given the drafts, each rule's expected drafts kept is exact:
  block       Σ_i i · P(τ = i),  P(τ = i) = h_i Π_{j>i} (1 − h_j)   (core.block.expected_kept)
  token-wise  Σ_i Π_{j≤i} min(1, p(X_j)/q(X_j))                       (each draft kept with its own probability)
so the pair is compared on the same drafts, paired, with no uniform drawn. The drafts of a block run follow the same
law as a token-wise run's (both rules are lossless, the drafter sees the same kind of contexts), so the means
estimate each rule's expected tokens per pass, 1 + E[kept]. The cost model prices a pass at v(k) + k·c for both
rules alike (v from bench/results/<kind>/results.json, c the bench's median over novel workloads for the method):
its speedup ratio is the τ ratio, and the best k per rule says whether a longer chain would pay.
"""
import argparse
import os
import statistics

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from specviz.bench.results import bench_where, latest_bench
from specviz.core.block import expected_kept
from specviz.core.costmodel import v_at
from specviz.core.sampling import SamplingConfig
from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.device import machine
from specviz.engine.measure import run
from specviz.engine.methods import encode_prompt, make_proposer
from specviz.engine.models import load_model

ROOT = os.path.join(os.path.dirname(__file__), "..")


def steps_of(t, method: str, k: int, seed: int, new: int) -> list[tuple[float, float]]:
    """(E[kept] block, E[kept] token-wise) for every drafting step of one block run on each novel workload."""
    out = []
    for w in workloads.of_kind(workloads.NOVEL):
        ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
        cfg = DecodeConfig(k=k, max_new_tokens=new, sampling=SamplingConfig(temperature=0.8), seed=seed,
                           verify="block", record=False)
        _, steps = run(t, make_proposer(method, t), ids, cfg, t.tokenizer.eos_token_id)
        out += [expected_kept(s.block.weights) for s in steps if s.block is not None and s.block.weights.h]
    return out


def median_c(bench: dict, method: str) -> float:
    cs = [e["c"] for e in bench.get("cost_model", []) if e["method"] == method and e["kind"] == workloads.NOVEL]
    return statistics.median(cs) if cs else 0.0


def main() -> None:
    a = argparse.ArgumentParser()
    a.add_argument("--methods", default="draft,eagle")
    a.add_argument("--ks", default="2,4,8")
    a.add_argument("--seeds", default="1,2")
    a.add_argument("--new", type=int, default=48)
    a.add_argument("--dtype", default="bfloat16")
    a = a.parse_args()
    torch.set_num_threads(min(2, torch.get_num_threads()))
    found = latest_bench(ROOT, here=machine("cpu", a.dtype))
    if found is None:
        raise SystemExit("no bench results to read v(k) and c from: run `python -m specviz bench --out bench`")
    path, bench = found
    t = load_model("default", device="cpu", dtype=a.dtype)
    seeds, ks = [int(s) for s in a.seeds.split(",")], [int(k) for k in a.ks.split(",")]
    print(f"{a.dtype}, T = 0.8, {a.new} new tokens, seeds {seeds}, novel workloads "
          f"{[w.name for w in workloads.of_kind(workloads.NOVEL)]}; v and c from {os.path.relpath(path)}, "
          f"{bench_where(bench, here=machine('cpu', a.dtype))}")
    print(f"{'method':7s} {'k':>2s} {'steps':>5s} {'τ token':>8s} {'τ block':>8s} {'block÷token':>11s} "
          f"{'steps block>':>12s} {'Δτ ± 2 s.e.':>14s} {'v(k)+kc':>8s} {'model× token':>12s} {'model× block':>12s}")
    for method in a.methods.split(","):
        c = median_c(bench, method)
        for k in ks:
            pairs = [p for s in seeds for p in steps_of(t, method, k, s, a.new)]
            tb = 1 + statistics.mean(b for b, _ in pairs)
            tt = 1 + statistics.mean(x for _, x in pairs)
            more = sum(b > x + 1e-9 for b, x in pairs)
            se = statistics.stdev(b - x for b, x in pairs) / len(pairs) ** 0.5    # paired: per step, same drafts
            cost = v_at(bench["v"], k) + k * c
            print(f"{method:7s} {k:2d} {len(pairs):5d} {tt:8.3f} {tb:8.3f} {tb / tt:11.3f} "
                  f"{more:5d}/{len(pairs):<6d} {tb - tt:+7.3f} ± {2 * se:.3f} {cost:8.3f} {tt / cost:12.2f} "
                  f"{tb / cost:12.2f}", flush=True)


if __name__ == "__main__":
    main()
