"""Recycling's tree size end to end: `recycle` at 6, 8, 10 and 12 nodes against plain decoding, interleaved.

    .venv/bin/python scripts/recycle_sizes.py

The bench's four novel workloads, 128 new tokens, bfloat16 (the native kind's auto), greedy (3 repeats, the first a
warm-up) and sampled at T = 0.8 (seeds 0, 1, 2, seed 0 a warm-up); each run starts from an empty table. Prints per
workload the median speedup (method tokens/s ÷ plain tokens/s of the same repeat, prefill included) and per size the
median over workloads with τ. The replay bound of the same sizes is scripts/recycle_bound.py (docs/recycling.md).
"""
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import statistics

from specviz.core.sampling import SamplingConfig
from specviz.engine import measure, workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.methods import encode_prompt, make_proposer
from specviz.engine.models import load_model

t = load_model("default", "cpu", "bfloat16")
eos = t.tokenizer.eos_token_id
NODES = [6, 8, 10, 12]
res = {}
for mode, runs in (("greedy", [0, 1, 2]), ("sampled", [0, 1, 2])):
    for w in workloads.of_kind("novel"):
        ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
        for r in runs:
            samp = SamplingConfig() if mode == "greedy" else SamplingConfig(temperature=0.8)
            seed = 0 if mode == "greedy" else r
            cfg = DecodeConfig(k=1, max_new_tokens=128, sampling=samp, seed=seed)
            s, _ = measure.run(t, None, ids, cfg, eos)
            base = s.tokens_per_s
            for n in NODES:
                prop = make_proposer("recycle", t, recycle={"nodes": n})   # a fresh table per run
                s, _ = measure.run(t, prop, ids, DecodeConfig(k=24, max_new_tokens=128, sampling=samp, seed=seed),
                                   eos)
                if r:   # r = 0: warm-up
                    res.setdefault((mode, n, w.name), []).append((s.tokens_per_s / base, s.tokens_per_pass))
        print(mode, w.name, {n: round(statistics.median(x[0] for x in res[(mode, n, w.name)]), 3) for n in NODES},
              flush=True)
    for n in NODES:
        meds = [statistics.median(x[0] for x in res[(mode, n, w.name)]) for w in workloads.of_kind("novel")]
        taus = [statistics.median(x[1] for x in res[(mode, n, w.name)]) for w in workloads.of_kind("novel")]
        print(f"{mode} nodes {n}: median x plain {statistics.median(meds):.3f} "
              f"(per workload {[round(m, 2) for m in meds]}), tau {statistics.median(taus):.2f}", flush=True)
