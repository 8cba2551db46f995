"""Recycling's tree shape end to end: the static template against the dynamic tree (core/recycle.read_dynamic), with
plain decoding in every repeat, interleaved.

    PYTHONPATH=$PWD .venv/bin/python scripts/recycle_shape.py [--nodes 6,8,10] [--repeats 3] [--new 128]

The bench's four novel workloads, bfloat16 (the native kind's auto), 2 threads, greedy and sampled at T = 0.8 (seed r
in repeat r), plus one untimed warm-up run of each; each run starts from an empty table. Prints per workload and mode
the median speedup (method tokens/s ÷ plain tokens/s of the same repeat, prefill included, the order rotated per
repeat as engine.measure.one_repeat does) with τ and nodes per pass, and per variant the median over workloads.
"""
import argparse
import datetime
import os
import statistics

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from specviz.core.sampling import SamplingConfig
from specviz.core.stats import speedup
from specviz.engine import measure, workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.device import describe_machine, machine
from specviz.engine.methods import encode_prompt, make_proposer
from specviz.engine.models import load_model

a = argparse.ArgumentParser()
a.add_argument("--nodes", default="8")
a.add_argument("--repeats", type=int, default=3)
a.add_argument("--new", type=int, default=128)
a.add_argument("--modes", default="greedy,sampled")
a = a.parse_args()
torch.set_num_threads(2)
t = load_model("default", "cpu", "bfloat16")
eos = t.tokenizer.eos_token_id
variants = [(f"{shape} {n}", n, shape == "dynamic") for n in map(int, a.nodes.split(","))
            for shape in ("static", "dynamic")]
print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
      f"{describe_machine(machine('cpu', t.model.dtype))}; load {os.getloadavg()[0]:.2f}")
res: dict = {}
for mode in a.modes.split(","):
    samp = SamplingConfig() if mode == "greedy" else SamplingConfig(temperature=0.8)
    for w in workloads.of_kind("novel"):
        ids = encode_prompt(t.tokenizer, w.prompt, w.chat)

        def run(label, seed, new=a.new):
            if label is None:
                return measure.run(t, None, ids, DecodeConfig(k=1, max_new_tokens=new, sampling=samp, seed=seed),
                                   eos)[0]
            _, n, dyn = next(v for v in variants if v[0] == label)
            prop = make_proposer("recycle", t, recycle={"nodes": n, "dynamic": dyn})     # a fresh table per run
            return measure.run(t, prop, ids, DecodeConfig(k=24, max_new_tokens=new, sampling=samp, seed=seed),
                               eos)[0]

        order = [None] + [v[0] for v in variants]
        for x in order:
            run(x, 0, measure.WARM_UP_TOKENS)
        for r in range(a.repeats):
            one = measure.one_repeat(order, r, lambda x: run(x, 0 if mode == "greedy" else r + 1))
            for x in order[1:]:
                res.setdefault((mode, x, w.name), []).append((one[x], one[None]))
        print(f"  done {mode} {w.name} (load {os.getloadavg()[0]:.2f})", flush=True)

for mode in a.modes.split(","):
    print(f"\n### {mode}: × plain (median of {a.repeats}), τ, nodes per pass")
    for label, _, _ in variants:
        cells, sps = [], []
        for w in workloads.of_kind("novel"):
            rows = res[mode, label, w.name]
            sp = speedup((m.tokens_per_s, p.tokens_per_s) for m, p in rows)
            tau = statistics.median(m.tokens_per_pass for m, _ in rows)
            nodes = statistics.median(m.drafted / max(1, m.target_passes) for m, _ in rows)
            cells.append(f"{w.name} {sp:.2f}× τ {tau:.2f} n {nodes:.1f}")
            sps.append(sp)
        print(f"{label:12s} median {statistics.median(sps):.3f}× | " + " | ".join(cells))
print(f"\nload at the end {os.getloadavg()[0]:.2f}")
