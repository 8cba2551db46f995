"""Measured comparisons through the one decode loop: methods side by side, k/n sweeps, recommendations.

Everything here is measured on the spot: plain decoding runs interleaved with the methods (same
prompt, same max new tokens, same decoding mode), and speedup = method tokens/s ÷ plain tokens/s,
each end to end (prefill included). Long loops report progress through `progress(fraction, text)`.
"""
from __future__ import annotations

import inspect
import statistics
import warnings
from dataclasses import dataclass, field

from specviz.engine import methods as M
from specviz.core.errors import InputError
from specviz.engine.decode import DecodeConfig, generate
from specviz.engine.models import LoadedModel
from specviz.core.records import RunSummary, StepRecord
from specviz.core.sampling import SamplingConfig
from specviz.engine.workloads import Workload

SPEEDUP_MARGIN = 1.05  # a method must beat plain by 5% to be recommended (these CPUs are noisy)


@dataclass
class Run:
    workload: str
    kind: str
    method: str
    k: int
    n: int | None               # lookup's n (None for other methods)
    summary: RunSummary
    steps: list[StepRecord] = field(repr=False)
    plain_tokens_per_s: float   # mean tokens/s of the plain runs right before and after its block
    repeat: int = 0
    plain: RunSummary | None = field(default=None, repr=False)  # the plain run right before it

    @property
    def speedup(self) -> float:
        return self.summary.tokens_per_s / self.plain_tokens_per_s if self.plain_tokens_per_s else 0.0


def trained_available() -> dict:
    """artifacts.available() when the trained-proposer module is present; {} otherwise."""
    try:
        from specviz.engine import artifacts
        return dict(artifacts.available())
    except Exception:  # noqa: BLE001 - missing module or unreadable models/ folder: nothing trained
        return {}


def try_methods(target: LoadedModel, drafter: LoadedModel | None, n: int = 3) -> tuple[list[str], dict]:
    """(methods that build a proposer for this target, {method: why not} for the others)."""
    ok, why = [], {}
    for m in M.METHODS:
        if m == "plain":
            continue
        if m == "draft" and drafter is None and not trained_available().get("drafter"):
            why[m] = "no draft model for this target yet (the trained drafter is not in models/)"
            continue
        try:
            build_proposer(m, target, n, drafter)
            ok.append(m)
        except Exception as e:  # noqa: BLE001 - shown to the user as the reason
            why[m] = str(e) or type(e).__name__
    return ok, why


def build_proposer(method: str, target: LoadedModel, n: int = 3, drafter: LoadedModel | None = None):
    """methods.make_proposer with only the keywords it accepts (trained methods may add their own)."""
    if method == "draft" and drafter is None:
        drafter = _trained_drafter(target)
    kw = {"n": n, "drafter": drafter}
    accepted = inspect.signature(M.make_proposer).parameters
    return M.make_proposer(method, target, **{k: v for k, v in kw.items() if k in accepted})


def _trained_drafter(target: LoadedModel) -> LoadedModel | None:
    try:
        from specviz.engine import artifacts
    except ImportError:
        return None
    if not artifacts.available().get("drafter"):
        return None
    return artifacts.load_drafter(target)


def run_one(target: LoadedModel, workload: Workload, method: str, k: int, n: int | None,
            sampling: SamplingConfig, max_new_tokens: int, seed: int = 0,
            drafter: LoadedModel | None = None, proposer=None) -> tuple[RunSummary, list[StepRecord]]:
    """One measured run of `method` on `workload` (proposer may be given ready-made)."""
    ids = M.encode_prompt(target.tokenizer, workload.prompt, workload.chat)
    prop = proposer if proposer is not None else build_proposer(method, target, n or 3, drafter)
    cfg = DecodeConfig(k=k, max_new_tokens=max_new_tokens, sampling=sampling, seed=seed, record=False)
    return generate(target, prop, ids, cfg)


