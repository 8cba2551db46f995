"""Reading a bench results file back (the Compare page shows the last bench beside a live run)."""
from __future__ import annotations

import glob
import json
import os


def latest_bench(root: str = ".") -> tuple[str, object] | None:
    """The newest bench results file (JSON) under the usual folders, parsed; None when there is none."""
    pats = ["results/bench*.json", "results/**/bench*.json", "bench*/*.json", "runs/bench*.json",
            "bench_results*.json"]
    files = {f for p in pats for f in glob.glob(os.path.join(root, p), recursive=True)}
    for f in sorted(files, key=os.path.getmtime, reverse=True):
        try:
            with open(f) as fh:
                return f, json.load(fh)
        except (OSError, ValueError):
            continue
    return None


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
