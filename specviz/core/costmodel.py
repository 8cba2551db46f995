"""The cost model (Leviathan et al. 2023), pure Python, no model: the calculator's formulas, which
the bench's checks use too. Definitions: docs/metrics.md.

    alpha  chance a tested draft is kept (each position accepted independently with probability alpha);
           from a run: accepted / tested. Never the draft acceptance rate alpha-hat = accepted / drafted.
    k      draft length; k = 0 is plain decoding: speedup exactly 1, whatever v is
    c      cost of drafting one token, relative to one plain target decode step t1
    v(k)   cost of one verify pass over k+1 positions, relative to t1 (v(0) = 1 by definition)
    E[tau] = (1 - alpha^(k+1)) / (1 - alpha)          expected tokens per target pass
    speedup = E[tau] / (v(k) + k*c)
    tau = 1 + alpha-hat * k-bar                         an identity of every run (not a model)

`CostCheck` is the one record of a measured run checked against the model: the cost-model check (measured
tau into the speedup formula vs the measured speedup) and the independence check (E[tau] from alpha vs
the measured tau, beside the per-position acceptance a_i). `run_checks` fills it from one run (the
calculator), `cost_check` from the bench's medians of timed repeats, end to end (`with_prefill`) and
decode only. `passes_speedup` prices a run pass by pass (the copy ceilings, core/copybound.py).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from specviz.core.stats import median, ratio


def interpolate_v(table: dict[int, float], k: float) -> float:
    """v at any k from a measured table (linear between points, flat outside; v(0) = 1)."""
    pts = sorted({0: 1.0, **table}.items())
    if k <= pts[0][0]:
        return pts[0][1]
    for (k0, v0), (k1, v1) in zip(pts, pts[1:]):
        if k <= k1:
            return v0 + (v1 - v0) * (k - k0) / (k1 - k0)
    return pts[-1][1]


def draft_cost(steps: list, t1: float) -> float:
    """c: median drafting time per drafted token over steps that drafted, divided by t1."""
    per = [s.draft_s / s.n_drafted for s in steps if s.n_drafted]
    return median(per) / t1 if per and t1 > 0 else 0.0


def plain_step_time(steps: list) -> float:
    """t1 from a plain run's records: median verify time of its one-token passes."""
    return median(s.verify_s for s in steps if s.n_drafted == 0) or 0.0


VCost = float | dict | Callable[[float], float]  # a constant, a measured {k: v(k)} table, or a function


def v_at(v: VCost, k: float) -> float:
    """v(k) from a constant, a measured table (interpolated) or a function; v(0) = 1 always (k = 0 is
    a plain step, the unit every cost is measured in)."""
    if k == 0:
        return 1.0
    if callable(v):
        return float(v(k))
    if isinstance(v, dict):
        return interpolate_v({int(a): float(b) for a, b in v.items()}, k)
    return float(v)


def mean_v(drafted: Sequence[int], v: VCost) -> float:
    """v̄: the mean of v(k_i) over a run's passes, k_i the drafts each pass verified (a pass that drafted nothing is
    a plain step, v(0) = 1). For a fixed k it is v(k); for a method that sizes its drafts (lookup drafts nothing on
    most passes of novel text and 24 on a long copy) it is what the passes cost, where v(k̄) of the mean k̄ is not:
    v rises steeply from 0 to 1 draft and slowly after, so v(k̄) prices such a run's passes too high. 1.0 without
    a pass."""
    return sum(v_at(v, k) for k in drafted) / len(drafted) if drafted else 1.0