def compare(target: LoadedModel, workloads: list[Workload], methods: list[str], ks: list[int],
            n: int = 3, sampling: SamplingConfig = SamplingConfig(), max_new_tokens: int = 48,
            seed: int = 0, repeats: int = 1, drafter: LoadedModel | None = None,
            proposers: dict | None = None, progress=None) -> list[Run]:
    """Plain + every method at every k, per workload. Plain runs bracket each method's block, and each
    method run is compared with the mean of the two plain runs around it (machine load drifts).

    proposers: optional {method: callable() -> Proposer} for methods built outside make_proposer.
    """
    if not workloads:
        raise InputError("choose at least one workload")
    if not ks or min(ks) < 1:
        raise InputError("choose at least one k >= 1")
    spec = [m for m in methods if m != "plain"]
    total = len(workloads) * repeats * (1 + len(spec) * (1 + len(ks)))
    done, out = 0, []
    for w in workloads:
        warm_up(target, w, sampling, seed)
        for r in range(repeats):
            plain, psteps = run_one(target, w, "plain", 1, None, sampling, max_new_tokens, seed)
            out.append(Run(w.name, w.kind, "plain", 0, None, plain, psteps, plain.tokens_per_s, r, plain))
            done += 1
            _tick(progress, done, total, f"{w.name}: plain")
            for m in spec:
                block = []
                for k in ks:
                    prop = proposers[m]() if proposers and m in proposers else None
                    nn = n if m == "lookup" else None
                    s, steps = run_one(target, w, m, k, nn, sampling, max_new_tokens, seed, drafter, prop)
                    block.append(Run(w.name, w.kind, m, k, nn, s, steps, 0.0, r, plain))
                    done += 1
                    _tick(progress, done, total, f"{w.name}: {m} k={k}")
                after, asteps = run_one(target, w, "plain", 1, None, sampling, max_new_tokens, seed)
                base = (plain.tokens_per_s + after.tokens_per_s) / 2
                for x in block:
                    x.plain_tokens_per_s = base
                out += block
                out.append(Run(w.name, w.kind, "plain", 0, None, after, asteps, after.tokens_per_s, r, after))
                plain = after
                done += 1
                _tick(progress, done, total, f"{w.name}: plain")
    return out


def warm_up(target: LoadedModel, workload: Workload, sampling: SamplingConfig, seed: int = 0) -> None:
    """A short untimed run: the first passes after a load or a pause are slower than the rest."""
    run_one(target, workload, "plain", 1, None, sampling, 4, seed)


def _tick(progress, done: int, total: int, text: str) -> None:
    if progress:
        progress(done / total, f"{done}/{total} runs · {text}")


def table(runs: list[Run]) -> list[dict]:
    """One row per (workload, method, k): medians over repeats, docs/metrics.md names."""
    groups: dict[tuple, list[Run]] = {}
    for r in runs:
        groups.setdefault((r.workload, r.method, r.k), []).append(r)
    rows = []
    for (w, m, k), rs in groups.items():
        s = [r.summary for r in rs]
        acc = [x.draft_acceptance_rate for x in s if x.draft_acceptance_rate is not None]
        rows.append({
            "workload": w, "kind": rs[0].kind, "method": m, "k": k if m != "plain" else None,
            "draft_acceptance_rate": statistics.median(acc) if acc else None,
            "tokens_per_pass": statistics.median(x.tokens_per_pass for x in s),
            "tokens_per_s": statistics.median(x.tokens_per_s for x in s),
            "speedup": statistics.median(r.speedup for r in rs),
            "target_passes": statistics.median(x.target_passes for x in s),
            "draft_s": statistics.median(x.draft_s for x in s),
            "verify_s": statistics.median(x.verify_s for x in s),
            "wall_s": statistics.median(x.wall_s for x in s),
            "repetition": statistics.median(repetition(x.token_ids) for x in s),
        })
    return rows


@dataclass
class Recommendation:
    kind: str
    method: str          # 'plain' when nothing beat plain decoding by SPEEDUP_MARGIN
    k: int | None
    speedup: float       # median over the kind's workloads of the chosen (or, for plain, the best) setting
    tokens_per_pass: float
    workloads: int
    runner_up: str | None

    def text(self) -> str:
        if self.method == "plain" and self.speedup >= SPEEDUP_MARGIN:
            return (f"**{self.kind}**: keep speculation off — the fastest, {self.runner_up}, committed "
                    f"{self.tokens_per_pass:.2f} tokens per pass, i.e. it saved no target pass; its edge is "
                    f"timing noise ({self.workloads} workload(s)).")
        if self.method == "plain":
            return (f"**{self.kind}**: keep speculation off — no measured method beat plain decoding by "
                    f"{SPEEDUP_MARGIN - 1:.0%} (best: {self.runner_up}) over {self.workloads} workload(s).")
        return (f"**{self.kind}**: use **{self.method}** with **k = {self.k}** — measured "
                f"{self.speedup:.2f}× plain decoding, {self.tokens_per_pass:.2f} tokens per pass "
                f"(median of {self.workloads} workload(s)); runner-up: {self.runner_up or 'none'}.")


