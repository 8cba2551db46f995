"""Which method the CLI and Step through open on (issue 35 item 3), and why, said from the measurements themselves.

why(): the registry's default, copy-recycle, from scripts/default_rule.py's JSON (--out), kept per machine kind beside
the bench's results (bench/results/<kind>/default_rule.json): copy-recycle against plain decoding and against each of
its parts (suffix, recycle) on every bench workload, greedy and sampled. The issue's rule: at least RULE× plain on
every workload and at least RULE× the better part's median on each kind.
on_this_machine(): what this machine opens on, from the committed bench of its kind (bench.results.default_method):
copy-recycle where that bench shows it keeps the rule, else the fastest training-free method (median over every
workload) among those never below RULE× plain there, else the one whose lowest workload is highest. Home renders both;
nothing is typed by hand.
"""
from __future__ import annotations

import json
import os

from specviz.bench.results import RULE, default_choice, kind_bench
from specviz.engine.device import describe_machine, machine
from specviz.engine.methods import DEFAULT_METHOD

EVIDENCE = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "results", "cpu-avx512-amx",
                        "default_rule.json")


def load(path: str = EVIDENCE) -> dict | None:
    """The measurement, or None when the file is missing or unreadable."""
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def why(data: dict | None) -> str:
    """Home's paragraph: which method is the default, and the measured reason (mode, methods, tokens, repeats,
    machine, load), per kind: copy-recycle's median × plain, its better part's, the ratio, the lowest workload."""
    if not data:
        return (f"**The registry's default method is `{DEFAULT_METHOD}`** (what the CLI and Step through open on "
                "where the bench of the machine's kind agrees, below). "
                "Its measurement (scripts/default_rule.py --out) is not in this checkout.")
    lines = []
    for mode, m in data.get("modes", {}).items():
        shown = f"sampled at T = {data.get('temperature', '?'):g}" if mode == "sampled" else mode
        for kind, k in m.get("kinds", {}).items():
            med = k["median"]
            lines.append(f"- {kind}, {shown}: **{med['copy-recycle']:.2f}×** plain against {k['best_part']}'s "
                         f"{med[k['best_part']]:.2f}× (**{k['vs_best']:.2f}×** its better part); its lowest workload "
                         f"{k['lowest']:.2f}× plain")
    verdict = ("it meets the rule on every kind" if data.get("met") else
               "it does **not** meet the rule on every kind")
    return (f"**The registry's default method is `{DEFAULT_METHOD}`** (what the CLI and Step through open on where "
            "the bench of the machine's kind agrees, below): "
            "with no weights to train, it drafts suffix decoding's tree when the context's tail matches earlier "
            "text by 2 tokens or more, token recycling's tree (the target's own discarded candidates) when nothing "
            "matches, and on a one-token match whichever of the two has kept more on this request so far. One tree "
            "per pass, chosen candidates, so the verification is lossless. The rule it had to meet: at least "
            f"{RULE}× plain decoding on every workload and at least {RULE}× the better of its parts on each kind of "
            f"workload; {verdict}. Measured by `{data.get('command', '?')}` on {data.get('date', '?')}, "
            f"{data.get('machine', '?')}, {_load(data.get('load'))}, {data.get('new_tokens', '?')} new tokens, "
            f"{data.get('repeats', '?')} interleaved repeats (sampled: one seed each), medians over the repeats "
            "and then over the workloads of a kind (docs/recycling.md keeps every run of this rule, the ones that "
            "missed it too):\n\n" + "\n".join(lines))


def _load(load) -> str:
    """The load average at the start and the end of the run, as words."""
    if isinstance(load, (list, tuple)) and load:
        return "load average " + " → ".join(f"{x:.2f}" for x in load)
    return f"load average {load}" if load is not None else "load average not recorded"


def on_this_machine(here: dict | None = None) -> str:
    """Which method the CLI and Step through open on on this machine (`here`: engine.device.machine()), rendered
    from the committed bench of its kind (bench.results.default_method): each training-free method's lowest
    workload × plain there, and whether copy-recycle kept the rule; or that no bench of this kind is committed."""
    here = here if here is not None else machine(None)
    found = kind_bench(here)
    choice = default_choice(found[1]) if found else None
    if choice is None:
        return (f"On this machine ({describe_machine(here)}) no bench of its kind is committed, so the CLI and Step "
                f"through open on the registry's default, `{DEFAULT_METHOD}`; `python -m specviz bench --out bench` "
                "measures one.")
    method, m = choice["method"], found[1].get("meta", {})
    lows = "; ".join(f"{name} {x:.2f}× ({w}, {mode}), median {choice['median'][name]:.2f}×"
                     for name, (x, w, mode) in choice["lowest"].items())
    kept = "keeps" if choice["met"] else "does **not** keep"
    if choice["met"]:
        how = "so it opens"
    elif choice["safe"]:
        how = (f"so the fastest of those never below {RULE}× plain on any workload ({', '.join(choice['safe'])}), "
               "by the median over every workload, opens")
    else:
        how = (f"and none stays at least {RULE}× plain on every workload, so the one whose lowest workload is "
               "highest opens")
    sp = found[1].get("speedup") or {}
    ran = [mode for mode in ("greedy", "sampled") if (sp.get(mode) or {}).get("per_workload")]  # what it reached
    runs = f"{m.get('repeats', '?')} greedy repeats" + (
        f" and {len(m.get('seeds') or [])} seeds at T = {m.get('temperature', '?')}" if "sampled" in ran else "")
    partial = "" if m.get("complete", True) else f"; **partial**: stopped before its end, {' and '.join(ran)} only"
    return (f"**On this machine the CLI and Step through open on `{method}`.** The bench of its kind "
            f"(`{m.get('command', '?')}`, started {m.get('started', '?')}, {describe_machine(m.get('machine') or {})}, "
            f"{runs}, {m.get('max_new_tokens', '?')} new tokens{partial}) measured each training-free "
            f"method's lowest workload × plain and its median over every workload, {' and '.join(ran)}: {lows}. "
            f"There copy-recycle {kept} the rule ({RULE}× plain on every workload and its better part on each "
            f"kind), {how}.")
