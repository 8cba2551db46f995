"""Corpus generation throughput: useful reply tokens/s at batch 1 vs batch B (train.corpus.generate_batch).

    OMP_WAIT_POLICY=PASSIVE nice -n 19 .venv/bin/python scripts/corpus_throughput.py [--batch 16] [--new 64]
Same prompts, same max new tokens; greedy (sampling costs the same per token).
"""
import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from specviz.engine.models import load_model  # noqa: E402
from specviz.train.corpus import encode_chat, generate_batch  # noqa: E402
from specviz.train.prompts import make_prompts  # noqa: E402

a = argparse.ArgumentParser()
a.add_argument("--batch", type=int, default=16)
a.add_argument("--new", type=int, default=64)
a.add_argument("--dtype", default="bfloat16")
args = a.parse_args()

t = load_model("default", "cpu", args.dtype)
tok = t.tokenizer
enc = [encode_chat(tok, p) for _, p in make_prompts(args.batch, seed=7)]
enc.sort(key=len)
pad = tok.pad_token_id if tok.pad_token_id is not None else tok.eos_token_id


def timed(groups):
    t0, n = time.perf_counter(), 0
    for g in groups:
        n += sum(len(r) for r in generate_batch(t, g, args.new, 0.0, 0, pad, tok.eos_token_id))
    return n, time.perf_counter() - t0


n1, s1 = timed([[e] for e in enc])
nb, sb = timed([enc])
print(f"batch 1: {n1} reply tokens in {s1:.1f} s = {n1 / s1:.1f} tokens/s")
print(f"batch {args.batch}: {nb} reply tokens in {sb:.1f} s = {nb / sb:.1f} tokens/s ({nb / sb / (n1 / s1):.1f}x)")
