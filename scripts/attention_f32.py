"""Does float32 need the float64 attention of engine/attention.py? Greedy equality and speed, float32 target.

For each attention compute dtype (float64, the default; float32), on copy-heavy workloads: plain and the
default lookup, greedy, interleaved repeats in this one process; prints whether lookup's ids equal plain's
(torch.equal) and the tokens/s of each.

    python scripts/attention_f32.py --workloads summarise-passage,csv-to-json --max-new-tokens 96 --repeats 2
"""
from __future__ import annotations

import argparse

import torch

from specviz.core.stats import median
from specviz.engine import measure, workloads
from specviz.engine.attention import use_row_invariant
from specviz.engine.decode import DecodeConfig
from specviz.engine.device import describe_machine, machine
from specviz.engine.methods import encode_prompt, make_proposer
from specviz.engine.models import load_model
from specviz.proposers.lookup import MAX_MATCH


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="summarise-passage")
    ap.add_argument("--max-new-tokens", type=int, default=96)
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args()
    target = load_model("default", "cpu", "float32")
    print(describe_machine(machine(target.device, target.dtype)))
    eos = target.tokenizer.eos_token_id
    for name in a.workloads.split(","):
        w = workloads.get(name)
        ids = encode_prompt(target.tokenizer, w.prompt, w.chat)
        tps = {}
        out = {}
        for r in range(a.repeats + 1):                    # repeat 0: warm-up, untimed
            for c in ((torch.float64, torch.float32) if r % 2 else (torch.float32, torch.float64)):
                use_row_invariant(target.model, c)
                for method in ("plain", "lookup"):
                    p = None if method == "plain" else make_proposer("lookup", target)
                    cfg = DecodeConfig(k=1 if p is None else MAX_MATCH, max_new_tokens=a.max_new_tokens, record=False)
                    s, _ = measure.run(target, p, ids, cfg, eos)
                    out[(c, method)] = s.token_ids
                    if r:
                        tps.setdefault((c, method), []).append(s.tokens_per_s)
        for c in (torch.float64, torch.float32):
            same = out[(c, "lookup")] == out[(c, "plain")]
            print(f"{name}: attention in {str(c)[6:]}: plain {median(tps[(c, 'plain')]):.1f} tok/s, lookup "
                  f"{median(tps[(c, 'lookup')]):.1f} tok/s, lookup ids == plain ids: {same}; "
                  f"plain ids same as float64's: {out[(c, 'plain')] == out[(torch.float64, 'plain')]}")


if __name__ == "__main__":
    main()
