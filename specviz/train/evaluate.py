"""Measure the shipped proposers with the real decode loop on the project's workloads.

Interleaved: every repetition runs each (workload, method) once, in a rotated order, so slow and
fast moments of a shared machine fall on all methods alike. Speedup = method tokens/s ÷ plain
tokens/s on the same workload, same decoding mode (median over repetitions), aggregated per
workload kind as a geometric mean; tokens per pass = emitted ÷ target passes over the kind.
"""
from __future__ import annotations

import json
import math
import statistics
import time
from collections import defaultdict
from typing import Callable

from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.methods import encode_prompt
from specviz.engine.models import LoadedModel
from specviz.core.sampling import SamplingConfig
from specviz.engine.workloads import WORKLOADS


def run_one(target: LoadedModel, proposer, ids, k: int, max_new: int, sampling: SamplingConfig, seed: int):
    cfg = DecodeConfig(k=k, max_new_tokens=max_new, sampling=sampling, seed=seed, record=False)
    dec = Decoder(target, proposer, ids, cfg, eos_token_id=target.tokenizer.eos_token_id)
    for _ in dec.run():
        pass
    s = dec.summary()
    return dict(tokens=len(s.token_ids), passes=s.target_passes, drafted=s.drafted, accepted=s.accepted,
                wall_s=s.wall_s, tps=s.tokens_per_s, draft_s=s.draft_s, ids=s.token_ids)


def measure(target: LoadedModel, methods: dict[str, tuple[Callable, int]], reps: int = 1, max_new: int = 64,
            sampling: SamplingConfig = SamplingConfig(), seeds=(0,), workloads=None, log=None) -> list[dict]:
    """methods: label -> (proposer factory or None for plain, k). Returns one row per run."""
    wls = workloads or WORKLOADS
    prompts = {w.name: encode_prompt(target.tokenizer, w.prompt, w.chat) for w in wls}
    proposers = {m: (f() if f else None, k) for m, (f, k) in methods.items()}
    rows, order = [], list(proposers)
    for r in range(reps):
        for seed in seeds:
            for wi, w in enumerate(wls):
                rot = order[(r + wi) % len(order):] + order[:(r + wi) % len(order)]
                for m in rot:
                    p, k = proposers[m]
                    res = run_one(target, p, prompts[w.name], k, max_new, sampling, seed)
                    res.update(method=m, k=k, workload=w.name, kind=w.kind, rep=r, seed=seed)
                    rows.append(res)
                    if log:
                        log(json.dumps({x: res[x] for x in res if x != "ids"}))
    return rows


def table(rows: list[dict], base: str = "plain") -> list[dict]:
    """Per (method, kind): tokens per pass, speedup vs plain (geo-mean of per-workload medians)."""
    by = defaultdict(list)
    for r in rows:
        by[(r["method"], r["workload"], r["seed"])].append(r)
    out = []
    kinds = sorted({r["kind"] for r in rows})
    for m in dict.fromkeys(r["method"] for r in rows):
        for kind in kinds:
            sel = [r for r in rows if r["method"] == m and r["kind"] == kind]
            if not sel:
                continue
            ratios, loops = [], []
            for (mm, w, seed), rs in by.items():
                if mm != m or rs[0]["kind"] != kind or (base, w, seed) not in by:
                    continue
                ratios.append(statistics.median(x["tps"] for x in rs) /
                              statistics.median(x["tps"] for x in by[(base, w, seed)]))
            tok = sum(r["tokens"] for r in sel)
            out.append(dict(method=m, k=sel[0]["k"], kind=kind, tokens_per_pass=round(tok / sum(r["passes"] for r in sel), 3),
                            acceptance=round(sum(r["accepted"] for r in sel) / max(1, sum(r["drafted"] for r in sel)), 3),
                            speedup=round(math.exp(sum(map(math.log, ratios)) / len(ratios)), 3) if ratios else None,
                            tokens_per_s=round(statistics.median(r["tps"] for r in sel), 2), runs=len(sel),
                            draft_ms_per_step=round(1000 * sum(r["draft_s"] for r in sel) / sum(r["passes"] for r in sel), 1),
                            ms_per_step=round(1000 * sum(r["wall_s"] for r in sel) / sum(r["passes"] for r in sel), 1)))
    return out