def recommend(runs: list[Run]) -> dict[str, Recommendation]:
    """Per workload kind: the (method, k) with the best median measured speedup across its workloads.

    'plain' unless the best beats plain decoding by SPEEDUP_MARGIN and commits > 1 token per pass."""
    out = {}
    rows = [r for r in table(runs) if r["method"] != "plain"]
    for kind in sorted({r["kind"] for r in rows}):
        cands: dict[tuple, list[dict]] = {}
        for r in rows:
            if r["kind"] == kind:
                cands.setdefault((r["method"], r["k"]), []).append(r)
        scored = sorted(((statistics.median(x["speedup"] for x in rs),
                          statistics.median(x["tokens_per_pass"] for x in rs), key, len(rs))
                         for key, rs in cands.items()), reverse=True)
        best, second = scored[0], (scored[1] if len(scored) > 1 else None)
        n_w = len({r["workload"] for r in rows if r["kind"] == kind})
        label = lambda s: f"{s[2][0]} k={s[2][1]} ({s[0]:.2f}×)"  # noqa: E731
        if best[0] < SPEEDUP_MARGIN or best[1] <= 1.0:  # a "win" that saved no pass is timing noise
            out[kind] = Recommendation(kind, "plain", None, best[0], best[1], n_w, label(best))
        else:
            out[kind] = Recommendation(kind, best[2][0], best[2][1], best[0], best[1], n_w,
                                       label(second) if second else None)
    return out


def repetition(ids: list[int], n: int = 4) -> float:
    """Share of the output's n-grams that already occurred earlier in it: how much the text loops."""
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    seen, repeats = set(), 0
    for g in grams:
        repeats += g in seen
        seen.add(g)
    return repeats / len(grams) if grams else 0.0


@dataclass
class SweepPoint:
    k: int
    n: int | None
    summary: RunSummary
    speedup: float = 0.0


def sweep(target: LoadedModel, workload: Workload, method: str, ks: list[int], ns: list[int] | None,
          sampling: SamplingConfig = SamplingConfig(), max_new_tokens: int = 32, seed: int = 0,
          drafter: LoadedModel | None = None, proposer_factory=None, progress=None
          ) -> tuple[list[SweepPoint], list[RunSummary]]:
    """Every k (and every n for lookup). Plain runs bracket each k's block; each point's speedup is
    against the mean tokens/s of the two plain runs around it. Returns (points, plain runs)."""
    if method == "plain":
        raise InputError("choose a speculative method to sweep")
    if not ks or min(ks) < 1:
        raise InputError("k values must be >= 1")
    grid_n = (ns or [3]) if method == "lookup" else [None]
    if method == "lookup" and min(grid_n) < 1:
        raise InputError("n values must be >= 1")
    total = 1 + len(ks) * (1 + len(grid_n))
    warm_up(target, workload, sampling, seed)
    plains = [run_one(target, workload, "plain", 1, None, sampling, max_new_tokens, seed)[0]]
    done, points = 1, []
    _tick(progress, done, total, "plain")
    for k in ks:
        block = []
        for n in grid_n:
            prop = proposer_factory() if proposer_factory else None
            s, _ = run_one(target, workload, method, k, n, sampling, max_new_tokens, seed, drafter, prop)
            block.append(SweepPoint(k, n, s))
            done += 1
            _tick(progress, done, total, f"{method} k={k}" + (f" n={n}" if n else ""))
        plains.append(run_one(target, workload, "plain", 1, None, sampling, max_new_tokens, seed)[0])
        done += 1
        _tick(progress, done, total, f"plain (after k={k})")
        base = (plains[-2].tokens_per_s + plains[-1].tokens_per_s) / 2
        for p in block:
            p.speedup = p.summary.tokens_per_s / base if base else 0.0
        points += block
    return points, plains


