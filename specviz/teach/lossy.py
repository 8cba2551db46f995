"""Lossy acceptance rules, labelled: what two rules that engines and papers offer do to the output distribution.

One drafted token x ~ q, tested by a rule; the emitted token's distribution in closed form, the chance a draft is
kept, and draws that check both. Neither rule is the exact one (core/verify.py); both keep more drafts, and the
output then follows something other than p. Sources:

- Medusa's typical acceptance (Cai et al. 2024, arXiv 2401.10774, "typical acceptance"; FasterDecoding/Medusa
  medusa/model/utils.py `evaluate_posterior`): keep x when p(x) > min(ε, δ·exp(−H(p))), H the entropy of p (natural
  log); defaults ε = 0.09 (posterior_threshold), δ = 0.3 (posterior_alpha). When x is not kept, the next token is the
  target's argmax (`generate_candidates` takes argmax of the target's logits).
- SGLang's accept thresholds (sgl-kernel/csrc/speculative/speculative_sampling.cuh,
  `TreeSpeculativeSamplingTargetOnly`; server flags --speculative-accept-threshold-single and
  --speculative-accept-threshold-acc, both 1.0 by default): keep x when u ≤ p(x) / t_acc or p(x) ≥ t_single,
  u ~ U(0, 1); on a rejection draw from relu(p − p(x)·onehot(x)), i.e. p without x. The draft's q is not used. At
  the defaults this is "keep x with probability p(x)", which is exact for any way of choosing x; below 1 it is lossy.
"""
from __future__ import annotations

import math

import torch

from specviz.core.costmodel import expected_tokens_per_pass
from specviz.core.errors import InputError
from specviz.core.verify import acceptance_probability

TYPICAL, THRESHOLD = "Medusa typical acceptance", "SGLang accept thresholds"
RULES = {
    TYPICAL: "LOSSY: keep x when p(x) > min(ε, δ·exp(−H(p))); otherwise emit the target's argmax "
             "(Medusa paper, arXiv 2401.10774; FasterDecoding/Medusa evaluate_posterior)",
    THRESHOLD: "LOSSY below 1: keep x when u ≤ p(x)/t_acc or p(x) ≥ t_single; otherwise draw from p without x "
               "(SGLang sgl-kernel speculative_sampling.cuh; --speculative-accept-threshold-single/-acc)",
}
# The lab's starting values: Medusa's own defaults; for SGLang values below its defaults (1.0 and 1.0, which are exact)
DEFAULTS = {TYPICAL: {"eps": 0.09, "delta": 0.3}, THRESHOLD: {"single": 0.3, "acc": 0.5}}


def typical_threshold(p: torch.Tensor, eps: float, delta: float) -> float:
    """min(ε, δ·exp(−H(p))), H in nats: a confident p (low entropy) gets a threshold near ε, a flat one a lower one."""
    h = -float((p * torch.log(p.clamp_min(1e-30))).sum())
    return min(eps, delta * math.exp(-h))


def keep_chance(p: torch.Tensor, rule: str, params: dict) -> torch.Tensor:
    """(V,) P(a drafted x is kept | x) under the rule."""
    if rule == TYPICAL:
        return (p > typical_threshold(p, params["eps"], params["delta"])).to(p.dtype)
    if rule == THRESHOLD:
        single, acc = params["single"], max(params["acc"], 1e-9)
        return torch.where(p >= single, torch.ones_like(p), (p / acc).clamp(max=1.0))
    raise InputError(f"unknown lossy rule '{rule}' (choose from: {', '.join(RULES)})")


def _without(p: torch.Tensor, x: int) -> torch.Tensor:
    r = p.clone()
    r[x] = 0.0
    return r / r.sum() if r.sum() > 0 else p.clone()


def fallback(p: torch.Tensor, x: int, rule: str) -> torch.Tensor:
    """(V,) what a rejected draft x is replaced by."""
    if rule == TYPICAL:
        return torch.nn.functional.one_hot(p.argmax(), len(p)).to(p.dtype)
    return _without(p, x)


def output(p: torch.Tensor, q: torch.Tensor, rule: str, params: dict) -> torch.Tensor:
    """(V,) the emitted token's distribution: Σ_x q(x)·[a(x)·onehot(x) + (1 − a(x))·fallback(x)]."""
    a = keep_chance(p, rule, params)                                  # (V,)
    out = q * a                                                       # kept drafts
    for x in range(len(p)):
        if q[x] > 0 and a[x] < 1:
            out = out + q[x] * (1 - a[x]) * fallback(p, x, rule)
    return out


def summary(p: torch.Tensor, q: torch.Tensor, rule: str, params: dict, k: int = 4) -> dict:
    """The rule against the exact one: drift (TV from p), share of drafts kept, and E[τ] at k if every position
    kept drafts at that rate (the cost model's law)."""
    kept = float((q * keep_chance(p, rule, params)).sum())
    exact = float(acceptance_probability(p, q))
    return {"drift": 0.5 * float((output(p, q, rule, params) - p).abs().sum()), "kept": kept, "kept_exact": exact,
            "tau": expected_tokens_per_pass(kept, k), "tau_exact": expected_tokens_per_pass(exact, k), "k": k}


def simulate(p: torch.Tensor, q: torch.Tensor, rule: str, params: dict, trials: int, seed: int = 0
             ) -> tuple[torch.Tensor, int]:
    """`trials` draws: x ~ q, the rule's test, the fallback on a rejection. Returns (counts (V,), kept)."""
    if trials < 1:
        raise InputError("the number of trials must be >= 1")
    gen = torch.Generator().manual_seed(seed)
    a = keep_chance(p, rule, params)                                  # (V,)
    xs = torch.multinomial(q, trials, replacement=True, generator=gen)   # (trials,)
    u = torch.rand(trials, generator=gen)                                 # (trials,)
    kept_mask = u < a[xs]                                                 # (trials,)
    counts = torch.zeros(len(p))
    counts.index_add_(0, xs[kept_mask], torch.ones(int(kept_mask.sum())))
    for x in xs[~kept_mask].unique().tolist():                            # each rejected x: its own fallback
        n = int((xs[~kept_mask] == x).sum())
        draws = torch.multinomial(fallback(p, x, rule), n, replacement=True, generator=gen)   # (n,)
        counts.index_add_(0, draws, torch.ones(n))
    return counts, int(kept_mask.sum())
