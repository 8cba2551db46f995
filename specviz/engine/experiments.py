"""Measured comparisons through the one decode loop: methods side by side, k/n sweeps, recommendations.

Everything here is measured on the spot through specviz.engine.measure, the one measuring path:
plain decoding interleaved with the methods (same prompt, same max new tokens, same decoding mode),
speedup = method tokens/s ÷ plain tokens/s of the same repeat, end to end, median over repeats
(docs/metrics.md). Long loops report progress through `progress(fraction, text)`.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from specviz.core.errors import InputError
from specviz.core.records import RunSummary, StepRecord
from specviz.core.repetition import repetition
from specviz.core.sampling import SamplingConfig
from specviz.core.stats import median, spread
from specviz.engine import measure
from specviz.engine import methods as M
from specviz.engine.decode import DecodeConfig
from specviz.engine.models import LoadedModel
from specviz.engine.workloads import NOVEL, Session, Workload

SPEEDUP_MARGIN = 1.05  # a method must beat plain by 5% to be recommended (these CPUs are noisy)
WARM_UP_TOKENS = measure.WARM_UP_TOKENS   # measure.interleaved's untimed runs before the timed ones
LOOPS_AT = 0.2         # plain output repeating this share of its 4-grams loops: lookup copies the loop


@dataclass
class Run:
    workload: str
    kind: str
    method: str
    k: int
    n: int | None               # lookup's n (None for other methods)
    summary: RunSummary
    steps: list[StepRecord] = field(repr=False)
    plain_tokens_per_s: float   # tokens/s of the plain run of the same repeat (docs/metrics.md)
    repeat: int = 0
    plain: RunSummary | None = field(default=None, repr=False)  # that plain run

    @property
    def speedup(self) -> float:
        return self.summary.tokens_per_s / self.plain_tokens_per_s if self.plain_tokens_per_s else 0.0


def run_one(target: LoadedModel, workload: Workload, method: str, k: int, n: int | None,
            sampling: SamplingConfig, max_new_tokens: int, seed: int = 0,
            drafter: LoadedModel | None = None, proposer=None, k_rule: str = M.DEFAULT_K_RULE
            ) -> tuple[RunSummary, list[StepRecord]]:
    """One measured run of `method` on `workload` at this k (proposer may be given ready-made)."""
    ids = M.encode_prompt(target.tokenizer, workload.prompt, workload.chat)
    prop = proposer if proposer is not None else M.make_proposer(method, target, n=n, drafter=drafter, k_rule=k_rule)
    return measure.run(target, prop, ids, _cfg(k, sampling, max_new_tokens, seed), target.tokenizer.eos_token_id)


def _cfg(k: int, sampling: SamplingConfig, max_new_tokens: int, seed: int) -> DecodeConfig:
    return DecodeConfig(k=k, max_new_tokens=max_new_tokens, sampling=sampling, seed=seed, record=False)


@dataclass(frozen=True)
class RunCount:
    """The decoding runs a comparison or a sweep makes: `timed` runs of its max new tokens, and before each
    workload's, untimed warm-up runs of WARM_UP_TOKENS (measure.warm_up: plain and every contender once)."""
    timed: int
    warm_ups: int

    @property
    def total(self) -> int:
        return self.timed + self.warm_ups


def compare_settings(methods: list[str], ks: list[int], k_rule: str = M.DEFAULT_K_RULE) -> list[tuple[str, int]]:
    """The (method, k) contenders of compare(): every speculative method at every k (plain runs anyway); a
    method that sizes its own drafts (lookup's match rule, suffix) once, at its cap (methods.draft_cap)."""
    return list(dict.fromkeys((m, M.draft_cap(m, k, k_rule)) for m in dict.fromkeys(methods) if m != "plain"
                              for k in dict.fromkeys(ks)))


