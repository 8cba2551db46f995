"""copy-recycle against its parts on every bench workload (issue 35 item 3: the training-free default).

    PYTHONPATH=$PWD .venv/bin/python scripts/default_rule.py [--new 128] [--repeats 3] [--old-rule]

The bench's workloads and settings (bench/plan.py): greedy on every workload (copy-heavy and novel), sampled at
the bench's temperature on the novel ones, one seed per repeat (the bench's seeds 1, 2, 3); bfloat16, 2 threads.
Each repeat is one engine.measure.one_repeat per workload: plain and every contender once, the order rotated per
repeat, each contender's ratio against that repeat's plain run (core.stats), the speedup the median over repeats,
then the median over the workloads of a kind. Every method runs at its registry defaults (lookup's match rule,
suffix and the recycling tree self-sized, cap 24), as the bench runs the copying methods. --old-rule adds
copy-recycle as it was before core/copychoice.py (suffix's tree from a match of 2 tokens or more, else recycling).

Prints, per workload and per kind: × plain (median, with the repeats' range), τ, nodes per pass, and
copy-recycle ÷ the better of its parts (suffix, recycle) — the issue's rule: copy-recycle ≥ 0.95× plain on every
workload and ≥ 0.95× the better part's median on each kind.
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch

from specviz.bench.plan import GREEDY, SAMPLED, Plan
from specviz.core.copychoice import PartChooser
from specviz.core.sampling import SamplingConfig
from specviz.core.stats import ratio, speedup, spread
from specviz.engine import measure, workloads as W
from specviz.engine.decode import DecodeConfig
from specviz.engine.device import describe_machine, machine
from specviz.engine.methods import REGISTRY, encode_prompt, make_proposer
from specviz.engine.models import load_model

METHODS = ("lookup", "suffix", "recycle", "copy-recycle")
PARTS = ("suffix", "recycle")
OLD = "copy-recycle (old rule)"
LEARNED = "copy-recycle (learned at every match)"
UNION = "copy-recycle (both trees)"
UNION_GREEDY = "copy-recycle (both trees when greedy)"
RULE = 0.95         # issue 35 item 3: the default must reach this against plain and against its better part


def main() -> None:
    a = argparse.ArgumentParser()
    a.add_argument("--new", type=int, default=128)
    a.add_argument("--repeats", type=int, default=3)
    a.add_argument("--threads", type=int, default=2)
    a.add_argument("--dtype", default="bfloat16")
    a.add_argument("--old-rule", action="store_true")
    a.add_argument("--learn-all", action="store_true", help="add copy-recycle that scores its parts at every match "
                   "length (core/copychoice.py, buckets 1..BUCKETS) instead of always copying from 2 tokens")
    a.add_argument("--only", default="", help="comma-separated workload names (default: every bench workload)")
    a.add_argument("--methods", default=",".join(METHODS), help="comma-separated contenders (copy-recycle and at "
                   "least one of its parts)")
    a.add_argument("--union", action="store_true", help="add copy-recycle drafting both parts' trees merged into one "
                   "on a one-token match (core/copychoice.merge), greedy and sampled (union='always')")
    a.add_argument("--union-greedy", action="store_true", help="add copy-recycle merging both trees under greedy "
                   "decoding only, the rule's pick when sampling (union='greedy')")
    a.add_argument("--gated", action="store_true", help="add each contender behind the hit-rate gate "
                   "(proposers/gated.py: no draft while α̂ of its last 8 drafts < 0.3, a probe every 4th step)")
    a.add_argument("--pays", action="store_true", help="add each contender behind the gate that asks whether its "
                   "last 8 drafting passes paid on this kind (proposers/gated.py with the kind's bench v: Σ (kept + 1) "
                   ">= Σ v(drafted))")
    a.add_argument("--modes", default=f"{GREEDY},{SAMPLED}")
    a.add_argument("--out", default="", help="also write the figures as JSON here (what Home reads: RESULT)")
    a = a.parse_args()
    torch.set_num_threads(a.threads)
    plan = Plan(workloads=list(W.of_kind(W.COPY)) + list(W.of_kind(W.NOVEL)))
    seeds = list(plan.seeds)[: a.repeats] + list(range(len(plan.seeds) + 1, a.repeats + 1))
    t = load_model("default", device="cpu", dtype=a.dtype)
    eos = t.tokenizer.eos_token_id
    props = {m: make_proposer(m, t) for m in a.methods.split(",")}
    if a.old_rule:
        props[OLD] = make_proposer("copy-recycle", t, suffix=dict(min_match=2))
    if a.learn_all:
        props[LEARNED] = make_proposer("copy-recycle", t)
        props[LEARNED].rule = PartChooser(always_copy=10**9)
    if a.union:
        props[UNION] = make_proposer("copy-recycle", t, union="always")
    if a.union_greedy:
        props[UNION_GREEDY] = make_proposer("copy-recycle", t, union="greedy")
    if a.gated:
        from specviz.proposers.gated import Gate
        props |= {f"{m} (gated)": make_proposer(m, t, gate=Gate()) for m in a.methods.split(",")}
    if a.pays:
        from specviz.bench.results import gate_for  # what `generate --gate pays` builds
        for m in a.methods.split(","):
            gate = gate_for("pays", m, machine("cpu", t.model.dtype))
            props[f"{m} (pays)"] = make_proposer(m, t, gate=gate)
            print(f"{m} (pays): {gate.words()}; v {dict(gate.v)}")
    labels = list(props)
    order = [None, *labels]
    only = set(filter(None, a.only.split(",")))
    ws = [w for w in plan.workloads if not only or w.name in only]
    print("$ scripts/default_rule.py " + " ".join(sys.argv[1:]))
    a.date = f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC"
    a.machine, a.load_start = describe_machine(machine("cpu", t.model.dtype)), os.getloadavg()[0]
    print(f"{a.date}; {a.machine}; load {a.load_start:.2f} at start")
    got: dict = {}                         # (mode, workload) -> {label: [(summary, plain summary)]}
    for mode in a.modes.split(","):
        samp = SamplingConfig() if mode == GREEDY else SamplingConfig(temperature=plan.temperature)
        for w in (ws if mode == GREEDY else [w for w in ws if w.kind == W.NOVEL]):
            ids = encode_prompt(t.tokenizer, w.prompt, w.chat)

            def cfg(label, seed, new=a.new):
                name = "copy-recycle" if label in (OLD, LEARNED, UNION, UNION_GREEDY) else label
                name = (name or "").removesuffix(" (gated)").removesuffix(" (pays)") or None
                k = 1 if label is None else REGISTRY[name].defaults["k"]
                return DecodeConfig(k=k, max_new_tokens=new, sampling=samp, seed=seed, record=False,
                                    stop_at_eos=True)

            for x in order:                # untimed warm-up runs (measure.warm_up's rule)
                measure.run(t, None if x is None else props[x], ids, cfg(x, 0, measure.WARM_UP_TOKENS), eos)
            rows = got[mode, w.name] = {x: [] for x in labels}
            for r in range(a.repeats):
                seed = 0 if mode == GREEDY else seeds[r]
                one = measure.one_repeat(order, r, lambda x: measure.run(
                    t, None if x is None else props[x], ids, cfg(x, seed), eos)[0])
                for x in labels:
                    rows[x].append((one[x], one[None]))
            print(f"  done {mode} {w.name} (load {os.getloadavg()[0]:.2f})", flush=True)
    report(got, labels, ws, a)


def report(got: dict, labels: list[str], ws: list, a) -> None:
    kind_of = {w.name: w.kind for w in ws}
    print(f"\nload average at the end: {os.getloadavg()}")
    out = {"command": "scripts/default_rule.py " + " ".join(sys.argv[1:]), "date": a.date, "machine": a.machine,
           "load": [round(a.load_start, 2), round(os.getloadavg()[0], 2)], "new_tokens": a.new,
           "repeats": a.repeats, "temperature": Plan(workloads=[]).temperature, "parts": list(PARTS), "modes": {}}
    for mode in (GREEDY, SAMPLED):
        keys = [k for k in got if k[0] == mode]
        if not keys:
            continue
        print(f"\n### {mode}{' (T = 0.8, seeds 1-' + str(a.repeats) + ')' if mode == SAMPLED else ''}, "
              f"{a.new} new tokens, {a.repeats} repeats: × plain (repeats' range), τ, nodes per pass\n")
        print("| workload | kind | " + " | ".join(labels) + " | copy-recycle ÷ better part |")
        print("|---|---|" + "---|" * len(labels) + "---|")
        per_kind: dict = {}
        for _, name in keys:
            rows = got[mode, name]
            sp = {x: speedup((m.tokens_per_s, p.tokens_per_s) for m, p in rows[x]) for x in labels}
            cells = []
            for x in labels:
                rs = [ratio(m.tokens_per_s, p.tokens_per_s) for m, p in rows[x]]
                tau = statistics.median(m.tokens_per_pass for m, _ in rows[x])
                nodes = statistics.median(m.drafted / max(1, m.target_passes) for m, _ in rows[x])
                cells.append(f"{sp[x]:.2f}× ({min(rs):.2f}–{max(rs):.2f}), τ {tau:.2f}, {nodes:.1f}")
            parts = [x for x in PARTS if x in labels]
            best = max(parts, key=lambda x: sp[x])
            print(f"| {name} | {kind_of[name]} | " + " | ".join(cells) +
                  f" | {sp['copy-recycle'] / sp[best]:.2f} (vs {best}) |")
            per_kind.setdefault(kind_of[name], []).append(sp)
            out["modes"].setdefault(mode, {}).setdefault("workloads", {})[name] = {"kind": kind_of[name], **{
                x: [ratio(m.tokens_per_s, p.tokens_per_s) for m, p in rows[x]] for x in labels}}
        for kind, sps in per_kind.items():
            med = {x: statistics.median(s[x] for s in sps) for x in labels}
            best = max(parts, key=lambda x: med[x])
            worst = min(s["copy-recycle"] for s in sps)
            print(f"| **median, {kind}** | | " + " | ".join(f"**{med[x]:.2f}×**" for x in labels) +
                  f" | **{med['copy-recycle'] / med[best]:.2f}** (vs {best}; copy-recycle's lowest workload "
                  f"{worst:.2f}× plain) |")
            out["modes"][mode].setdefault("kinds", {})[kind] = {
                "median": med, "best_part": best, "vs_best": med["copy-recycle"] / med[best], "lowest": worst}
        sp_all = [spread([ratio(m.tokens_per_s, p.tokens_per_s) for m, p in got[k]["copy-recycle"]]) for k in keys]
        print(f"\ncopy-recycle's widest repeat range in {mode}: {max(s or 0 for s in sp_all):.2f}")
    kinds = [k for m in out["modes"].values() for k in m.get("kinds", {}).values()]
    out["met"] = bool(kinds) and all(k["lowest"] >= RULE and k["vs_best"] >= RULE for k in kinds)
    print(f"\nthe rule (≥ {RULE}× plain on every workload, ≥ {RULE}× the better part on each kind): "
          f"{'met' if out['met'] else 'not met'}")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    try:
        print(subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    except OSError:
        pass
    main()