def expected_tokens_per_pass(alpha: float, k: float) -> float:
    """E[tau] = 1 + alpha + ... + alpha^k = (1 - alpha^(k+1)) / (1 - alpha); k+1 at alpha = 1."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k}")
    if 1.0 - alpha < 1e-9:
        return k + 1.0
    return (1.0 - alpha ** (k + 1)) / (1.0 - alpha)


def step_cost(k: float, c: float, v: VCost) -> float:
    """Cost of one speculative step in plain steps: v(k) + k*c."""
    if c < 0:
        raise ValueError(f"c must be >= 0, got {c}")
    cost = v_at(v, k) + k * c
    if cost <= 0:
        raise ValueError(f"v(k) + k*c must be > 0, got {cost}")
    return cost


def speedup(alpha: float, k: float, c: float, v: VCost) -> float:
    """Predicted speedup over plain decoding: E[tau] / (v(k) + k*c); exactly 1.0 at k = 0."""
    if k == 0:
        return 1.0
    return expected_tokens_per_pass(alpha, k) / step_cost(k, c, v)


def tau_identity(draft_acceptance_rate: float | None, k_bar: float) -> float:
    """tau = 1 + alpha-hat * k-bar: every step emits its accepted drafts plus one token, so this holds
    exactly for any run whose steps were not cut short by EOS or max_new_tokens (docs/metrics.md).
    It is why E[tau](alpha-hat) says nothing about independence."""
    return 1.0 + (draft_acceptance_rate or 0.0) * k_bar


def speedup_from_tau(tau: float, k_bar: float, c: float, v: VCost) -> float:
    """The cost model fed a measured tau and mean drafted length k-bar: tau / (v(k-bar) + k-bar*c)."""
    return tau / step_cost(k_bar, c, v)


def tau_needed(target: float, k_bar: float, c: float, v: VCost) -> float:
    """Tokens per pass a method needs for `target` × plain at its measured costs: target · (v + k̄·c), v the passes'
    mean cost v̄ (or v(k̄) from a table)."""
    return target * step_cost(k_bar, c, v)


def alpha_for_tau(tau: float, k: float, tol: float = 1e-9) -> float | None:
    """The per-position alpha whose E[tau] at draft length k equals tau (the inverse of
    expected_tokens_per_pass); 0.0 when tau <= 1, None when tau > k + 1 (no alpha reaches it)."""
    if tau <= 1.0:
        return 0.0
    if tau > k + 1.0 + tol:
        return None
    lo, hi = 0.0, 1.0
    while hi - lo > tol:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expected_tokens_per_pass(mid, k) < tau else (lo, mid)
    return (lo + hi) / 2


def breakeven_alpha(k: int, c: float, v: VCost, tol: float = 1e-9) -> float | None:
    """The alpha at which speedup = 1 for this k, c, v (0.0 if it always pays, None if it never does).

    E[tau] rises from 1 (alpha = 0) to k+1 (alpha = 1), so bisection finds the one crossing.
    k = 0 is plain decoding: never faster, never slower, so there is no crossing (None).
    """
    if k == 0:
        return None
    cost = step_cost(k, c, v)
    return None if cost >= k + 1.0 else alpha_for_tau(cost, k, tol)   # the alpha whose E[tau] pays the step


@dataclass(frozen=True)
class LayerParams:
    """Parameters one target pass reads, by part: each decoder layer's, and the output layer's (with the final
    norm). A tied input embedding is the output layer and counts once; an untied one is read one row per token
    and is left out (`other`)."""
    layers: tuple[int, ...]
    head: int
    other: int = 0


def truncation_cost(params: LayerParams, used: int) -> float:
    """c of self-speculation with the target's first `used` layers plus its output layer, priced by the weights a
    pass reads: (first `used` layers + output layer) ÷ (every layer + output layer). Decode at batch 1 is bound
    by reading weights, so this is the share of a plain step one draft pass costs (before per-call overheads)."""
    if not 0 <= used <= len(params.layers):
        raise ValueError(f"used must be 0..{len(params.layers)}, got {used}")
    return (sum(params.layers[:used]) + params.head) / (sum(params.layers) + params.head)


def best_k(alpha: float, c: float, v: VCost, k_max: int = 16) -> tuple[int, float]:
    """(k, speedup) maximising the predicted speedup over k = 0..k_max; k = 0 means don't speculate."""
    best = (0, 1.0)  # plain decoding, whatever v is
    for k in range(1, k_max + 1):
        s = speedup(alpha, k, c, v)
        if s > best[1] + 1e-12:
            best = (k, s)
    return best


