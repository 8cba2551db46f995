"""The bench plan's expected wall time, from the run times a previous full run measured.

A previous results.json holds, per (mode, row, workload), the median wall time of one timed run at
its max new tokens, and the elapsed time of each phase. The estimate sums the planned runs:
  timed phases   the measured wall time of the same row on the same workload, per planned run;
  tuning         the same rows' wall times scaled to the tuning length, times a factor that makes
                 the previous run's own tuning plan come out at its measured tuning time (tuning runs
                 other settings than the timed ones);
  equality       likewise, calibrated on the previous equality phase (float32 runs, and the float32 load);
  sessions       per request, plain's and lookup's median wall time on the copy-heavy workloads at the
                 request's max new tokens (plain for the plain row, lookup for every copying row);
  load and v(k)  as measured.
A row the previous run did not have takes the wall time of the row in STAND_IN (suffix: lookup's), else plain's.
A run of n new tokens is taken to cost (n + FIXED) / (N + FIXED) of a run of N: FIXED is the prefill
and per-run setup, in decode-token equivalents (an assumption, stated here: about 0.6 s of a ~40 ms step).
"""
from __future__ import annotations

import json
from pathlib import Path

from specviz.bench.plan import (
    BLOCK,
    BLOCK_CHAINS,
    GREEDY,
    REFERENCE_LABELS,
    SAMPLED,
    SESSION_ROWS,
    UNTUNED,
    candidates,
    is_tree,
    tuned,
)
from specviz.core.stats import median

FIXED = 16
STAND_IN = {"suffix": "lookup"}   # a new row's wall time, until a full run has measured it
REFERENCE = Path(__file__).resolve().parents[2] / "bench" / "results.json"


def reference(path=REFERENCE) -> dict:
    res = json.loads(Path(path).read_text())
    m = res["meta"]
    if m.get("quick") or not m.get("complete", True):
        raise ValueError(f"{path} is not a complete full bench run")
    at = {x["phase"]: x["at_s"] for x in m["load_average"]}
    order = [x["phase"] for x in m["load_average"]]
    phases = {p: at[q] - at[p] for p, q in zip(order, order[1:])}
    walls = {(mode, lab, w): r["wall_s"] for mode, rows in res["per_run"].items()
             for lab, per_w in rows.items() for w, r in per_w.items()}
    return dict(source=str(path), walls=walls, N=m["max_new_tokens"], tune_N=m["tuning_tokens"],
                equality_N=m.get("equality_tokens", m["max_new_tokens"]),
                phases=phases, tuning=res["tuning"], equality=res["equality"],
                kinds=dict(m["workloads"]), chosen=res["chosen"])


def _at(wall: float, n: int, N: int) -> float:
    return wall * (n + FIXED) / (N + FIXED)


def _wall(ref: dict, mode: str, label: str, w: str) -> float:
    return (ref["walls"].get((mode, label, w)) or ref["walls"].get((mode, label.removesuffix(BLOCK), w))
            or ref["walls"].get((mode, STAND_IN.get(label, "plain"), w))
            or ref["walls"][(mode, "plain", w)])


def timed(plan, ref: dict, mode: str, trained: list[str], copying=UNTUNED, references=REFERENCE_LABELS,
          block=BLOCK_CHAINS) -> float:
    """The timed phase of this mode: plain, the copying methods, the trained ones; the reference rows in the
    first ref_repeats greedy repeats; sampled, each chain in `block` twice (token-wise and block verification)
    (copying, references, block: another plan's rows, e.g. an earlier run's)."""
    ws = [w for w in plan.workloads if mode == GREEDY or w.kind == "novel"]
    rounds = plan.repeats if mode == GREEDY else len(plan.seeds)
    rows = ["plain", *copying, *[m for m in trained if mode != GREEDY or not is_tree(m)]]
    rows += [m + BLOCK for m in rows if mode == SAMPLED and m in block]   # token vs block, same seeds
    refs = [x for x in references if x != "hf assisted (drafter)" or "draft" in trained]
    refs += [m for m in trained if mode == GREEDY and is_tree(m)]    # trees run with the references
    total = 0.0
    for i in range(rounds):
        labels = rows + (refs if mode == GREEDY and i < plan.ref_repeats else [])
        total += sum(_at(_wall(ref, mode, lab, w.name), plan.max_new, ref["N"]) for w in ws for lab in labels)
    return total


def tuning(plan, ref: dict, trained: list[str]) -> float:
    def cost(runs, n):  # runs: (mode, method, workload)
        return sum(_at(_wall(ref, mode, m, w), n, ref["N"]) for mode, m, w in runs)

    before = [(t["mode"], t["method"], t["workload"]) for t in ref["tuning"]]
    before += [(mode, "plain", w) for mode, w in dict.fromkeys((t["mode"], t["workload"]) for t in ref["tuning"])]
    factor = ref["phases"]["tuning"] / cost(before, ref["tune_N"])
    planned = []
    for mode in (GREEDY, SAMPLED):
        for w in plan.tuning_workloads(mode):
            planned.append((mode, "plain", w.name))
            planned += [(mode, m, w.name) for m in trained if tuned(m) for _ in candidates(m, plan.quick)]
    return factor * cost(planned, plan.tune_new)


def equality(plan, ref: dict, trained: list[str]) -> float:
    def per_workload(w: str, kind: str, methods: list[str]) -> float:
        return sum(_wall(ref, GREEDY, lab, w) for lab in ["plain", "hf plain", *methods])

    before_methods = sorted({c["method"] for c in ref["chosen"]})
    before = sum(_at(per_workload(w, k, before_methods), ref["equality_N"], ref["N"])  # at its own length
                 for w, k in ref["kinds"].items())
    factor = ref["phases"]["equality (float32)"] / before
    return factor * sum(_at(per_workload(w.name, w.kind, [*UNTUNED, *trained]), plan.equality_new, ref["N"])
                        for w in plan.workloads)


def sessions(plan, ref: dict) -> float:
    """Every session request run by plain and every SESSION_ROWS row, per repeat, plus one short warm-up each."""
    copy = [w for w, k in ref["kinds"].items() if k == "copy-heavy"]
    wall = {lab: median([_wall(ref, GREEDY, lab, w) for w in copy]) for lab in ("plain", "lookup")}
    per_request = _at(wall["plain"], plan.session_new, ref["N"]) + \
        len(SESSION_ROWS) * _at(wall["lookup"], plan.session_new, ref["N"])
    warm = (1 + len(SESSION_ROWS)) * _at(wall["plain"], 4, ref["N"])
    return sum(plan.session_repeats * len(s.requests) * per_request + warm for s in plan.sessions)


def estimate(plan, ref: dict, trained: list[str]) -> dict[str, float]:
    """{phase: seconds} for this plan."""
    return {"load, warm-up, v(k)": ref["phases"]["load"] + ref["phases"]["v(k)"],
            "tuning": tuning(plan, ref, trained),
            "greedy (timed)": timed(plan, ref, GREEDY, trained),
            "sampled (timed)": timed(plan, ref, SAMPLED, trained),
            "sessions": sessions(plan, ref),
            "equality (float32)": equality(plan, ref, trained)}