def compare_runs(n_workloads: int, methods: list[str], ks: list[int], repeats: int = 1,
                 k_rule: str = M.DEFAULT_K_RULE) -> RunCount:
    """The runs compare() makes: per workload, warm-ups of plain and every contender, then per repeat plain
    once and every contender once."""
    per_round = 1 + len(compare_settings(methods, ks, k_rule))
    return RunCount(n_workloads * repeats * per_round, n_workloads * per_round)


def compare(target: LoadedModel, workloads: list[Workload], methods: list[str], ks: list[int],
            n: int | None = None, sampling: SamplingConfig = SamplingConfig(), max_new_tokens: int = 48,
            seed: int = 0, repeats: int = 1, drafter: LoadedModel | None = None,
            proposers: dict | None = None, progress=None, k_rule: str = M.DEFAULT_K_RULE) -> list[Run]:
    """Plain + every method at every k, per workload, through measure.interleaved: each repeat runs
    plain once and every (method, k) once, and each run's speedup is against that repeat's plain run.
    table() takes the median over repeats (docs/metrics.md).

    proposers: optional {method: callable() -> Proposer} for methods built outside make_proposer.
    n, k_rule: lookup's (make_proposer's defaults: the match rule, drafting up to methods.SELF_SIZED_CAP
    tokens whatever ks says; ks apply to the fixed-k methods).
    """
    if not workloads:
        raise InputError("choose at least one workload")
    if not ks or min(ks) < 1:
        raise InputError("choose at least one k >= 1")
    built: dict = {}

    def factory(m):  # one proposer per method, reused across runs (the decoder resets it)
        def make():
            if m not in built:
                built[m] = proposers[m]() if proposers and m in proposers else \
                    M.make_proposer(m, target, n=n, drafter=drafter, k_rule=k_rule)
            return built[m]
        return make

    out = []
    for wi, w in enumerate(workloads):
        ids = M.encode_prompt(target.tokenizer, w.prompt, w.chat)
        contenders = {(m, k): (factory(m), _cfg(k, sampling, max_new_tokens, seed))
                      for m, k in compare_settings(methods, ks, k_rule)}
        sub = (lambda f, t, wi=wi, w=w: progress((wi + f) / len(workloads), f"{w.name}: {t}")) if progress else None
        got, plains = measure.interleaved(target, ids, contenders, _cfg(1, sampling, max_new_tokens, seed),
                                          repeats, target.tokenizer.eos_token_id, sub)
        for r, (plain, psteps) in enumerate(plains):
            out.append(Run(w.name, w.kind, "plain", 0, None, plain, psteps, plain.tokens_per_s, r, plain))
            for (m, k), meas in got.items():
                rp = meas.repeats[r]
                out.append(Run(w.name, w.kind, m, k, getattr(built[m], "n_min", n) if m == "lookup" else None, rp.summary, rp.steps,
                               plain.tokens_per_s, r, plain))
    return out


def warm_up(target: LoadedModel, workload: Workload, sampling: SamplingConfig, seed: int = 0) -> None:
    """A short untimed run: the first passes after a load or a pause are slower than the rest."""
    run_one(target, workload, "plain", 1, None, sampling, WARM_UP_TOKENS, seed)


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
        ratios = [r.speedup for r in rs]
        rows.append({
            "workload": w, "kind": rs[0].kind, "method": m, "k": k if m != "plain" else None,
            "alpha": median(x.alpha for x in s),
            "draft_acceptance_rate": median(x.draft_acceptance_rate for x in s),
            "tokens_per_pass": median(x.tokens_per_pass for x in s),
            "tokens_per_s": median(x.tokens_per_s for x in s),
            "speedup": measure.speedup_of(ratios),
            "spread": spread(ratios),          # of the per-repeat ratios; None with one repeat
            "repeats": len(rs),
            "target_passes": median(x.target_passes for x in s),
            "draft_s": median(x.draft_s for x in s),
            "verify_s": median(x.verify_s for x in s),
            "wall_s": median(x.wall_s for x in s),
            "repetition": median(repetition(x.token_ids) for x in s),
        })
    return rows