# -- the checks of a measured run against the model: the calculator's and the bench's -------------------
@dataclass
class CostCheck:
    """docs/metrics.md's two checks of one measured method, one record for the calculator (one run, `run_checks`)
    and the bench (medians over timed repeats on one workload, `cost_check`).

    Cost-model check: the measured τ fed into τ ÷ (v̄ + k̄·c) (v̄: mean_v) against the measured speedup, end to end (the
    prediction plus the measured prefill, when it is known, against the measured speedup) and decode only
    (the formula as it stands, against the speedup with prefill left out). Independence check: E[τ] from α
    against the measured τ, beside the per-position acceptance a_i."""
    method: str
    tau: float                   # measured tokens per pass
    k_bar: float                 # mean drafted length per step
    alpha: float | None          # accepted / tested (what the formula takes; never alpha-hat)
    draft_acceptance_rate: float | None  # alpha-hat = accepted / drafted (shown beside, never fed in)
    per_position: list[float] | None     # a_1..a_m: flat = independent, rising = bursty
    c: float | None              # draft time per token / t1 (needs the plain run's t1)
    v: float | None              # v̄: mean of v(k_i) over the passes, from the table in use (mean_v)
    predicted: float | None      # tau / (v̄ + k_bar c): the decode phase only
    measured: float | None       # method tokens/s / plain tokens/s, end to end (the median over repeats)
    tau_iid: float | None        # E[tau] from alpha under independence
    workload: str = ""           # the bench's workload ('' for the calculator's run)
    k: int | None = None         # the run's k setting
    t1: float | None = None      # seconds of one plain decode step (from the plain run)
    predicted_with_prefill: float | None = None  # the same model with the measured prefill time added
    measured_decode: float | None = None         # the measured speedup with both prefills left out

    @property
    def error(self) -> float | None:
        """End to end: predicted (with prefill, when known) / measured - 1 (0.10 = the model promised 10% more)."""
        pred = self.predicted if self.predicted_with_prefill is None else self.predicted_with_prefill
        return pred / self.measured - 1.0 if pred is not None and self.measured else None

    @property
    def error_decode(self) -> float | None:
        """Decode only: tau / (v + k_bar c) against the measured decode-phase speedup."""
        return self.predicted / self.measured_decode - 1.0 if self.predicted is not None and self.measured_decode \
            else None

    @property
    def independence_gap(self) -> float | None:
        """(E[tau] from alpha - measured tau) / measured tau."""
        return self.tau_iid / self.tau - 1.0 if self.tau_iid is not None and self.tau > 0 else None

    def as_dict(self) -> dict:
        d = asdict(self)
        d["error"], d["error_decode"] = self.error, self.error_decode
        return d


def run_v(steps: list, t1: float) -> float | None:
    """The run's own verify cost per pass in plain steps: mean verify time of its passes ÷ t1, what v̄ stands for
    in tau / (v̄ + k̄·c) (a mean over the passes, as v̄ is), read off the run rather than from passcost.measure_v's
    table. A median would be a plain step for a run that drafts on few passes."""
    return (sum(s.verify_s for s in steps) / len(steps) / t1) if steps and t1 else None


def gap_terms(ch: CostCheck, summary, steps) -> dict | None:
    """Where a cost-model miss comes from: the prediction redone with the run's own verify cost (run_v) in
    place of the v setting, and the share of the run's wall time spent outside drafting and verifying
    (prefill, Python between passes, recording). None when the check could not run."""
    if ch.predicted is None or ch.measured is None or not ch.t1:
        return None
    v_run = run_v(steps, ch.t1)
    pred_run = ch.tau / (v_run + ch.k_bar * ch.c) if v_run else None
    outside = 1 - (summary.draft_s + summary.verify_s) / summary.wall_s if summary.wall_s > 0 else None
    return {"v_used": ch.v, "v_run": v_run, "predicted_with_v_run": pred_run,
            "gap_with_v_run": (pred_run / ch.measured - 1) if pred_run else None,
            "outside_share": outside, "prefill_share": summary.prefill_s / summary.wall_s if summary.wall_s else None}


def run_checks(method: str, summary, steps, plain_summary=None, plain_steps=None,
               v: VCost | None = None, k: int | None = None, measured_speedup: float | None = None) -> CostCheck:
    """Everything the calculator fills from one measured run (records.RunSummary / StepRecord).

    t1 comes from the plain run's steps (plain_step_time, its one definition); measured_speedup: the speedup
    the page showed for this run when it was measured over several repeats (the median of the per-repeat
    ratios, engine/measure.py); without it, this run's tokens/s over its plain run's. E[tau] from alpha is
    averaged over each step's own draft length."""
    alpha = summary.alpha
    t1 = (plain_step_time(plain_steps) or None) if plain_steps else None
    c = draft_cost(steps, t1) if (t1 and any(s.n_drafted for s in steps)) else None
    measured = measured_speedup
    if measured is None and plain_summary is not None and plain_summary.tokens_per_s > 0:
        measured = ratio(summary.tokens_per_s, plain_summary.tokens_per_s)
    v_bar = mean_v([s.n_drafted for s in steps], v) if v is not None else None
    predicted = (speedup_from_tau(summary.tokens_per_pass, summary.mean_k, c, v_bar)
                 if (v_bar is not None and c is not None) else None)
    tau_ind = None
    if alpha is not None and steps:
        tau_ind = sum(expected_tokens_per_pass(alpha, s.n_drafted) for s in steps) / len(steps)
    return CostCheck(method, summary.tokens_per_pass, summary.mean_k, alpha, summary.draft_acceptance_rate,
                     list(summary.per_position_acceptance), c, v_bar, predicted, measured, tau_ind, k=k, t1=t1)


