"""Measure the shipped proposers with the real decode loop on the project's workloads.

Through specviz.engine.measure, the one measuring path (docs/metrics.md): per workload and seed,
each repeat runs plain decoding once and every method once (order rotated), each method's ratio is
against that repeat's plain run, the per-workload speedup is the median of those ratios, and a kind's
speedup is the median over its workloads (as in the bench). Tokens per pass (emitted ÷ target passes),
α (accepted ÷ tested) and α̂ (accepted ÷ drafted) are per run, then aggregated the same way.
"""
from __future__ import annotations

import json
import time
from collections import defaultdict
from typing import Callable

from specviz.core import fmt as F
from specviz.core.sampling import SamplingConfig
from specviz.core.stats import median
from specviz.engine import measure as M
from specviz.engine.decode import DecodeConfig
from specviz.engine.methods import encode_prompt
from specviz.engine.models import LoadedModel
from specviz.engine.workloads import WORKLOADS


def _row(s, steps, **kw) -> dict:
    return dict(tokens=len(s.token_ids), passes=s.target_passes, drafted=s.drafted, accepted=s.accepted,
                tested=s.tested, wall_s=s.wall_s, tps=s.tokens_per_s, draft_s=s.draft_s, ids=s.token_ids, **kw)


def measure(target: LoadedModel, methods: dict[str, tuple[Callable, int]], reps: int = 1, max_new: int = 64,
            sampling: SamplingConfig = SamplingConfig(), seeds=(0,), workloads=None, log=None) -> list[dict]:
    """methods: label -> (proposer factory or None for plain, k). Returns one row per run, each with
    its ratio to the plain run of the same repeat."""
    wls = workloads or WORKLOADS
    built = {m: f() for m, (f, _) in methods.items() if f}
    eos = target.tokenizer.eos_token_id
    rows = []
    for seed in seeds:
        cfg = lambda k: DecodeConfig(k=k, max_new_tokens=max_new, sampling=sampling, seed=seed, record=False)  # noqa: E731
        contenders = {m: ((lambda p=built[m]: p), cfg(k)) for m, (f, k) in methods.items() if f}
        for w in wls:
            ids = encode_prompt(target.tokenizer, w.prompt, w.chat)
            got, plains = M.interleaved(target, ids, contenders, cfg(1), reps, eos)
            new = [_row(p, st, method="plain", k=0, ratio=1.0, rep=r) for r, (p, st) in enumerate(plains)]
            for m, meas in got.items():
                new += [_row(rp.summary, rp.steps, method=m, k=methods[m][1], ratio=rp.ratio, rep=r)
                        for r, rp in enumerate(meas.repeats)]
            for res in new:
                res.update(workload=w.name, kind=w.kind, seed=seed)
                rows.append(res)
                if log:
                    log(json.dumps({x: res[x] for x in res if x != "ids"}))
    return rows


def table(rows: list[dict]) -> list[dict]:
    """Per (method, kind): speedup, tokens per pass, α and α̂, each the median over workloads and seeds
    of the per-run figures' median over repeats (docs/metrics.md, "Over several runs")."""
    out = []
    kinds = sorted({r["kind"] for r in rows})
    for m in dict.fromkeys(r["method"] for r in rows):
        for kind in kinds:
            sel = [r for r in rows if r["method"] == m and r["kind"] == kind]
            if not sel:
                continue
            per_w = defaultdict(list)
            for r in sel:
                per_w[(r["workload"], r["seed"])].append(r)

            def over(figure) -> float | None:  # median over workloads of the median over repeats
                return median(median(figure(r) for r in rs) for rs in per_w.values())

            sp = over(lambda r: r["ratio"])
            tau = over(lambda r: r["tokens"] / r["passes"] if r["passes"] else None)
            alpha = over(lambda r: r["accepted"] / r["tested"] if r["tested"] else None)
            acc = over(lambda r: r["accepted"] / r["drafted"] if r["drafted"] else None)
            passes = sum(r["passes"] for r in sel)
            rnd = lambda x: None if x is None else round(x, 3)  # noqa: E731
            out.append(dict(method=m, k=sel[0]["k"], kind=kind, tokens_per_pass=rnd(tau), alpha=rnd(alpha),
                            draft_acceptance_rate=rnd(acc), speedup=rnd(sp),
                            tokens_per_s=round(median(r["tps"] for r in sel), 2), runs=len(sel),
                            draft_ms_per_step=round(1000 * sum(r["draft_s"] for r in sel) / passes, 1),
                            ms_per_step=round(1000 * sum(r["wall_s"] for r in sel) / passes, 1)))
    return out


def markdown(rows: list[dict], title: str) -> str:
    lines = [f"**{title}**", "", "| method | k | workloads | tokens per pass | α (kept ÷ tested) | "
             "α̂ (kept ÷ drafted) | speedup vs plain | median tokens/s | draft ms / step | ms / step |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        sp = F.num(r["speedup"], ".2f", "×")
        # tables written before α was recorded carry only "acceptance" (which was α̂)
        lines.append(f"| {r['method']} | {r['k']} | {r['kind']} | {r['tokens_per_pass']:.2f} | "
                     f"{F.num(r.get('alpha'))} | {F.num(r.get('draft_acceptance_rate', r.get('acceptance')))} | "
                     f"{sp} | {r['tokens_per_s']:.1f} | "
                     f"{r['draft_ms_per_step']:.1f} | {r['ms_per_step']:.0f} |")
    return "\n".join(lines)


def now() -> str:
    return time.strftime("%H:%M:%S")


def plan(part: str, target: LoadedModel):
    """(target to run, methods, sampling, seeds, workloads, reps) for one part of the evaluation."""
    from specviz.engine import artifacts
    from specviz.engine.methods import make_proposer
    from specviz.engine.workloads import NOVEL, of_kind

    def lookup():
        return make_proposer("lookup", target, n=3, k_rule="fixed")   # the rows say "lookup k=4": k per match

    if part == "finetuned":
        target = artifacts.load_finetuned_target(target)
    heads = {"medusa": lambda: artifacts.load_medusa(target), "eagle": lambda: artifacts.load_eagle(target),
             "draft": lambda: make_proposer("draft", target)}
    if artifacts.available()["eagle3"]:              # the EAGLE-3 head beside the old one, once shipped
        heads["eagle3"] = lambda: artifacts.load_eagle(target, kind="eagle3")
    if part == "greedy":
        methods = {"plain": (None, 1), "lookup k=4": (lookup, 4)}
        for name, ks in (("medusa", (1, 2)), ("eagle", (1, 2)), ("eagle3", (1, 2)), ("draft", (1, 2))):
            if name not in heads:
                continue
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
        keep = (tuple(x.strip() + " " for x in only.split(","))
                + tuple(x.strip() for x in only.split(",") if x.strip() == "plain"))
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
