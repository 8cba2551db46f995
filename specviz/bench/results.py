"""Reading a bench results file back (the Compare page shows the last bench beside a live run)."""
from __future__ import annotations

import glob
import json
import os

from specviz.engine.device import describe_machine


def latest_bench(root: str = ".", here: dict | None = None) -> tuple[str, object] | None:
    """The bench results file (JSON) to show beside a live run, parsed; None when there is none. `here` (a
    machine(), engine/device.py): the newest file measured on a machine of the same kind (kind()) when there is
    one, else the newest of all (bench_where then says it is another kind)."""
    pats = ["results/bench*.json", "results/**/bench*.json", "bench*/*.json", "bench/results/*/results.json",
            "runs/bench*.json", "bench_results*.json"]
    files = {f for p in pats for f in glob.glob(os.path.join(root, p), recursive=True)}
    found = []
    for f in sorted(files, key=os.path.getmtime, reverse=True):
        try:
            with open(f) as fh:
                found.append((f, json.load(fh)))
        except (OSError, ValueError):
            continue
    if here is not None:
        same = [(f, d) for f, d in found if isinstance(d, dict)
                and kind(d.get("meta", {}).get("machine") or {})[0] == kind(here)[0]]
        if same:
            return same[0]
    return found[0] if found else None


def kind_folder(m: dict) -> str:
    """Where `bench --out bench` keeps a machine kind's results: bench/results/<this>, e.g. cpu-avx2, cpu-amx,
    cuda-nvidia-h100 (the GPU's name, or the CPU's kernel capability: the dtype is auto's choice for it)."""
    name = f"cuda-{m['gpu']}" if m.get("gpu") else f"cpu-{m.get('capability', 'unknown')}"
    return "".join(ch if ch.isalnum() else "-" for ch in name.lower()).strip("-")


def bench_rows(data) -> list[dict]:
    """Flatten a bench results.json (per_run[mode][label][workload]) into table rows; [] if unknown."""
    if not isinstance(data, dict) or not isinstance(data.get("per_run"), dict):
        return []
    sp = data.get("speedup", {})
    meta = data.get("meta", {})
    kinds = dict(meta.get("workloads") or {})  # [[name, kind], ...] or {name: kind}
    chosen = {(c.get("mode"), c.get("kind"), c.get("method")): c.get("setting") for c in data.get("chosen") or []}
    runs = {"greedy": f"{meta.get('repeats', '?')} repeats", "sampled": f"{len(meta.get('seeds') or [])} seeds"}
    rows = []
    for mode, labels in data["per_run"].items():
        shown_mode = f"sampled T={meta['temperature']:g}" if mode == "sampled" and "temperature" in meta else mode
        for label, per_w in labels.items():
            for w, r in per_w.items():   # every row names its experiment: mode, setting, tokens, runs
                rows.append({"mode": shown_mode, "method": label, "workload": w,
                             "kind": kinds.get(w), "setting": chosen.get((mode, kinds.get(w), label)) or "–",
                             "tokens": meta.get("max_new_tokens"), "runs": runs.get(mode, "?"),
                             "tokens_per_pass": r.get("tokens_per_pass"),
                             "draft_acceptance_rate": r.get("draft_acceptance_rate"),
                             "tokens_per_s": r.get("tokens_per_s"),
                             "speedup": sp.get(mode, {}).get("per_workload", {}).get(label, {}).get(w)})
    return rows


def bench_where(data, here: dict | None = None) -> str:
    """Where a bench results file was measured, and whether this machine is of the same kind (CPU capability or
    GPU name, and dtype): its figures hold here only then. Files from before the machine was recorded say so."""
    meta = data.get("meta", {}) if isinstance(data, dict) else {}
    m = meta.get("machine")
    if not m:
        return (f"measured on a machine the file does not name ({meta.get('dtype', '?')}, {meta.get('threads', '?')} "
                f"threads, torch {meta.get('torch', '?')}; recorded before the bench named its machine), so it may "
                "not be the kind of machine this one is")
    out = f"measured on {describe_machine(m)}"
    if here is not None:
        same = kind(m) == kind(here)
        out += ("; this machine is of the same kind" if same else
                f"; this machine is another kind ({describe_machine(here)}): its figures may differ here")
    return out


def kind(m: dict) -> tuple:
    """A machine's kind for comparing figures: the GPU's name, else the CPU's kernel capability; and the dtype."""
    return (m.get("gpu") or m.get("capability"), m.get("dtype"))
