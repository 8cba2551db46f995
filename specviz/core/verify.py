"""The lossless acceptance rule (Leviathan et al. 2023; Chen et al. 2023). Pure tensors, no model.

Names follow the papers: p = target distribution, q = draft distribution.
For each drafted token x_i, in order:
    accept with probability min(1, p_i(x_i) / q_i(x_i));
    at the first rejection, sample the correction from norm(max(0, p_i - q_i)) and stop;
    if all k are accepted, sample a bonus token from p_{k+1}.
The emitted tokens then follow p exactly, whatever q is. At temperature 0 (one-hot p and q)
this is "accept while the draft equals the target's argmax".
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.core.sampling import sample


@dataclass
class Verdict:
    n_accepted: int            # accepted draft tokens (a prefix of the draft)
    next_token: int            # the correction (after a rejection) or the bonus (all accepted)
    origin: str                # "correction" | "bonus"
    ratios: list[float]        # p(x_i) / q(x_i) for each drafted position that was tested
    draws: list[float | None]  # the uniform r_i tested against min(1, ratio); None when greedy


def residual(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """norm(max(0, p - q)) over the last dim; falls back to p where p <= q everywhere."""
    r = (p - q).clamp_min(0.0)  # (..., V)
    mass = r.sum(-1, keepdim=True)
    return torch.where(mass > 0, r / mass.clamp_min(1e-30), p)


def acceptance_probability(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """P(accept) of one drafted position, x ~ q: sum_x min(p(x), q(x))."""
    return torch.minimum(p, q).sum(-1)


def one_hot_q(tokens: torch.Tensor, vocab: int) -> torch.Tensor:
    """The q of a deterministic proposer (lookup): all mass on the drafted token. (k,) -> (k, V)"""
    return torch.zeros(len(tokens), vocab).scatter_(1, tokens.view(-1, 1).long(), 1.0)


def draft_ratios(draft: torch.Tensor, q: torch.Tensor, p: torch.Tensor) -> list[float]:
    """draft (k,) ids, q (k, V), p (k+1, V) -> p_i(x_i) / q_i(x_i) for each drafted token (inf where q_i(x_i) = 0)."""
    k = len(draft)
    assert q.shape[0] == k and p.shape[0] == k + 1 and q.shape[-1] == p.shape[-1], (q.shape, p.shape)
    out = []
    for i in range(k):
        x = int(draft[i])
        px, qx = float(p[i, x]), float(q[i, x])
        out.append(px / qx if qx > 0 else float("inf"))
    return out


def verify(draft: torch.Tensor, q: torch.Tensor, p: torch.Tensor, greedy: bool,
           generator: torch.Generator | None = None) -> Verdict:
    """draft (k,) ids, q (k, V), p (k+1, V) -> Verdict. q must be over the same token ids as p."""
    k = len(draft)
    ratios = draft_ratios(draft, q, p)
    draws = torch.rand(k, generator=generator).tolist() if (k and not greedy) else [None] * k
    for i in range(k):
        accepted = (int(p[i].argmax()) == int(draft[i])) if greedy else draws[i] < min(1.0, ratios[i])
        if not accepted:
            fix = int(p[i].argmax()) if greedy else sample(residual(p[i], q[i]), generator)
            return Verdict(i, fix, "correction", ratios[: i + 1], draws[: i + 1])
    bonus = int(p[k].argmax()) if greedy else sample(p[k], generator)
    return Verdict(k, bonus, "bonus", ratios, draws)
