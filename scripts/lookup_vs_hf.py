"""specviz lookup (recording on and off) against transformers' prompt lookup (k = 10) and both plain paths, on the
bench's copy-heavy workloads: greedy, 128 new tokens, every row once per repeat in a rotated order
(engine/measure.one_repeat), the rows the bench runs (bench/runs.run) in this machine's auto dtype (issue 33's
"lookup ≥ 1.1× transformers' prompt lookup" with more repeats than the bench gives it).

    python scripts/lookup_vs_hf.py --repeats 3
"""
from __future__ import annotations

import argparse
from dataclasses import replace

from specviz.bench.plan import candidates
from specviz.bench.runs import Env, Spec, run
from specviz.core.sampling import SamplingConfig
from specviz.core.stats import median
from specviz.engine import autodtype, measure, workloads as W
from specviz.engine.device import describe_machine, machine
from specviz.engine.methods import encode_prompt, make_proposer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dtype", default="auto")
    ap.add_argument("--max-new-tokens", type=int, default=128)
    a = ap.parse_args()
    t = autodtype.load("default", "cpu", a.dtype, "speculative")
    env = Env(target=t, drafter=None)
    env.build = lambda m, n: make_proposer(m, t, n=n)
    lk = candidates("lookup")[0]
    specs = [Spec("plain", "specviz", "plain"), lk, replace(lk, label="lookup (recording off)", record=False),
             Spec("hf plain", "hf", "plain"), Spec("hf lookup k=10", "hf", "lookup", 10)]
    print(describe_machine(machine(t.device, t.dtype)), flush=True)
    res: dict = {}
    for i in range(a.repeats):
        for w in W.of_kind(W.COPY):
            ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
            got = measure.one_repeat(specs, i, lambda s: run(env, s, ids, a.max_new_tokens, SamplingConfig(), 0))
            for s in specs:
                res.setdefault((w.name, s.label), []).append(got[s].tokens_per_s)
        print(f"repeat {i} done, load average {open('/proc/loadavg').read().split()[0]}", flush=True)
    ratios = []
    for w in W.of_kind(W.COPY):
        per = [x / y for x, y in zip(res[(w.name, lk.label)], res[(w.name, "hf lookup k=10")])]
        ratios.append(median(per))
        row = ", ".join(f"{s.label} {median(res[(w.name, s.label)]):.1f}" for s in specs)
        print(f"{w.name}: {row} tok/s; lookup ÷ hf lookup per repeat {', '.join(f'{x:.2f}' for x in per)}")
    print(f"lookup ÷ hf lookup k=10, median of per-workload medians: {median(ratios):.2f} (issue 33: ≥ 1.1)")


if __name__ == "__main__":
    main()
