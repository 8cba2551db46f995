"""How far copying could go on a text, against how far the default rules go: a bound without a clock.

    .venv/bin/python scripts/copy_bound.py [--new 128] [--dtype float32] [--kind copy-heavy|novel]

For each workload, plain greedy decoding writes the text once. On that text, greedy speculation's outcome is
fixed by the draft alone (the kept tokens are the draft's longest prefix that the text continues with), so
a drafting rule can be replayed without the model:
  lookup   the default match rule (engine.methods.make_proposer's lookup), replayed on the text;
  oracle   at every step the longest run of the coming text (at most 24 tokens, lookup's cap) that occurs
           anywhere in the context so far, drafted from wherever it occurs, exactly that long: no copying rule reaches the end in fewer passes (any
           draft copied from the context keeps a run that is there; taking the longest each time stays ahead).
τ is tokens per target pass; the speedup column is the cost model's decode-only tokens ÷ Σ v(drafted) with
v(k) from the committed bench (bench/results.json), held at its last entry (k = 16) beyond it, which
flatters drafts longer than 16. In float32 the replay is exact (a speculative run writes
plain's text); in bfloat16 a near-tie can change a timed run's text.
"""
import argparse
import json
import os
import statistics

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from specviz.core.costmodel import v_at
from specviz.core.sampling import SamplingConfig
from specviz.engine import workloads
from specviz.engine.decode import DecodeConfig
from specviz.engine.measure import run
from specviz.engine.methods import SELF_SIZED_CAP, encode_prompt, make_proposer
from specviz.engine.models import load_model
from specviz.proposers.base import Context


def replay(text: list[int], prompt: list[int], draft) -> list[int]:
    """Drafted lengths per pass when `draft(context)` proposes and greedy acceptance keeps what `text` continues."""
    t, lengths = 0, []
    while t < len(text):
        d = draft(prompt + text[:t], t)
        kept = 0
        while kept < len(d) and t + kept < len(text) and d[kept] == text[t + kept]:
            kept += 1
        lengths.append(len(d))
        t += kept + 1
    return lengths


def oracle(ctx: list[int], text_rest: list[int], cap: int = SELF_SIZED_CAP) -> list[int]:
    """The longest prefix of text_rest (at most cap tokens, lookup's own cap) that occurs somewhere in ctx."""
    n = 0
    while n < min(cap, len(text_rest)):
        want = text_rest[:n + 1]
        if not any(ctx[i:i + n + 1] == want for i in range(len(ctx) - n)):
            break
        n += 1
    return text_rest[:n]


def main() -> None:
    a = argparse.ArgumentParser()
    a.add_argument("--new", type=int, default=128)
    a.add_argument("--dtype", default="float32")
    a.add_argument("--kind", default=workloads.COPY, choices=[workloads.COPY, workloads.NOVEL])
    a = a.parse_args()
    torch.set_num_threads(1)
    v = json.load(open(os.path.join(os.path.dirname(__file__), "..", "bench", "results.json")))["v"]
    t = load_model("default", device="cpu", dtype=a.dtype)
    rows = []
    for w in workloads.of_kind(a.kind):
        ids = encode_prompt(t.tokenizer, w.prompt, w.chat)
        s, _ = run(t, None, ids, DecodeConfig(k=1, max_new_tokens=a.new, record=False), t.tokenizer.eos_token_id)
        text, prompt = list(s.token_ids), list(ids)
        lk = make_proposer("lookup", t)
        lk.reset(torch.tensor(prompt))

        def lookup(ctx, _t):
            return lk.propose(Context(torch.tensor(ctx), None, SamplingConfig(), None), 24).tokens.tolist()

        out = {}
        for name, rule in (("lookup", lookup), ("oracle", lambda ctx, i: oracle(ctx, text[i:]))):
            lengths = replay(text, prompt, rule)
            out[name] = (len(text) / len(lengths), len(text) / sum(v_at(v, n) for n in lengths))
        rows.append((w.name, out))
        print(f"{w.name:18s} lookup τ {out['lookup'][0]:5.2f} ×{out['lookup'][1]:5.2f}   "
              f"oracle τ {out['oracle'][0]:5.2f} ×{out['oracle'][1]:5.2f}", flush=True)
    for name in ("lookup", "oracle"):
        print(f"median {name:7s} τ {statistics.median(r[1][name][0] for r in rows):.2f}  "
              f"model speedup {statistics.median(r[1][name][1] for r in rows):.2f}")


if __name__ == "__main__":
    main()
