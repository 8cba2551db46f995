"""engine/llama.py against transformers' forward, on the real model: the same tokens, and the time of a step.

    .venv/bin/python scripts/llama_path_ab.py [--dtype bfloat16] [--blocks 12] [--steps 8] [--method lookup]

1. Equality and whole runs: greedy runs of `--method` on summarise-passage (96 new tokens), `--runs` on each path
   alternated (after one untimed run each): token ids equal, and the median of per-pair ratios of their decode time.
2. Time: one plain Decoder, its steps run in alternated blocks of `--steps` on each path (the same cache and
   context for both), medians of the per-block medians, and the median of per-pair ratios (module path ÷
   transformers). 2 threads unless OMP_NUM_THREADS says otherwise.
"""
import argparse
import statistics

import torch

from specviz.engine import llama, workloads
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.device import describe_machine, machine
from specviz.engine.methods import encode_prompt, make_proposer
from specviz.engine.models import load_model

ORIG = llama.supported


def path(on: bool) -> None:
    llama.supported = ORIG if on else (lambda body, kw: False)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dtype", default="bfloat16")
    ap.add_argument("--blocks", type=int, default=12)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--method", default="lookup")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    t = load_model("default", "cpu", a.dtype)
    print(f"machine: {describe_machine(machine(t.device, t.dtype))}; load {open('/proc/loadavg').read().split()[0]}")
    w = workloads.get("summarise-passage")
    ids = torch.tensor(encode_prompt(t.tokenizer, w.prompt, w.chat))
    out, secs = {}, {True: [], False: []}
    for r in range(a.runs + 1):
        for on in ((True, False) if r % 2 == 0 else (False, True)):
            path(on)
            d = Decoder(t, make_proposer(a.method, t, 8), ids,
                        DecodeConfig(k=8, max_new_tokens=96, stop_at_eos=False, record=False))
            list(d.run())
            out[on] = (d.ids, d.summary().target_passes)
            if r:
                secs[on].append(d.wall_s)
    pair = [x / y for x, y in zip(secs[True], secs[False])]
    print(f"{a.method} greedy, 96 tokens: same token ids on both paths: {torch.equal(out[True][0], out[False][0])} "
          f"({out[True][1]} / {out[False][1]} target passes); {a.runs} alternated runs: modules "
          f"{statistics.median(secs[True]):.2f} s, transformers {statistics.median(secs[False]):.2f} s, per-pair ratio "
          f"median {statistics.median(pair):.3f} (range {min(pair):.3f}-{max(pair):.3f})")
    d = Decoder(t, None, ids, DecodeConfig(k=1, max_new_tokens=a.blocks * a.steps * 2 + 8, record=False,
                                           stop_at_eos=False))
    d.prefill()
    for _ in range(4):
        d.step()
    med = {True: [], False: []}
    for b in range(a.blocks):
        for on in ((True, False) if b % 2 == 0 else (False, True)):
            path(on)
            med[on].append(statistics.median(d.step().verify_s for _ in range(a.steps)))
    path(True)
    ratios = [x / y for x, y in zip(med[True], med[False])]
    print(f"plain step, {a.blocks} alternated blocks of {a.steps}: modules "
          f"{statistics.median(med[True]) * 1e3:.2f} ms, "
          f"transformers {statistics.median(med[False]) * 1e3:.2f} ms; per-block ratio median "
          f"{statistics.median(ratios):.3f} (range {min(ratios):.3f}-{max(ratios):.3f})")


if __name__ == "__main__":
    main()
