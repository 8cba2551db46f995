"""Measured comparisons through the one decode loop: methods side by side and recommendations (k / n
sweeps: engine/sweeps.py; multi-request sessions: engine/sessions.py; the lessons that run comparisons,
greedy against sampled and the checkpoint swap: teach/loops.py and teach/checkpoints.py).

Everything here is measured on the spot through specviz.engine.measure, the one measuring path:
plain decoding interleaved with the methods (same prompt, same max new tokens, same decoding mode),
speedup = method tokens/s ÷ plain tokens/s of the same repeat, end to end, median over repeats
(docs/metrics.md). Long loops report progress through `progress(fraction, text)`.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from specviz.core.errors import InputError
from specviz.core.records import RunSummary, StepRecord
from specviz.core.repetition import repetition
from specviz.core.sampling import SamplingConfig
from specviz.core.stats import median, speedup, spread
from specviz.engine import measure, methods as M
from specviz.engine.decode import DecodeConfig
from specviz.engine.experiment import Setting
from specviz.engine.models import LoadedModel
from specviz.engine.workloads import Workload

SPEEDUP_MARGIN = 1.05  # a method must beat plain by 5% to be recommended (these CPUs are noisy)
WARM_UP_TOKENS = measure.WARM_UP_TOKENS   # measure.interleaved's untimed runs before the timed ones


@dataclass
class Run:
    """One run of a comparison: one setting on one workload in one repeat, against that repeat's plain run
    (measure.Repeat; plain decoding's own row is its run beside itself, ratio 1)."""
    workload: str
    kind: str
    setting: Setting            # what ran (Setting.of the proposer and DecodeConfig)
    repeat: int
    run: measure.Repeat = field(repr=False)

    method = property(lambda self: self.setting.method)
    k = property(lambda self: 0 if self.setting.method == "plain" else self.setting.k)
    n = property(lambda self: self.setting.n)     # lookup's n (None for other methods)
    summary = property(lambda self: self.run.summary)
    steps = property(lambda self: self.run.steps)
    plain = property(lambda self: self.run.plain)  # the plain run of the same repeat

    @property
    def label(self) -> str:
        """The run's settings in a table cell or a chart's axis: Setting.describe(short=True)."""
        return self.setting.describe(short=True)

    @property
    def speedup(self) -> float:
        """This repeat's ratio, method tokens/s ÷ the same repeat's plain tokens/s (measure.Repeat.ratio)."""
        return self.run.ratio


def setting_of(method: str, k: int, n: int | None, k_rule: str | None = None) -> Setting:
    """The Setting of a run known by its method, k and n only (a recording, a test): lookup at its cap drafted by
    the match rule, below it k at a time; every other method at this k."""
    if method == "plain":
        return Setting("plain")
    if M.REGISTRY.get(method) is None:
        return Setting(method, k, n)
    if method == "lookup":
        rule = k_rule or ("match" if k == M.SELF_SIZED_CAP else "fixed")
        return replace(Setting.resolve(method, k, n, rule), k=k)
    return replace(Setting.resolve(method, k, n), k=k)


def run_one(target: LoadedModel, workload: Workload, method: str, k: int, n: int | None,
            sampling: SamplingConfig, max_new_tokens: int, seed: int = 0,
            drafter: LoadedModel | None = None, proposer=None, k_rule: str = M.DEFAULT_K_RULE
            ) -> tuple[RunSummary, list[StepRecord]]:
    """One measured run of `method` on `workload` at this k (proposer may be given ready-made)."""
    ids = M.encode_prompt(target.tokenizer, workload.prompt, workload.chat)
    prop = proposer if proposer is not None else M.make_proposer(method, target, n=n, drafter=drafter, k_rule=k_rule)
    return measure.run(target, prop, ids, decode_config(k, sampling, max_new_tokens, seed),
                       target.tokenizer.eos_token_id)


def decode_config(k: int, sampling: SamplingConfig, max_new_tokens: int, seed: int) -> DecodeConfig:
    """The DecodeConfig of a measured comparison, sweep or session run (no per-step recording)."""
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
        contenders = {(m, k): (factory(m), decode_config(k, sampling, max_new_tokens, seed))
                      for m, k in compare_settings(methods, ks, k_rule)}
        sub = (lambda f, t, wi=wi, w=w: progress((wi + f) / len(workloads), f"{w.name}: {t}")) if progress else None
        got, plains = measure.interleaved(target, ids, contenders, decode_config(1, sampling, max_new_tokens, seed),
                                          repeats, target.tokenizer.eos_token_id, sub)
        for r, (plain, psteps) in enumerate(plains):
            out.append(Run(w.name, w.kind, Setting("plain"), r, measure.Repeat(plain, psteps, plain, psteps)))
            out += [Run(w.name, w.kind, Setting.of(built[m], contenders[(m, k)][1]), r, meas.repeats[r])
                    for (m, k), meas in got.items()]
    return out


def for_calculator(runs: list[Run]) -> dict[str, tuple[Run, list[StepRecord], float]]:
    """Per method, what a comparison hands the break-even calculator: of the last (workload, k) it compared, the
    repeat whose ratio is the median (the lower of two middles), that repeat's plain steps (t₁, c) and the
    median speedup over the repeats, the figure table() shows for that row."""
    groups: dict[str, dict[tuple, list[Run]]] = {}
    for r in runs:
        if r.method != "plain":
            groups.setdefault(r.method, {}).setdefault((r.workload, r.k), []).append(r)
    plains = {(r.workload, r.repeat): r for r in runs if r.method == "plain"}
    out = {}
    for m, by in groups.items():
        rs = list(by.values())[-1]
        typical = sorted(rs, key=lambda r: r.speedup)[(len(rs) - 1) // 2]
        out[m] = (typical, plains[(typical.workload, typical.repeat)].steps,
                  speedup((r.summary.tokens_per_s, r.plain.tokens_per_s) for r in rs))
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
            "setting": rs[0].label,            # the run's own settings in words (Setting.describe(short=True))
            "alpha": median(x.alpha for x in s),
            "draft_acceptance_rate": median(x.draft_acceptance_rate for x in s),
            "tokens_per_pass": median(x.tokens_per_pass for x in s),
            "tokens_per_s": median(x.tokens_per_s for x in s),
            "speedup": speedup((r.summary.tokens_per_s, r.plain.tokens_per_s) for r in rs),
            "spread": spread(ratios),          # of the per-repeat ratios; None with one repeat
            "repeats": len(rs),
            "target_passes": median(x.target_passes for x in s),
            "draft_s": median(x.draft_s for x in s),
            "verify_s": median(x.verify_s for x in s),
            "wall_s": median(x.wall_s for x in s),
            "repetition": median(repetition(x.token_ids) for x in s),
        })
    return rows