def novel_loops(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """table() rows of plain decoding on novel workloads, and those of them whose output loops (repeats at
    least LOOPS_AT of its 4-grams): there lookup copies the loop, and its numbers flatter it."""
    novel = [r for r in rows if r["method"] == "plain" and r["kind"] == NOVEL]
    return novel, [r for r in novel if r["repetition"] >= LOOPS_AT]


def one_repeat(runs: list[Run], workload: str) -> list[Run]:
    """The runs of one workload's first repeat: its plain run and every (method, k) once (the timeline)."""
    return [r for r in runs if r.workload == workload and r.repeat == 0]


def lookup_vs_plain(rows: list[dict]) -> list[tuple[dict, dict]]:
    """greedy_vs_sampled() rows paired: (lookup's row, the plain row of the same workload and mode)."""
    plain = {(r["workload"], r["mode"]): r for r in rows if r["method"] == "plain"}
    return [(r, plain[r["workload"], r["mode"]]) for r in rows if r["method"] == "lookup"]


@dataclass
class Recommendation:
    kind: str
    method: str          # 'plain' when nothing beat plain decoding by SPEEDUP_MARGIN
    k: int | None
    speedup: float       # median over the kind's workloads of the chosen (or, for plain, the best) setting
    tokens_per_pass: float
    workloads: int
    runner_up: str | None
    spread: float | None = None  # of the chosen setting's per-repeat ratios (median over workloads)

    def text(self) -> str:
        if self.method != "plain" and measure.too_noisy(self.speedup, self.spread):
            return (f"**{self.kind}**: {self.method} with k = {self.k} measured fastest, but its speedup is "
                    f"{measure.TOO_NOISY} ({self.speedup:.2f}× with a spread of {self.spread:.2f} between "
                    "repeats). Add repeats or quiet the machine.")
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
        scored = sorted(((median(x["speedup"] for x in rs),
                          median(x["tokens_per_pass"] for x in rs), key, len(rs))
                         for key, rs in cands.items()), reverse=True)
        best, second = scored[0], (scored[1] if len(scored) > 1 else None)
        n_w = len({r["workload"] for r in rows if r["kind"] == kind})
        label = lambda s: f"{s[2][0]} k={s[2][1]} ({s[0]:.2f}×)"  # noqa: E731
        if best[0] < SPEEDUP_MARGIN or best[1] <= 1.0:  # a "win" that saved no pass is timing noise
            out[kind] = Recommendation(kind, "plain", None, best[0], best[1], n_w, label(best))
        else:
            out[kind] = Recommendation(kind, best[2][0], best[2][1], best[0], best[1], n_w,
                                       label(second) if second else None,
                                       median(x.get("spread") for x in cands[best[2]]))
    return out


def sweep_grid(method: str, ks: list[int], ns: list[int] | None) -> list[tuple[int, int | None]]:
    """The (k, n) settings sweep() measures: every k, and for lookup every n (3 when none is given)."""
    return list(dict.fromkeys((k, n) for k in ks for n in ((ns or [3]) if method == "lookup" else [None])))


def sweep_runs(method: str, ks: list[int], ns: list[int] | None, repeats: int = 1) -> RunCount:
    """The runs sweep() makes: warm-ups of plain and every setting, then per repeat plain once and every setting once."""
    per_round = 1 + len(sweep_grid(method, ks, ns))
    return RunCount(repeats * per_round, per_round)


@dataclass
class SweepPoint:
    k: int
    n: int | None               # lookup's n; a suffix sweep: the swept knob's value
    summary: RunSummary
    speedup: float = 0.0
    axis: str = "n"             # what n holds: 'n', or a suffix knob (SUFFIX_KNOBS)


def sweep(target: LoadedModel, workload: Workload, method: str, ks: list[int], ns: list[int] | None,
          sampling: SamplingConfig = SamplingConfig(), max_new_tokens: int = 32, seed: int = 0,
          drafter: LoadedModel | None = None, proposer_factory=None, progress=None, repeats: int = 1,
          k_rule: str = "fixed") -> tuple[list[SweepPoint], list[RunSummary]]:
    """Every k (and every n for lookup) through measure.interleaved; each point's speedup is the
    median over repeats of its tokens/s ÷ the same repeat's plain tokens/s. Returns (points, plain runs).
    Lookup is swept under the fixed-k rule (k tokens per match) unless k_rule says otherwise."""
    if method == "plain":
        raise InputError("choose a speculative method to sweep")
    if not ks or min(ks) < 1:
        raise InputError("k values must be >= 1")
    grid = sweep_grid(method, ks, ns)
    if method == "lookup" and min(n for _, n in grid) < 1:
        raise InputError("n values must be >= 1")
    ids = M.encode_prompt(target.tokenizer, workload.prompt, workload.chat)   # interleaved warms up first
    shared = {}

    def factory(n):
        def make():
            if proposer_factory:
                return proposer_factory()
            if n not in shared:
                shared[n] = M.make_proposer(method, target, n=n or 3, drafter=drafter, k_rule=k_rule)
            return shared[n]
        return make

    contenders = {(k, n): (factory(n), _cfg(k, sampling, max_new_tokens, seed)) for k, n in grid}
    got, plains = measure.interleaved(target, ids, contenders, _cfg(1, sampling, max_new_tokens, seed),
                                      repeats, target.tokenizer.eos_token_id, progress)
    points = [SweepPoint(k, n, m.summary, m.speedup) for (k, n), m in got.items()]
    return points, [p for p, _ in plains]


# suffix's knobs a sweep can vary (make_proposer's suffix settings), each with the values it opens on
SUFFIX_KNOBS = {"max_depth": "depth cap", "factor": "spec factor", "min_prob": "minimum probability"}
SUFFIX_VALUES = {"max_depth": "8, 16, 24", "factor": "0.5, 1, 2, 4", "min_prob": "0.05, 0.1, 0.2, 0.4"}


def suffix_values(knob: str, text: str) -> list[float]:
    """'8, 16, 24' -> the values to sweep, checked against the knob's range; InputError with the reason."""
    if knob not in SUFFIX_KNOBS:
        raise InputError(f"unknown suffix knob '{knob}' (choose from: {', '.join(SUFFIX_KNOBS)})")
    try:
        vals = [float(x) for x in text.replace(";", ",").split(",") if x.strip()]
    except ValueError:
        raise InputError(f"the {SUFFIX_KNOBS[knob]} values must be numbers separated by commas, got '{text}'") from None
    if not vals:
        raise InputError(f"give at least one {SUFFIX_KNOBS[knob]} value")
    if len(vals) > 6:
        raise InputError(f"at most 6 {SUFFIX_KNOBS[knob]} values per sweep, got {len(vals)}")
    ok = {"max_depth": lambda v: v == int(v) and 2 <= v <= 64, "factor": lambda v: 0 < v <= 16,
          "min_prob": lambda v: 0 <= v <= 1}[knob]
    bad = [v for v in vals if not ok(v)]
    if bad:
        rng = {"max_depth": "whole numbers from 2 to 64", "factor": "above 0, at most 16",
               "min_prob": "between 0 and 1"}[knob]
        raise InputError(f"the {SUFFIX_KNOBS[knob]} must be {rng}; got {', '.join(f'{v:g}' for v in bad)}")
    vals = list(dict.fromkeys(vals))
    return [int(v) for v in vals] if knob == "max_depth" else vals


def suffix_sweep_runs(ks: list[int], values: list[float], repeats: int = 1) -> RunCount:
    """The runs suffix_sweep() makes (as sweep_runs)."""
    per_round = 1 + len(ks) * len(values)
    return RunCount(repeats * per_round, per_round)


def suffix_sweep(target: LoadedModel, workload: Workload, ks: list[int], knob: str, values: list[float],
                 sampling: SamplingConfig = SamplingConfig(), max_new_tokens: int = 32, seed: int = 0,
                 progress=None, repeats: int = 1) -> tuple[list[SweepPoint], list[RunSummary]]:
    """suffix at every k (its node budget) and every value of one knob (the others at their defaults), through
    measure.interleaved as sweep() does; each point's n is the knob's value (axis = the knob)."""
    if knob not in SUFFIX_KNOBS:
        raise InputError(f"unknown suffix knob '{knob}' (choose from: {', '.join(SUFFIX_KNOBS)})")
    if not ks or min(ks) < 1:
        raise InputError("k values must be >= 1")
    if not values:
        raise InputError(f"give at least one {SUFFIX_KNOBS[knob]} value")
    for v in values:  # a bad value fails here, before any run, with make_proposer's message
        M.make_proposer("suffix", target, suffix={knob: v})
    ids = M.encode_prompt(target.tokenizer, workload.prompt, workload.chat)

    def factory(v):
        return lambda: M.make_proposer("suffix", target, suffix={knob: v})   # a fresh cache per run

    contenders = {(k, v): (factory(v), _cfg(k, sampling, max_new_tokens, seed)) for k in ks for v in values}
    got, plains = measure.interleaved(target, ids, contenders, _cfg(1, sampling, max_new_tokens, seed),
                                      repeats, target.tokenizer.eos_token_id, progress)
    points = [SweepPoint(k, v, m.summary, m.speedup, axis=knob) for (k, v), m in got.items()]
    return points, [p for p, _ in plains]


def greedy_vs_sampled(target: LoadedModel, workloads: list[Workload], k: int = 5, n: int = 3,
                      max_new_tokens: int = 48, temperature: float = 0.8, seed: int = 0,
                      progress=None) -> list[dict]:
    """Lookup vs plain on the same prompts, greedy and sampled: table rows with a 'mode' column.

    With a small model, greedy output loops, and lookup copies the loop; sampling breaks the loops.
    Lookup runs the fixed-k rule here: k tokens per match, the k the caller chose."""
    rows = []
    modes = [("greedy", SamplingConfig()), (f"sampled T={temperature:g}", SamplingConfig(temperature))]
    for i, (mode, samp) in enumerate(modes):
        sub = (lambda f, t, i=i: progress((i + f) / len(modes), f"{mode}: {t}")) if progress else None  # noqa: E731
        runs = compare(target, workloads, ["lookup"], [k], n, samp, max_new_tokens, seed, progress=sub, k_rule="fixed")
        for row in table(runs):
            row["mode"] = mode
            rows.append(row)
    return rows


@dataclass(frozen=True)
class SwapInputs:
    """What checkpoint_swap() can measure with the artefacts in models/ (methods.trained_available)."""
    heads: list[str]   # the trained heads shipped: each is measured on both checkpoints
    finetune: bool     # the LoRA fine-tune of the target shipped (the second checkpoint)

    @property
    def missing(self) -> list[str]:
        """What is not there yet, in words; empty when the swap can run."""
        return ([] if self.heads else ["medusa or eagle heads"]) + ([] if self.finetune else ["the fine-tuned target"])


def checkpoint_swap_inputs() -> SwapInputs:
    avail = M.trained_available()
    return SwapInputs([m for m in ("medusa", "eagle") if avail.get(m)], bool(avail.get("lora")))


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
                prop = M.make_proposer(m, tgt)
            except Exception as e:  # noqa: BLE001 - the loader's own refusal is part of the lesson
                notes[f"{m} on the {lab} target"] = f"refused: {e}"
                prop = M.make_proposer(m, base)
        if caught:
            notes.setdefault(f"{m} on the {lab} target", "warned: " + str(caught[0].message))
        s, _ = run_one(tgt, workload, m, k, 3 if m == "lookup" else None, sampling, max_new_tokens, seed,
                       proposer=prop)
        rows.append({"target": lab, "method": m, "tokens_per_pass": s.tokens_per_pass,
                     "draft_acceptance_rate": s.draft_acceptance_rate, "tokens_per_s": s.tokens_per_s})
        _tick(progress, i + 1, len(plan), f"{m} on the {lab} target")
    return rows, notes


# -- sessions: several requests in order, one proposer, the cross-request cache on or off (issue 23 §3) ----------
@dataclass
class SessionRun:
    """One session run to the end: every request once, in order, each timed by measure.run."""
    session: str
    method: str
    cache: bool                                  # the proposer remembered each request for the next ones
    requests: list[RunSummary] = field(repr=False)
    steps: list[list[StepRecord]] = field(repr=False)
    names: list[str] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return sum(len(s.token_ids) for s in self.requests)

    @property
    def wall_s(self) -> float:
        return sum(s.wall_s for s in self.requests)

    @property
    def tokens_per_s(self) -> float:
        """Whole-session tokens/s: every request's tokens over every request's wall time (prefills included)."""
        return self.tokens / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def target_passes(self) -> int:
        return sum(s.target_passes for s in self.requests)

    @property
    def tokens_per_pass(self) -> float:
        """Whole-session tau: tokens emitted / target passes over all requests."""
        return self.tokens / self.target_passes if self.target_passes else 0.0

    @property
    def draft_s(self) -> float:
        return sum(s.draft_s for s in self.requests)

    @property
    def mean_k(self) -> float:
        """Drafted tokens per step over the session (k-bar)."""
        steps = sum(len(st) for st in self.steps)
        return sum(s.drafted for s in self.requests) / steps if steps else 0.0


def run_session(target: LoadedModel, session: Session, make: Callable[[], object | None], cfg: DecodeConfig,
                cache: bool = True, method: str = "") -> SessionRun:
    """The session's requests in order through measure.run. cache=True: one proposer for the whole session,
    told to remember() each finished request (a proposer without that method simply has no cross-request
    memory); cache=False: a fresh proposer per request. make() is called anew for every session run, so a
    cache never carries over from an earlier run of the same session."""
    eos = target.tokenizer.eos_token_id
    prop = make() if cache else None
    sums, steps = [], []
    for w in session.requests:
        p = prop if cache else make()
        ids = M.encode_prompt(target.tokenizer, w.prompt, w.chat)
        s, st = measure.run(target, p, ids, cfg, eos)
        sums.append(s)
        steps.append(st)
        if cache and hasattr(p, "remember"):
            p.remember()
    name = method or (sums[0].method if sums else "")
    return SessionRun(session.name, name, cache, sums, steps, [w.name for w in session.requests])


SessionContender = tuple[Callable[[], object | None], DecodeConfig, bool]   # (proposer factory, settings, cache)


@dataclass
class SessionMeasured:
    """One session contender against plain decoding over interleaved repeats (plain runs every request too)."""
    label: str
    runs: list[SessionRun]
    plains: list[SessionRun] = field(repr=False)
    same_as_plain: list[bool | None] = field(default_factory=list)  # per request, first repeat; None when sampling

    @property
    def ratios(self) -> list[float]:
        """Per repeat: whole-session tokens/s ÷ the same repeat's plain whole-session tokens/s."""
        return [r.tokens_per_s / p.tokens_per_s if p.tokens_per_s else 0.0 for r, p in zip(self.runs, self.plains)]

    @property
    def speedup(self) -> float:
        return measure.speedup_of(self.ratios) or 0.0

    @property
    def spread(self) -> float | None:
        return spread(self.ratios)

    def request_speedups(self) -> list[float]:
        """Per request: the median over repeats of its tokens/s ÷ plain's on the same request, same repeat."""
        n = len(self.runs[0].requests) if self.runs else 0
        return [median(r.requests[i].tokens_per_s / p.requests[i].tokens_per_s
                       for r, p in zip(self.runs, self.plains) if p.requests[i].tokens_per_s) or 0.0
                for i in range(n)]

    @property
    def typical(self) -> SessionRun:
        """The repeat whose ratio is the median (the lower one of two middles)."""
        ratios = self.ratios
        return self.runs[sorted(range(len(self.runs)), key=lambda i: ratios[i])[(len(self.runs) - 1) // 2]]

    def row(self) -> dict:
        """Totals in docs/metrics.md names (medians over repeats)."""
        return {"session": self.runs[0].session if self.runs else "", "label": self.label,
                "cache": self.runs[0].cache if self.runs else None,
                "tokens_per_pass": median(r.tokens_per_pass for r in self.runs),
                "mean_k": median(r.mean_k for r in self.runs),
                "draft_share": median(r.draft_s / r.wall_s if r.wall_s else 0.0 for r in self.runs),
                "tokens_per_s": median(r.tokens_per_s for r in self.runs),
                "plain_tokens_per_s": median(p.tokens_per_s for p in self.plains),
                "speedup": self.speedup, "spread": self.spread, "repeats": len(self.runs),
                "request_speedups": self.request_speedups(),
                "same_as_plain": list(self.same_as_plain)}


def session_runs(n_requests: int, n_contenders: int, repeats: int = 1) -> RunCount:
    """The decoding runs session_against_plain() makes: per repeat plain and every contender over every
    request; before them one short warm-up of plain and of every contender on the first request."""
    return RunCount(repeats * (1 + n_contenders) * n_requests, 1 + n_contenders)


def session_against_plain(target: LoadedModel, session: Session, contenders: dict[str, SessionContender],
                          plain_cfg: DecodeConfig, repeats: int = 1, progress=None
                          ) -> tuple[dict[str, SessionMeasured], list[SessionRun]]:
    """Every contender's whole session against plain decoding's, interleaved as measure.interleaved does:
    each repeat runs the plain session (every request) once and every contender's session once, in an order
    rotated per repeat (measure.one_repeat). Returns ({label: SessionMeasured}, the plain session runs)."""
    if repeats < 1:
        raise InputError("repeats must be >= 1")
    if not session.requests:
        raise InputError(f"session '{session.name}' has no requests")
    labels = list(contenders)
    order = [None, *labels]
    first = M.encode_prompt(target.tokenizer, session.requests[0].prompt, session.requests[0].chat)
    measure.warm_up(target, first, {x: (c[0], c[1]) for x, c in contenders.items()}, plain_cfg,
                    target.tokenizer.eos_token_id)
    total, done = repeats * len(order), [0]

    def run_one(x):
        if x is None:
            return run_session(target, session, lambda: None, plain_cfg, cache=False, method="plain")
        make, cfg, cache = contenders[x]
        return run_session(target, session, make, cfg, cache, method=x)

    runs: dict[str, list[SessionRun]] = {x: [] for x in labels}
    plains: list[SessionRun] = []
    for r in range(repeats):
        def tick(x, r=r):
            done[0] += 1
            if progress:
                progress(done[0] / total, f"{session.name} repeat {r + 1}/{repeats}: {'plain' if x is None else x}")
        got = measure.one_repeat(order, r, run_one, tick)
        plains.append(got[None])
        for x in labels:
            runs[x].append(got[x])
    out = {}
    for x in labels:
        greedy = contenders[x][1].sampling.greedy and plain_cfg.sampling.greedy
        same = [a.token_ids == b.token_ids if greedy else None
                for a, b in zip(runs[x][0].requests, plains[0].requests)]
        out[x] = SessionMeasured(x, runs[x], plains, same)
    return out, plains


def session_config(k: int, sampling: SamplingConfig, max_new_tokens: int, seed: int = 0) -> DecodeConfig:
    """A session request's settings (the same for every request)."""
    return _cfg(k, sampling, max_new_tokens, seed)