def with_prefill(tau: float, k_bar: float, c: float, v: float, tokens: float, prefill_s: float,
                 t1: float) -> float:
    """End-to-end version of the cost model: (P + N t1) / (P + N/tau (v + k_bar c) t1), P the prefill time,
    N the new tokens (the decode phase costs N/tau steps of step_cost plain steps each)."""
    return (prefill_s + tokens * t1) / (prefill_s + tokens / tau * step_cost(k_bar, c, v) * t1)


def cost_check(workload: str, method: str, tau: float, k_bar: float, c: float,
               v_table: dict[int, float], measured: float, alpha: float | None,
               tokens: float | None = None, prefill_s: float | None = None, t1: float | None = None,
               measured_decode: float | None = None, draft_acceptance_rate: float | None = None,
               per_position: list[float] | None = None, v_bar: float | None = None) -> CostCheck:
    """The bench's check of one method on one workload, from medians over its timed repeats: E[tau] from alpha
    at k_bar, and the end-to-end prediction when the tokens, the prefill and t1 are given. v_bar: the median over
    the repeats of each one's mean_v (what its passes cost); without it, v(k_bar)."""
    v = v_at(v_table, k_bar) if v_bar is None else v_bar
    pre = (with_prefill(tau, k_bar, c, v, tokens, prefill_s, t1)
           if tokens and prefill_s is not None and t1 else None)
    tau_iid = None if alpha is None else expected_tokens_per_pass(alpha, k_bar)
    return CostCheck(method, tau, k_bar, alpha, draft_acceptance_rate, per_position, c, v,
                     speedup_from_tau(tau, k_bar, c, v), measured, tau_iid, workload=workload, t1=t1,
                     predicted_with_prefill=pre, measured_decode=measured_decode)


def passes_speedup(tokens: int, drafted: Sequence[int], v: VCost, c: float = 0.0) -> float | None:
    """The cost model's decode-only speedup of a run known pass by pass: tokens ÷ Σ (v(drafted) + drafted·c), in
    plain steps (a pass that drafted nothing costs 1, a plain step). A copying rule's replay (core/copybound.py)
    and the bench's same-text rows price their passes with it; None without a pass."""
    cost = sum(step_cost(n, c, v) for n in drafted)
    return tokens / cost if cost else None


def calculator_k(method: str, k: int | None, k_bar: float, tau: float, speedup: float | None, tree: bool,
                 self_sized: bool, k_max: int = 16) -> tuple[int | None, str]:
    """What a measured run hands the chain law's k (the calculator takes 1 … k_max), and a sentence when it is
    not the run's own k: a method that sizes its own drafts (k is only its ceiling, up to 24) gives its mean
    draft length k̄, rounded into 1 … k_max; a tree gives None: the chain law describes one chain of k drafts,
    not a tree of alternatives, so the sentence says so and quotes the tree's own figures instead."""
    x = "" if speedup is None else f", measured speedup {speedup:.2f}×"
    if tree:
        return None, (f"{method} drafts a tree: the chain law E[τ] = (1 − α^(k+1)) ÷ (1 − α) does not apply to it, "
                      f"so α and k were left as they were. Its own figures: τ = {tau:.2f} tokens per pass from "
                      f"k̄ = {k_bar:.1f} drafted nodes per pass{x}.")
    if k is not None and 1 <= k <= k_max and not self_sized:
        return int(k), ""
    got = min(k_max, max(1, round(k_bar)))
    why = "sizes its own drafts" if self_sized else f"ran at k = {k}, beyond the calculator's {k_max}"
    return got, (f"{method} {why}: the calculator takes its mean draft length k̄ = {k_bar:.2f}, rounded to k = {got}"
                 + (f" (k̄ is beyond {k_max})" if round(k_bar) > k_max else "") + ".")
