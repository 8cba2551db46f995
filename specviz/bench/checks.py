"""The bench's checks, pure: greedy equality / near-ties. The cost-model and independence checks are
specviz.core.costmodel's (cost_check, CostCheck), the break-even calculator's own formulas.

All definitions are docs/metrics.md's. Nothing here runs a model, so tests exercise it in milliseconds.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

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
