"""Mismatched warping: what the output follows when the verifier is given p or q warped differently from how the
server samples. Pure tensors, no model.

The server wants the output to follow p_T: the target's logits at temperature T, then top-p (core/sampling.py
`logits_to_probs`). A draft x is drawn from q_draw; the verifier keeps it with min(1, p_test(x) / q_test(x)) and
on a rejection draws from norm(max(0, p_test − q_test)). The output follows p_T exactly when p_test = p_T and
q_test = q_draw (the one-function rule: both from the same settings). Otherwise it follows

    out(x) = q_draw(x)·min(1, p_test(x)/q_test(x)) + (1 − Σ_y q_draw(y)·min(1, p_test(y)/q_test(y)))·residual(x)

which `output` computes; `simulate` counts it through core/verify.py's own `verify`.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.core.errors import InputError, check_choice
from specviz.core.sampling import SamplingConfig, logits_to_probs
from specviz.core.verify import residual, verify

MATCHED = "matched: p and q warped alike"
Q_RAW = "q drawn at T, tested at T = 1"
P_RAW = "p tested at T = 1 (target left unwarped)"
TOPP_DRAFT = "top-p on the draft's draw only"
CASES = {
    MATCHED: "The drafter samples from q at T (and top-p); the verifier tests with that q and with p at T (and "
             "top-p). Lossless: the output follows the target's warped distribution.",
    Q_RAW: "The drafter samples at T, but the verifier is handed the drafter's raw softmax (T = 1): the ratio and "
           "the residual use a q the token was not drawn from.",
    P_RAW: "The verifier is handed the target's raw softmax (T = 1) instead of p at T: the rule is exact for the "
           "p it is given, so the output follows raw p, not the warped one the server promised.",
    TOPP_DRAFT: "The drafter samples with top-p, the verifier tests with the drafter's q without it (and p with "
                "top-p): tokens the drafter can never draw still hold q mass in the test.",
}


@dataclass
class Warped:
    target: torch.Tensor       # (V,) p_T: what the output should follow
    q_draw: torch.Tensor       # (V,) what the draft token is drawn from
    p_test: torch.Tensor       # (V,) the p the verifier is given
    q_test: torch.Tensor       # (V,) the q the verifier is given


def setup(zp: torch.Tensor, zq: torch.Tensor, temperature: float, top_p: float, case: str) -> Warped:
    """The four distributions of `case` from target logits zp and draft logits zq (V,)."""
    check_choice("case", case, CASES)
    if not 0.05 <= temperature <= 2.0:
        raise InputError(f"temperature must be between 0.05 and 2 here, got {temperature:g}")
    if not 0.0 < top_p <= 1.0:
        raise InputError(f"top-p must be above 0 and at most 1, got {top_p:g}")
    warped = SamplingConfig(temperature=temperature, top_p=top_p)
    raw = SamplingConfig(temperature=1.0)
    p_t, q_t = logits_to_probs(zp, warped), logits_to_probs(zq, warped)
    if case == MATCHED:
        return Warped(p_t, q_t, p_t, q_t)
    if case == Q_RAW:
        return Warped(p_t, q_t, p_t, logits_to_probs(zq, raw))
    if case == P_RAW:
        return Warped(p_t, q_t, logits_to_probs(zp, raw), q_t)
    return Warped(p_t, q_t, p_t, logits_to_probs(zq, SamplingConfig(temperature=temperature)))


def output(w: Warped) -> torch.Tensor:
    """What the emitted token follows, in closed form. (V,)"""
    ratio = torch.where(w.q_test > 0, w.p_test / w.q_test.clamp_min(1e-30), torch.ones_like(w.p_test))  # (V,)
    keep = w.q_draw * ratio.clamp(max=1.0)                                                          # (V,)
    return keep + (1.0 - keep.sum()) * residual(w.p_test, w.q_test)


def simulate(w: Warped, trials: int, seed: int = 0) -> torch.Tensor:
    """Counts (V,) of the emitted token over `trials` draws x ~ q_draw through core/verify.py's verify."""
    if trials < 1:
        raise InputError("the number of draws must be >= 1")
    gen = torch.Generator().manual_seed(seed)
    p_rows = torch.stack([w.p_test, w.p_test])                       # (2, V): p at the draft, then the bonus
    counts = torch.zeros(len(w.target))
    for _ in range(trials):
        x = torch.multinomial(w.q_draw, 1, generator=gen)            # (1,)
        v = verify(x, w.q_test.view(1, -1), p_rows, greedy=False, generator=gen)
        counts[int(x) if v.n_accepted else v.next_token] += 1
    return counts


def tv(a: torch.Tensor, b: torch.Tensor) -> float:
    return 0.5 * float((a - b).abs().sum())
