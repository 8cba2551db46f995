"""Lookup's draft cap replayed on novel and copy-heavy text, priced with one machine's v(k) (no clock).

    PYTHONPATH=$PWD .venv/bin/python scripts/lookup_cap_replay.py [V_JSON] [--sole-off]

On a CPU where a verify pass of many rows costs several plain steps (AVX2 only: v(24) ≈ 2.5), lookup's long drafts
off short matches on novel text lose (docs/recycling.md, the pays gate). This replays lookup's default rule
(from 2 matched tokens, 4 × the match) with caps 24 … 4 on greedy plain decoding's own texts — the four novel bench
workloads (generated once, float32, 128 tokens, kept in data/novel_texts/) and the eleven copy-heavy ones of
data/copy_texts — and prices each pass with v (core.costmodel.passes_speedup: decode only, drafting cost 0).
v from a bench or cost-check JSON's "v" (default: data/costcheck/cpu-avx2-2026-12-07.json, the AVX2 EPYC's v to 24).
--sole-off: without the sole option (a match with one earlier occurrence drafts as far as it goes).
"""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(__file__))

import copy_bound as C  # noqa: E402
import torch  # noqa: E402

from specviz.core import copybound as cb  # noqa: E402
from specviz.core.costmodel import passes_speedup  # noqa: E402
from specviz.engine import workloads as W  # noqa: E402
from specviz.proposers.base import draft_on  # noqa: E402
from specviz.proposers.lookup import FOLLOW, SOLE_FULL, PromptLookup  # noqa: E402

V_DEFAULT = "data/costcheck/cpu-avx2-2026-12-07.json"
NOVEL = "data/novel_texts/float32-128.json"
CAPS = (24, 16, 12, 8, 6, 4)


def novel_texts() -> dict:
    """{workload: (prompt ids, text ids)} of the novel bench workloads, greedy plain float32, made once and kept."""
    if os.path.exists(NOVEL):
        have = json.load(open(NOVEL))
    else:
        t = C.load_model("default", device="cpu", dtype="float32")
        have = {"model": t.name, "fingerprint": t.fingerprint(), "decoding": "greedy, plain", "new_tokens": 128,
                "machine": C.describe_machine(C.machine(t.device, t.dtype)), "texts": {}}
        for w in W.of_kind(W.NOVEL):
            p, x = C.plain_text(t, w, 128)
            have["texts"][w.name] = {"prompt_ids": p, "text_ids": x}
        os.makedirs(os.path.dirname(NOVEL), exist_ok=True)
        json.dump(have, open(NOVEL, "w"))
    return {n: (d["prompt_ids"], d["text_ids"]) for n, d in have["texts"].items()}


def drafted_passes(texts: dict, sole: bool, cap: int) -> dict:
    """{text: (tokens, drafted per pass)} of the registry's lookup capped at `cap`, sole on or off (v does not change
    them: a pass's price is applied afterwards)."""
    out = {}
    for n, (p, t) in texts.items():
        pr = PromptLookup(n_min=2, k_rule="match", sole=sole, follow=FOLLOW)   # the registry's lookup
        pr.reset(torch.tensor(p))
        out[n] = (len(t), cb.replay(p, t, lambda ctx: draft_on(pr, ctx, cap)))
    return out


def main() -> None:
    args = [a for a in sys.argv[1:] if a != "--sole-off"]
    sole = SOLE_FULL and "--sole-off" not in sys.argv
    v = {int(k): x for k, x in json.load(open(args[0] if args else V_DEFAULT))["v"].items()}
    copy, _ = C.cached_texts(list(C.BY_NAME), "float32", 128, False)
    novel = novel_texts()
    print(f"v: {v}; sole {'on' if sole else 'off'}")
    print("| cap | " + " | ".join(novel) + " | novel lowest | novel median | copy-heavy median (11) | copy lowest |")
    print("|---|" + "---|" * (len(novel) + 4))
    for cap in CAPS:
        sp = {n: passes_speedup(T, d, v) for n, (T, d) in drafted_passes({**novel, **copy}, sole, cap).items()}
        nv = [sp[n] for n in novel]
        cp = [sp[n] for n in copy]
        print(f"| {cap} | " + " | ".join(f"{sp[n]:.3f}" for n in novel) +
              f" | {min(nv):.3f} | {statistics.median(nv):.3f} | {statistics.median(cp):.3f} | {min(cp):.3f} |",
              flush=True)


if __name__ == "__main__":
    main()
