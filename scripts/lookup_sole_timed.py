"""Lookup with and without the sole option, timed against plain decoding (the clock behind lookup_cap_replay.py).

    PYTHONPATH=$PWD .venv/bin/python scripts/lookup_sole_timed.py [--repeats 3] [--dtype float32] [--only a,b]
        [--temperature 0.8]

Greedy (or sampled at --temperature T, seed r in repeat r, the same seed for all three), 128 new tokens, the
bench's workloads (both kinds) unless --only; each repeat runs plain, lookup with the sole option and without
once, interleaved and rotated (engine.measure.one_repeat), after an untimed warm-up of each; × plain = the median
over repeats of each repeat's ratio of tokens/s (core.stats.speedup), end to end (prefill included, model load
excluded). Prints per workload and the median and lowest per kind.
"""
import argparse
import datetime
import os
import statistics

import torch

from specviz.core.sampling import SamplingConfig
from specviz.core.stats import ratio, speedup
from specviz.engine import measure, workloads as W
from specviz.engine.decode import DecodeConfig
from specviz.engine.device import describe_machine, machine
from specviz.engine.methods import encode_prompt
from specviz.engine.models import load_model
from specviz.proposers.lookup import FOLLOW, MATCH_MIN, PromptLookup


def main() -> None:
    a = argparse.ArgumentParser()
    a.add_argument("--repeats", type=int, default=3)
    a.add_argument("--dtype", default="float32")
    a.add_argument("--only", default="")
    a.add_argument("--temperature", type=float, default=0.0)
    a = a.parse_args()
    torch.set_num_threads(2)
    t = load_model("default", device="cpu", dtype=a.dtype)
    eos = t.tokenizer.eos_token_id
    props = {f"lookup, sole {'on' if sole else 'off'}": PromptLookup(n_min=MATCH_MIN, k_rule="match", sole=sole,
                                                                      follow=FOLLOW)   # else the registry's lookup
             for sole in (True, False)}
    order = [None, *props]
    only = set(filter(None, a.only.split(",")))
    ws = [w for w in W.of_kind(W.COPY) + W.of_kind(W.NOVEL) if not only or w.name in only]
    mode = f"sampled T = {a.temperature:g}, seed r in repeat r" if a.temperature > 0 else "greedy"
    print(f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC; "
          f"{describe_machine(machine('cpu', t.model.dtype))}; {mode}; {a.repeats} repeats; "
          f"load {os.getloadavg()[0]:.2f}")
    per_kind: dict = {}
    print("| workload | kind | sole on × plain (range), τ | sole off × plain (range), τ |\n|---|---|---|---|")
    for w in ws:
        ids = encode_prompt(t.tokenizer, w.prompt, w.chat)

        def go(x, new=128, seed=0):
            cfg = DecodeConfig(k=1 if x is None else 24, max_new_tokens=new,
                               sampling=SamplingConfig(temperature=a.temperature), seed=seed,
                               record=False, stop_at_eos=True)
            return measure.run(t, None if x is None else props[x], ids, cfg, eos)[0]

        for x in order:
            go(x, measure.WARM_UP_TOKENS)
        rows = {x: [] for x in props}
        for r in range(a.repeats):
            one = measure.one_repeat(order, r, lambda x: go(x, seed=r))
            for x in props:
                rows[x].append((one[x], one[None]))
        cells, sp = [], {}
        for x in props:
            sp[x] = speedup((m.tokens_per_s, p.tokens_per_s) for m, p in rows[x])
            rs = [ratio(m.tokens_per_s, p.tokens_per_s) for m, p in rows[x]]
            tau = statistics.median(m.tokens_per_pass for m, _ in rows[x])
            cells.append(f"{sp[x]:.2f}× ({min(rs):.2f}–{max(rs):.2f}), τ {tau:.2f}")
        per_kind.setdefault(w.kind, []).append(sp)
        print(f"| {w.name} | {w.kind} | " + " | ".join(cells) + f" |  (load {os.getloadavg()[0]:.2f})", flush=True)
    for kind, sps in per_kind.items():
        print(f"| **{kind}: median (lowest)** | | " + " | ".join(
            f"**{statistics.median(s[x] for s in sps):.2f}×** ({min(s[x] for s in sps):.2f})" for x in props) + " |")


if __name__ == "__main__":
    main()
