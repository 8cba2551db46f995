"""k / n sweeps through the one decode loop: one method at every draft length k (and every n for lookup,
or every value of one of suffix's knobs), each against plain decoding in the same measure.interleaved
run; speedup = setting tokens/s ÷ the same repeat's plain tokens/s, median over repeats (docs/metrics.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from specviz.core.errors import InputError
from specviz.core.records import RunSummary
from specviz.core.sampling import SamplingConfig
from specviz.engine import measure, methods as M
from specviz.engine.comparisons import RunCount, decode_config
from specviz.engine.experiment import Setting, suffix_knobs
from specviz.engine.models import LoadedModel
from specviz.engine.workloads import Workload


def sweep_grid(method: str, ks: list[int], ns: list[int] | None) -> list[tuple[int, int | None]]:
    """The (k, n) settings sweep() measures: every k, and for lookup every n (3 when none is given)."""
    return list(dict.fromkeys((k, n) for k in ks for n in ((ns or [3]) if method == "lookup" else [None])))


def sweep_runs(method: str, ks: list[int], ns: list[int] | None, repeats: int = 1) -> RunCount:
    """The runs sweep() makes: warm-ups of plain and every setting, then per repeat plain once and every setting
    once."""
    per_round = 1 + len(sweep_grid(method, ks, ns))
    return RunCount(repeats * per_round, per_round)


@dataclass
class SweepPoint:
    """One setting of a sweep: where it sits on the sweep's axes, what ran, and its measured comparison against
    plain decoding (measure.Measured, the one measured type). Every number is the Measured's: the speedup its
    median over repeats, the summary, steps and plain run its typical repeat's."""
    k: int
    n: int | None               # lookup's n; a suffix sweep: the swept knob's value
    measured: measure.Measured = field(repr=False)
    axis: str = "n"             # what n holds: 'n', or a suffix knob (SUFFIX_KNOBS)
    setting: Setting | None = None  # what ran (Setting.of the proposer and DecodeConfig); a table row's label

    summary = property(lambda self: self.measured.summary)
    speedup = property(lambda self: self.measured.speedup)
    steps = property(lambda self: self.measured.steps)    # the typical repeat's step records (a recording's)
    plain = property(lambda self: self.measured.plain)    # the plain run of that repeat


def sweep_settings(method: str, ks: list[int], ns: list[int] | None, k_rule: str = "fixed") -> list[Setting]:
    """The Setting of each point sweep() measures, in its order: what a sweep's plan names before it runs."""
    if method == "recycle":   # k is the static tree's size; the decoder's k is the self-sized cap
        return [Setting("recycle", M.SELF_SIZED_CAP, knobs=(("nodes", k),)) for k in ks]
    return [replace(Setting.resolve(method, k, n, k_rule), k=k) for k, n in sweep_grid(method, ks, ns)]


def suffix_settings(ks: list[int], knob: str, values: list[float]) -> list[Setting]:
    """The Setting of each point suffix_sweep() measures, in its order."""
    base = Setting.resolve("suffix")
    return [replace(base, k=k, factor=v) if knob == "factor" else replace(base, k=k, knobs=suffix_knobs(**{knob: v}))
            for k in ks for v in values]


def _points(got: dict, contenders: dict, axis: str = "n") -> list[SweepPoint]:
    """A point per contender, with the Setting of the proposer and DecodeConfig it ran with."""
    return [SweepPoint(k, n, m, axis, Setting.of(contenders[(k, n)][0](), contenders[(k, n)][1]))
            for (k, n), m in got.items()]


def sweep(target: LoadedModel, workload: Workload, method: str, ks: list[int], ns: list[int] | None,
          sampling: SamplingConfig = SamplingConfig(), max_new_tokens: int = 32, seed: int = 0,
          drafter: LoadedModel | None = None, proposer_factory=None, progress=None, repeats: int = 1,
          k_rule: str = "fixed") -> tuple[list[SweepPoint], list[RunSummary]]:
    """Every k (and every n for lookup) through measure.interleaved; each point's speedup is the
    median over repeats of its tokens/s ÷ the same repeat's plain tokens/s. Returns (points, plain runs).
    Lookup is swept under the fixed-k rule (k tokens per match) unless k_rule says otherwise; for token recycling
    k is the static tree's size in nodes."""
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

    contenders = {(k, n): (factory(n), decode_config(k, sampling, max_new_tokens, seed)) for k, n in grid}
    if method == "recycle":          # k is the static tree's size (its depth follows from it)
        for k in ks:
            M.make_proposer("recycle", target, recycle=dict(nodes=k))         # a bad size fails before any run
        contenders = {(k, None): ((lambda k=k: M.make_proposer("recycle", target, recycle=dict(nodes=k))),
                                  decode_config(M.SELF_SIZED_CAP, sampling, max_new_tokens, seed)) for k in ks}
    got, plains = measure.interleaved(target, ids, contenders, decode_config(1, sampling, max_new_tokens, seed),
                                      repeats, target.tokenizer.eos_token_id, progress)
    return _points(got, contenders), [p for p, _ in plains]


# suffix's knobs a sweep can vary (make_proposer's suffix settings), each with the values it opens on
SUFFIX_KNOBS = {"max_depth": "depth cap", "factor": "spec factor", "min_prob": "minimum probability"}
SUFFIX_VALUES = {"max_depth": "8, 16, 24", "factor": "1, 2, 4, 8", "min_prob": "0.05, 0.1, 0.2, 0.4"}


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

    contenders = {(k, v): (factory(v), decode_config(k, sampling, max_new_tokens, seed)) for k in ks for v in values}
    got, plains = measure.interleaved(target, ids, contenders, decode_config(1, sampling, max_new_tokens, seed),
                                      repeats, target.tokenizer.eos_token_id, progress)
    return _points(got, contenders, knob), [p for p, _ in plains]