def greedy_vs_sampled(target: LoadedModel, workloads: list[Workload], k: int = 5, n: int = 3,
                      max_new_tokens: int = 48, temperature: float = 0.8, seed: int = 0,
                      progress=None) -> list[dict]:
    """Lookup vs plain on the same prompts, greedy and sampled: table rows with a 'mode' column.

    With a small model, greedy output loops, and lookup copies the loop; sampling breaks the loops."""
    rows = []
    modes = [("greedy", SamplingConfig()), (f"sampled T={temperature:g}", SamplingConfig(temperature))]
    for i, (mode, samp) in enumerate(modes):
        sub = (lambda f, t, i=i: progress((i + f) / len(modes), f"{mode}: {t}")) if progress else None  # noqa: E731
        runs = compare(target, workloads, ["lookup"], [k], n, samp, max_new_tokens, seed, progress=sub)
        for row in table(runs):
            row["mode"] = mode
            rows.append(row)
    return rows


def latest_bench(root: str = ".") -> tuple[str, object] | None:
    """The newest bench results file (JSON) under the usual folders, parsed; None when there is none."""
    import glob
    import json
    import os

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


def checkpoint_swap(base: LoadedModel, tuned: LoadedModel, workload: Workload, methods: list[str],
                    k: int = 4, sampling: SamplingConfig = SamplingConfig(), max_new_tokens: int = 48,
                    seed: int = 0, progress=None) -> tuple[list[dict], dict[str, str]]:
    """The same proposers on the base target and on a fine-tune of it: tokens per pass side by side.

    Each proposer is loaded for the target it runs on, as a deployment that forgot to retrain would
    do. What the loader says about it — a checkpoint-mismatch warning, or a refusal (then the base's
    proposer is run on the fine-tune anyway) — is returned as {method: message}."""
    rows, notes = [], {}
    plan = [(lab, tgt, m) for lab, tgt in (("base", base), ("fine-tuned", tuned)) for m in ["plain", *methods]]
    warm_up(base, workload, sampling, seed)
    for i, (lab, tgt, m) in enumerate(plan):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                prop = build_proposer(m, tgt)
            except Exception as e:  # noqa: BLE001 - the loader's own refusal is part of the lesson
                notes[f"{m} on the {lab} target"] = f"refused: {e}"
                prop = build_proposer(m, base)
        if caught:
            notes.setdefault(f"{m} on the {lab} target", "warned: " + str(caught[0].message))
        s, _ = run_one(tgt, workload, m, k, 3 if m == "lookup" else None, sampling, max_new_tokens, seed,
                       proposer=prop)
        rows.append({"target": lab, "method": m, "tokens_per_pass": s.tokens_per_pass,
                     "draft_acceptance_rate": s.draft_acceptance_rate, "tokens_per_s": s.tokens_per_s})
        _tick(progress, i + 1, len(plan), f"{m} on the {lab} target")
    return rows, notes


def bench_rows(data) -> list[dict]:
    """Flatten a bench results.json (per_run[mode][label][workload]) into table rows; [] if unknown."""
    if not isinstance(data, dict) or not isinstance(data.get("per_run"), dict):
        return []
    sp = data.get("speedup", {})
    kinds = dict(data.get("meta", {}).get("workloads") or {})  # [[name, kind], ...] or {name: kind}
    rows = []
    for mode, labels in data["per_run"].items():
        for label, per_w in labels.items():
            for w, r in per_w.items():
                rows.append({"mode": mode, "method": label, "workload": w,
                             "kind": kinds.get(w),
                             "tokens_per_pass": r.get("tokens_per_pass"), "draft_acceptance_rate": r.get("draft_acceptance_rate"),
                             "tokens_per_s": r.get("tokens_per_s"),
                             "speedup": sp.get(mode, {}).get("per_workload", {}).get(label, {}).get(w)})
    return rows


def swap_verdict(rows: list[dict]) -> list[str]:
    """One measured sentence per proposer of checkpoint_swap(): tokens per pass, base -> fine-tuned."""
    out = []
    for m in dict.fromkeys(r["method"] for r in rows if r["method"] != "plain"):
        a, b = (next(r for r in rows if r["method"] == m and r["target"] == t) for t in ("base", "fine-tuned"))
        d = b["tokens_per_pass"] - a["tokens_per_pass"]
        trend = "dropped" if d < -0.05 else "rose" if d > 0.05 else "held"
        out.append(f"{m}: τ {a['tokens_per_pass']:.2f} on the base → {b['tokens_per_pass']:.2f} on the fine-tune "
                   f"({trend}; acceptance {_pct(a['draft_acceptance_rate'])} → {_pct(b['draft_acceptance_rate'])})")
    return out


def _pct(x) -> str:
    return "n/a" if x is None else f"{x:.0%}"
