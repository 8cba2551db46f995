"""Where copy-recycle's time goes against suffix, one untimed-order run each (not a speed measurement).

    PYTHONPATH=$PWD .venv/bin/python scripts/copy_recycle_costs.py [--new 128] [--kind copy-heavy|novel]

For each workload of the kind (bfloat16, 2 threads, greedy): suffix, copy-recycle under the old rule (suffix's tree
from a match of 2 tokens or more, else recycling), copy-recycle under core/copychoice.py's rule, and recycle. Per run:
τ, drafted nodes per pass, the seconds spent drafting, verifying and in the recycling table's update (observe: the
top 8 of every row of every pass), and per part the passes it drafted, their nodes and the drafts kept per pass.
Read τ and the shares; the × plain column is one run against one plain run and moves with the machine's load
(scripts/default_rule.py measures speed).
"""
import argparse
import os
import statistics
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.measure import run
from specviz.engine.methods import encode_prompt, make_proposer
from specviz.engine.models import load_model


def watched(p):
    """The proposer with its table updates timed and the part each pass drafted from logged."""
    log = {"observe_s": 0.0, "used": []}
    if getattr(p, "reads_logits", False):
        observe = p.observe

        def timed_observe(*a):
            t0 = time.perf_counter()
            observe(*a)
            log["observe_s"] += time.perf_counter() - t0
        p.observe = timed_observe
    if hasattr(p, "used"):
        propose = p.propose

        def logged(ctx, k):
            d = propose(ctx, k)
            log["used"].append(p.used)
            return d
        p.propose = logged
    return p, log


def main() -> None:
    a = argparse.ArgumentParser()
    a.add_argument("--new", type=int, default=128)
    a.add_argument("--kind", default=workloads.COPY, choices=[workloads.COPY, workloads.NOVEL])
    a = a.parse_args()
    torch.set_num_threads(2)
    t = load_model("default", device="cpu", dtype="bfloat16")
    eos = t.tokenizer.eos_token_id
    variants = {"suffix": lambda: make_proposer("suffix", t),
                "copy-recycle (old rule)": lambda: make_proposer("copy-recycle", t, suffix=dict(min_match=2)),
                "copy-recycle": lambda: make_proposer("copy-recycle", t),
                "recycle": lambda: make_proposer("recycle", t)}
    print(f"load {os.getloadavg()}")
    for w in workloads.of_kind(a.kind):
        ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
        cfg = DecodeConfig(k=24, max_new_tokens=a.new, record=False)
        run(t, None, ids, DecodeConfig(k=1, max_new_tokens=4, record=False), eos)
        plain, _ = run(t, None, ids, DecodeConfig(k=1, max_new_tokens=a.new, record=False), eos)
        print(f"{w.name}: plain {plain.tokens_per_s:.1f} tok/s")
        for name, make in variants.items():
            p, log = watched(make())
            s, steps = run(t, p, ids, cfg, eos)
            by: dict = {}
            for u, st in zip(log["used"], steps):
                b = by.setdefault(u, [0, 0, 0])
                b[0], b[1], b[2] = b[0] + 1, b[1] + len(st.drafted), b[2] + st.n_accepted
            parts = "; ".join(f"{u} {b[0]} passes, {b[1] / b[0]:.1f} nodes, {b[2] / b[0]:.2f} kept"
                              for u, b in by.items())
            verify = sum(st.verify_s for st in steps)
            print(f"  {name:24s} {s.tokens_per_s / plain.tokens_per_s:.2f}x  τ {len(s.token_ids) / len(steps):.2f}  "
                  f"nodes {statistics.mean(len(st.drafted) for st in steps):.1f}  draft "
                  f"{sum(st.draft_s for st in steps):.2f} s  verify {verify:.2f} s  table {log['observe_s']:.2f} s "
                  f"({100 * log['observe_s'] / verify:.1f}% of verify)  {parts}", flush=True)


if __name__ == "__main__":
    main()
