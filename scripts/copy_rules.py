"""Copying settings compared without a clock: lookup's fixed and match rules and suffix decoding.

    .venv/bin/python scripts/copy_rules.py [--new 128] [--dtype float32] [--kind copy-heavy|novel] [--temp 0]
Each setting runs once per workload (greedy unless --temp). Tokens per pass τ does not depend on the
machine's load; the speedup printed is the cost model's decode-only τ ÷ mean v(drafted), with v(k) (and
v_tree for tree steps) from the committed bench (bench/results.json). In float32 every setting emits the
same text as plain decoding, so the settings are compared on the same text; in bfloat16 near-ties make
each setting's text its own, and one short run per workload says more about the text than the rule.
This is how the match rule's and suffix's defaults were chosen. Each line says whether the run wrote plain
decoding's text or where it parted from it (`--dtype bfloat16 --threads 2`: what the bench's timed runs see).
"""
import argparse
import json
import os
import statistics

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from specviz.core.neartie import first_difference
from specviz.core.sampling import SamplingConfig
from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.measure import run
from specviz.engine.methods import encode_prompt, make_proposer
from specviz.engine.models import load_model

SETTINGS = {  # name: (method, k, make_proposer keywords)
    "fixed k4 n3 (old CLI default)": ("lookup", 4, dict(n=3)),
    "fixed k8 n4": ("lookup", 8, dict(n=4)),
    "fixed k10 n2 (transformers-like)": ("lookup", 10, dict(n=2)),
    "match f1 n3": ("lookup", 24, dict(n=3, k_rule="match", spec_factor=1.0)),
    "match f1 n2": ("lookup", 24, dict(n=2, k_rule="match", spec_factor=1.0)),
    "match f1 n1": ("lookup", 24, dict(n=1, k_rule="match", spec_factor=1.0)),
    "match f1.5 n2": ("lookup", 24, dict(n=2, k_rule="match", spec_factor=1.5)),
    "match f2 n2": ("lookup", 24, dict(n=2, k_rule="match", spec_factor=2.0)),
    "match f2 n3": ("lookup", 24, dict(n=3, k_rule="match", spec_factor=2.0)),
    "match f3 n2": ("lookup", 24, dict(n=2, k_rule="match", spec_factor=3.0)),
    "match f4 n2 (default)": ("lookup", 24, dict(n=2, k_rule="match", spec_factor=4.0)),
    "match f4 n3": ("lookup", 24, dict(n=3, k_rule="match", spec_factor=4.0)),
    "suffix f1 (vLLM's defaults)": ("suffix", 24, dict(spec_factor=1.0)),
    "suffix f2": ("suffix", 24, dict(spec_factor=2.0)),
    "suffix f3": ("suffix", 24, dict(spec_factor=3.0)),
    "suffix f4 (default)": ("suffix", 24, dict(spec_factor=4.0)),
}


def v_of(table: dict):
    """v(k) by linear interpolation in the bench's table (v(0) = 1), extended past its end by its last slope."""
    t = {0: 1.0, **{int(k): v for k, v in table.items()}}
    ks = sorted(t)

    def v(k: int) -> float:
        if k in t:
            return t[k]
        lo, hi = (max(x for x in ks if x <= k), min(x for x in ks if x >= k)) if k < ks[-1] else (ks[-2], ks[-1])
        return t[lo] + (t[hi] - t[lo]) * (k - lo) / (hi - lo)
    return v


def main() -> None:
    a = argparse.ArgumentParser()
    a.add_argument("--new", type=int, default=128)
    a.add_argument("--dtype", default="float32")
    a.add_argument("--kind", default=workloads.COPY, choices=[workloads.COPY, workloads.NOVEL])
    a.add_argument("--temp", type=float, default=0.0)
    a.add_argument("--only", default="", help="comma-separated substrings: run the settings whose name has one")
    a.add_argument("--threads", type=int, default=1, help="torch threads (the bench runs 2: bfloat16 rounding, and so "
                   "where a near-tie flips, can depend on it)")
    a = a.parse_args()
    torch.set_num_threads(a.threads)
    bench = json.load(open(os.path.join(os.path.dirname(__file__), "..", "bench", "results.json")))
    v_chain, v_tree = v_of(bench["v"]), v_of(bench["v_tree"])
    t = load_model("default", device="cpu", dtype=a.dtype)
    eos = t.tokenizer.eos_token_id
    rows: dict[str, list[tuple[float, float]]] = {}
    for w in workloads.of_kind(a.kind):
        ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
        plain, _ = run(t, None, ids, DecodeConfig(k=1, max_new_tokens=a.new, record=False,
                                                    sampling=SamplingConfig(a.temp)), eos)
        for name, (method, k, kw) in SETTINGS.items():
            if a.only and not any(x.strip() in name for x in a.only.split(",")):
                continue
            cfg = DecodeConfig(k=k, max_new_tokens=a.new, record=False, sampling=SamplingConfig(a.temp))
            s, steps = run(t, make_proposer(method, t, **kw), ids, cfg, eos)
            cost = sum((v_tree if st.is_tree else v_chain)(st.n_drafted) for st in steps)   # in plain steps
            rows.setdefault(name, []).append((s.tokens_per_pass, len(s.token_ids) / cost))
            part = first_difference(s.token_ids, plain.token_ids)
            print(f"{w.name:18s} {name:34s} τ {s.tokens_per_pass:.2f}  k̄ {s.mean_k:5.2f}  "
                  f"model speedup {len(s.token_ids) / cost:.2f}  "
                  f"{'plain text' if part is None else f'parts from plain at token {part}'}", flush=True)
    print()
    for name, r in rows.items():
        print(f"{name:34s} median τ {statistics.median(x[0] for x in r):.2f}  median model speedup "
              f"{statistics.median(x[1] for x in r):.2f}  min {min(x[1] for x in r):.2f}")


if __name__ == "__main__":
    main()
