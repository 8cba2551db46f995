"""The bench's checks, pure: greedy equality / near-ties, the cost model, the independence check.

The cost model is specviz.core.costmodel's (the break-even calculator's), not a copy.

All definitions are docs/metrics.md's. Nothing here runs a model, so tests exercise it in milliseconds.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from specviz.core.costmodel import expected_tokens_per_pass, speedup_from_tau, v_at
from specviz.core.neartie import bf16_ulp


# -- greedy equality -----------------------------------------------------------------------------
@dataclass
class Equality:
    workload: str
    method: str
    dtype: str
    identical: bool
    position: int | None = None     # d: first differing new-token index
    method_token: int | None = None
    plain_token: int | None = None
    top1: float | None = None       # plain run's top logit at d
    gap: float | None = None        # plain run's top1 - top2 at d
    near_tie: bool | None = None
    ok: bool = True                 # float32: identical; bfloat16: identical or a near-tie
    note: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def compare_ids(workload: str, method: str, dtype: str, ids: list[int], plain_ids: list[int],
                top1: list[float], gap: list[float], exact: bool) -> Equality:
    """A method's greedy ids against plain's. exact=True (float32): any difference fails.

    Otherwise the first difference must sit on a near-tie of the plain run's logits (docs/metrics.md).
    One output being a strict prefix of the other (an EOS reached earlier) is a difference too:
    it is judged at the first position where only one run has a token.
    """
    n = min(len(ids), len(plain_ids))
    d = next((i for i in range(n) if ids[i] != plain_ids[i]), None)
    if d is None and len(ids) != len(plain_ids):
        d = n
    if d is None:
        return Equality(workload, method, dtype, identical=True)
    mt = ids[d] if d < len(ids) else None
    pt = plain_ids[d] if d < len(plain_ids) else None
    t = top1[d] if d < len(top1) else None
    g = gap[d] if d < len(gap) else None
    tie = bool(t is not None and g is not None and math.isfinite(g) and g <= 2 * bf16_ulp(t))
    ok = (not exact) and tie
    note = ("identical required (float32)" if exact else
            "near-tie: numerics" if tie else "NOT a near-tie: a bug")
    return Equality(workload, method, dtype, False, d, mt, pt, t, g, tie, ok, note)


# -- cost model (the formulas are specviz.core.costmodel's, the calculator's own) ------------------
@dataclass
class CostCheck:
    """docs/metrics.md's cost-model check, compared two ways that each put like beside like:
    end to end (the prediction plus the measured prefill, against the measured speedup: the target)
    and decode only (docs/metrics.md's formula as it stands, against the speedup with prefill left out)."""
    workload: str
    method: str
    tau: float            # measured tokens per pass
    k_bar: float          # mean drafted length per step
    c: float              # draft time per token / t1
    v: float              # v(k_bar), interpolated from the measured table
    predicted: float      # tau / (v + k_bar c): the decode phase only
    measured: float       # method tokens/s / plain tokens/s, end to end (medians of the timed repeats)
    alpha: float | None   # accepted / tested (the papers' alpha; never alpha-hat)
    tau_iid: float | None  # E[tau] from alpha under independence, at k-bar
    predicted_with_prefill: float | None = None  # the same model with the measured prefill time added
    measured_decode: float | None = None         # the measured speedup with both prefills left out
    draft_acceptance_rate: float | None = None   # alpha-hat, shown beside alpha, never fed into E[tau]
    per_position: list[float] | None = None      # a_1..a_m pooled over the repeats: flat = independent

    @property
    def error(self) -> float:
        """End to end: predicted (with prefill) / measured - 1 (0.10 = the model promised 10% more)."""
        pred = self.predicted if self.predicted_with_prefill is None else self.predicted_with_prefill
        return pred / self.measured - 1.0 if self.measured else float("nan")

    @property
    def error_decode(self) -> float | None:
        """Decode only: tau / (v + k_bar c) against the measured decode-phase speedup."""
        return self.predicted / self.measured_decode - 1.0 if self.measured_decode else None

    def as_dict(self) -> dict:
        d = asdict(self)
        d["error"], d["error_decode"] = self.error, self.error_decode
        return d


def with_prefill(tau: float, k_bar: float, c: float, v: float, tokens: float, prefill_s: float,
                 t1: float) -> float:
    """End-to-end version of the cost model: (P + N t1) / (P + N/tau (v + k_bar c) t1)."""
    return (prefill_s + tokens * t1) / (prefill_s + tokens / tau * (v + k_bar * c) * t1)


def cost_check(workload: str, method: str, tau: float, k_bar: float, c: float,
               v_table: dict[int, float], measured: float, alpha: float | None,
               tokens: float | None = None, prefill_s: float | None = None, t1: float | None = None,
               measured_decode: float | None = None, draft_acceptance_rate: float | None = None,
               per_position: list[float] | None = None) -> CostCheck:
    v = v_at(v_table, k_bar)
    pre = (with_prefill(tau, k_bar, c, v, tokens, prefill_s, t1)
           if tokens and prefill_s is not None and t1 else None)
    tau_iid = None if alpha is None else expected_tokens_per_pass(alpha, k_bar)
    return CostCheck(workload, method, tau, k_bar, c, v, speedup_from_tau(tau, k_bar, c, v_table),
                     measured, alpha, tau_iid, pre, measured_decode, draft_acceptance_rate, per_position)