def markdown(rows: list[dict], title: str) -> str:
    lines = [f"**{title}**", "", "| method | k | workloads | tokens per pass | acceptance | speedup vs plain | "
             "median tokens/s | draft ms / step | ms / step |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        sp = "–" if r["speedup"] is None else f"{r['speedup']:.2f}×"
        lines.append(f"| {r['method']} | {r['k']} | {r['kind']} | {r['tokens_per_pass']:.2f} | {r['acceptance']:.2f} | "
                     f"{sp} | {r['tokens_per_s']:.1f} | {r['draft_ms_per_step']:.1f} | {r['ms_per_step']:.0f} |")
    return "\n".join(lines)


def now() -> str:
    return time.strftime("%H:%M:%S")


def plan(part: str, target: LoadedModel):
    """(target to run, methods, sampling, seeds, workloads, reps) for one part of the evaluation."""
    from specviz.engine import artifacts
    from specviz.engine.methods import make_proposer
    from specviz.engine.workloads import NOVEL, of_kind

    def lookup():
        return make_proposer("lookup", target, n=3)

    if part == "finetuned":
        target = artifacts.load_finetuned_target(target)
    heads = {"medusa": lambda: artifacts.load_medusa(target), "eagle": lambda: artifacts.load_eagle(target),
             "draft": lambda: make_proposer("draft", target, drafter=artifacts.load_drafter(target))}
    if part == "greedy":
        methods = {"plain": (None, 1), "lookup k=4": (lookup, 4)}
        for name, ks in (("medusa", (1, 2)), ("eagle", (1, 2)), ("draft", (1, 2))):
            for k in ks:
                methods[f"{name} k={k}"] = (heads[name], k)
        methods["lookup+eagle k=2"] = (lambda: make_proposer("hybrid", target, n=3, n_min=2, n_max=3), 2)
        return target, methods, SamplingConfig(), (0,), None, 1
    methods = {"plain": (None, 1), "lookup k=2": (lookup, 2)}
    methods.update({f"{n} k=2": (f, 2) for n, f in heads.items()})
    if part == "sampled":
        return target, methods, SamplingConfig(temperature=0.8), (0, 1), of_kind(NOVEL), 1
    if part == "finetuned":
        return target, methods, SamplingConfig(), (0,), None, 1
    raise ValueError(f"unknown part '{part}' (greedy, sampled, finetuned)")


def run_part(target: LoadedModel, part: str, out_dir, max_new: int = 64, only: str = "", tag: str = "") -> list[dict]:
    import warnings
    from pathlib import Path

    from specviz.engine.artifacts import CheckpointMismatch

    warnings.simplefilter("ignore", CheckpointMismatch)      # expected: that is what this part measures
    t, methods, sampling, seeds, wls, reps = plan(part, target)
    if only:     # e.g. "plain,medusa": keep methods whose label starts with one of these names
        keep = tuple(x.strip() + " " for x in only.split(",")) + tuple(x.strip() for x in only.split(",") if x.strip() == "plain")
        methods = {m: v for m, v in methods.items() if m.startswith(keep) or m in keep}
    name = part + (f"_{tag}" if tag else "")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    with open(out / f"eval_{name}.jsonl", "w") as f:
        rows = measure(t, methods, reps, max_new, sampling, seeds, wls,
                       log=lambda line: (f.write(line + "\n"), f.flush()))
    tab = table(rows)
    (out / f"table_{name}.json").write_text(json.dumps(dict(part=part, target=t.name, max_new_tokens=max_new,
                                                             reps=reps, seeds=list(seeds), rows=tab), indent=1))
    return tab
