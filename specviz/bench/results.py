"""Reading a bench results file back (the Compare page shows the last bench beside a live run)."""
from __future__ import annotations

import glob
import json
import os

from specviz.core.errors import InputError
from specviz.core.stats import median
from specviz.engine.device import describe_machine
from specviz.engine.methods import DEFAULT_METHOD, REGISTRY
from specviz.proposers.gated import Gate


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
    """Where `bench --out bench` keeps a machine kind's results: bench/results/<this>, e.g. cpu-avx2,
    cpu-avx512-amx, cpu-avx512-bf16, cuda-nvidia-h100 (the GPU's name, or the CPU's kernel capability and its
    bfloat16 units: the dtype is auto's choice for them); cpu-avx2-standin for a CPU restricted to AVX2 kernels."""
    units = {"AMX": "amx", "AVX512_BF16": "bf16"}.get(m.get("bf16") or "", m.get("bf16") or "")
    name = f"cuda-{m['gpu']}" if m.get("gpu") else f"cpu-{m.get('capability', 'unknown')}" + (
        f"-{units}" if units else "")
    if m.get("restricted"):      # kernels restricted to another kind's: its set beside that kind's own
        name += "-standin"
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
            for w, r in per_w.items():   # every row names its experiment: mode, setting, max new tokens, runs;
                # tokens: what the run wrote (median), fewer than the maximum where it stopped at end-of-text
                rows.append({"mode": shown_mode, "method": label, "workload": w,
                             "kind": kinds.get(w), "setting": chosen.get((mode, kinds.get(w), label)) or "–",
                             "max_new_tokens": meta.get("max_new_tokens"), "tokens": r.get("tokens"),
                             "runs": runs.get(mode, "?"),
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
    """A machine's kind for comparing figures: the GPU's name, else the CPU's kernel capability and its bfloat16
    units (device.bf16_units: AMX and AVX512_BF16 are both AVX512 to torch, and differ several-fold in what a verify
    pass costs); and the dtype."""
    cpu = m.get("capability") if not m.get("bf16") else f"{m.get('capability')}+{m['bf16']}"
    return (m.get("gpu") or cpu, m.get("dtype"))


TRAINING_FREE = ("copy-recycle", "lookup", "suffix", "recycle")   # no weights: they run on any target
DEFAULT_PARTS = ("suffix", "recycle")                            # what copy-recycle drafts from (core/copychoice)
RULE = 0.95   # issue 35 §3: at least this × plain on every workload, and × the better part on each kind


def default_choice(data) -> dict | None:
    """Which training-free method to open on, on a machine of this bench file's kind, from the file's own speedups:
    the registry's default (copy-recycle) when it keeps issue 35's rule there (≥ RULE× plain on every workload,
    greedy and sampled, and ≥ RULE× the better of its parts on each kind); else, of the training-free methods that
    stay ≥ RULE× plain on every workload (never a slowdown a user would notice), the one with the highest median over
    all its workloads, greedy and sampled (the typical request of unknown text); where none stays above the floor,
    the one whose lowest workload is highest. {method, met, lowest: {method: (× plain, workload, mode)},
    median: {method: ×}, vs_part: [(ratio, kind, mode, better part, its ×)]}, or None when the file lacks those rows."""
    sp = data.get("speedup") if isinstance(data, dict) else None
    if not isinstance(sp, dict):
        return None
    lowest, med = {}, {}
    for m in TRAINING_FREE:
        xs = [(x, w, mode) for mode, d in sp.items() for w, x in (d.get("per_workload", {}).get(m) or {}).items() if x]
        if xs:
            lowest[m], med[m] = min(xs), median([x for x, _, _ in xs])
    if DEFAULT_METHOD not in lowest:
        return None
    vs_part = []
    for mode, d in sp.items():
        bk = d.get("by_kind", {})
        for k in sorted(bk.get(DEFAULT_METHOD) or {}):
            best = max(((bk.get(p, {}).get(k), p) for p in DEFAULT_PARTS if bk.get(p, {}).get(k)), default=None)
            if best:
                vs_part.append((bk[DEFAULT_METHOD][k] / best[0], k, mode, best[1], best[0]))
    met = lowest[DEFAULT_METHOD][0] >= RULE and all(v[0] >= RULE for v in vs_part)
    safe = [m for m in lowest if lowest[m][0] >= RULE]
    if met:
        method = DEFAULT_METHOD
    elif safe:
        method = max(safe, key=lambda m: med[m])
    else:
        method = max(lowest, key=lambda m: lowest[m][0])
    return dict(method=method, met=met, lowest=lowest, median=med, vs_part=vs_part, safe=safe)


def kind_bench(here: dict | None, root: str | None = None) -> tuple[str, dict] | None:
    """(path, parsed) of the committed bench of this machine's kind (bench/results/<kind>/results.json), else of a
    stand-in for the kind (<kind>-standin: another CPU with its kernels restricted to this one's), or None."""
    if not here:
        return None
    root = root or os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
    folder = kind_folder(here)
    names = [folder] if folder.endswith("-standin") else [folder, folder + "-standin"]
    for name in names:
        path = os.path.join(root, "bench", "results", name, "results.json")
        try:
            with open(path) as fh:
                return path, json.load(fh)
        except (OSError, ValueError):
            continue
    return None


def kind_v(here: dict | None, tree: bool, root: str | None = None) -> tuple[tuple[tuple[int, float], ...], str] | None:
    """(((k, v(k)), ...), where it was measured) from the committed bench of this machine's kind (kind_bench): v of a
    chain of k drafts, or for a tree (`tree`) v_tree of k nodes where measured and the chain's v elsewhere (a tree
    pass of k nodes has the rows of a chain of k). None without a bench of this kind. For proposers/gated.Gate."""
    found = kind_bench(here, root)
    if found is None or not found[1].get("v"):
        return None
    path, data = found
    table = {int(k): float(b) for k, b in data["v"].items()}
    if tree:
        table |= {int(k): float(b) for k, b in (data.get("v_tree") or {}).items()}
    table = {k: max(1.0, b) for k, b in table.items()}   # a pass costs at least a step: v < 1 measured is noise
    m = data.get("meta", {})
    where = f"by the bench of {os.path.basename(os.path.dirname(path))}"
    where += f", {m['started']}" if m.get("started") else ""
    return tuple(sorted(table.items())), where


def gate_for(rule: str, method: str, here: dict | None, root: str | None = None):
    """The proposers.gated.Gate a `--gate` rule names: hit-rate (α̂ of the last 8 drafts >= 0.3) or pays (the last 8
    drafting passes paid, priced with the v of this machine kind's committed bench: kind_v). InputError when pays
    has no bench of this kind to price passes with."""
    if rule == "hit-rate":
        return Gate()
    found = kind_v(here, tree=REGISTRY[method].tree, root=root)
    if found is None:
        raise InputError(f"--gate pays prices passes with the v(k) of a committed bench of this machine's kind "
                         f"({kind_folder(here) if here else 'unknown'}), and there is none: run `python -m specviz "
                         "bench --out bench`, or use --gate hit-rate")
    return Gate(v=found[0], where=found[1])


def default_method(here: dict | None, root: str | None = None) -> tuple[str, str | None]:
    """(the method the CLI and Step through open on, the bench file it was chosen from or None): default_choice of
    the committed bench of this machine's kind, else the registry's default."""
    found = kind_bench(here, root)
    choice = default_choice(found[1]) if found else None
    return (choice["method"], found[0]) if choice else (DEFAULT_METHOD, None)