def one_repeat(runs: list[Run], workload: str) -> list[Run]:
    """The runs of one workload's first repeat: its plain run and every (method, k) once (the timeline)."""
    return [r for r in runs if r.workload == workload and r.repeat == 0]


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
    setting: str = ""    # the chosen run's settings in words (Run.label); '' for plain

    def text(self) -> str:
        if self.method != "plain" and measure.too_noisy(self.speedup, self.spread):
            return (f"**{self.kind}**: {self.setting} measured fastest, but its speedup is "
                    f"{measure.TOO_NOISY} ({self.speedup:.2f}× with a spread of {self.spread:.2f} between "
                    "repeats). Add repeats or quiet the machine.")
        if self.method == "plain" and self.speedup >= SPEEDUP_MARGIN:
            return (f"**{self.kind}**: keep speculation off — the fastest, {self.runner_up}, committed "
                    f"{self.tokens_per_pass:.2f} tokens per pass, i.e. it saved no target pass; its edge is "
                    f"timing noise ({self.workloads} workload(s)).")
        if self.method == "plain":
            return (f"**{self.kind}**: keep speculation off — no measured method beat plain decoding by "
                    f"{SPEEDUP_MARGIN - 1:.0%} (best: {self.runner_up}) over {self.workloads} workload(s).")
        return (f"**{self.kind}**: use **{self.setting}** — measured "
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
        label = lambda s: f"{cands[s[2]][0]['setting']} ({s[0]:.2f}×)"  # noqa: E731
        if best[0] < SPEEDUP_MARGIN or best[1] <= 1.0:  # a "win" that saved no pass is timing noise
            out[kind] = Recommendation(kind, "plain", None, best[0], best[1], n_w, label(best))
        else:
            out[kind] = Recommendation(kind, best[2][0], best[2][1], best[0], best[1], n_w,
                                       label(second) if second else None,
                                       median(x.get("spread") for x in cands[best[2]]), cands[best[2]][0]["setting"])
    return out
