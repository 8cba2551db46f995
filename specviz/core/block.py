"""Block verification of a chain of drafts. Pure tensors, no model.

Source: Sun, Mendlovic, Leviathan, Aharoni, Ro, Beirami, Suresh, "Block Verification Accelerates Speculative
Decoding" (arXiv 2403.10444, ICLR 2025), Algorithm 2. vLLM offers the same rule as
`--speculative-config '{"rejection_sample_method": "block"}'` (its other values: "standard", the token-wise rule of
core/verify.py, and "synthetic"; the key and its values as vllm/config/speculative.py spells them at vllm-project/vllm
002e77c); the code below follows the paper, checked against SGLang's reference
of the same algorithm (test/.../test_block_verification: h_i = Z_{i+1} / (Z_{i+1} + 1 - p_i), tau = the last i
with coin_i <= h_i).

Names as in core/verify.py: p = target, q = draft. For drafts X_1..X_k (X_i drawn from q_i), with p_0 = 1:

    p_i   = min(1, p_{i-1} * p_i(X_i) / q_i(X_i))            how much of the block up to i the target backs
    rho_i = sum_x max(0, p_i * p_{i+1}(x) - q_{i+1}(x))      the mass a correction after X_i could draw on
    h_i   = rho_i / (rho_i + 1 - p_i)  (i < k),   h_k = p_k  the weight of stopping at i
    tau   = the largest i with eta_i <= h_i (eta_i uniform), 0 if none: keep X_1..X_tau
    then  tau = k: the bonus from p_{k+1};  tau < k: the correction from norm(max(0, p_tau * p_{tau+1} - q_{tau+1}))

Token-wise verification stops at the first rejection; block verification decides from the whole block at once,
keeps at least as many tokens in expectation (the paper's Theorem 2), and the output still follows p exactly.
The one change from the token-wise residual is the factor p_tau in the correction; without it the output drifts
(tests/core/test_block.py checks both, exactly, by enumeration). Greedy: p is one-hot, and block verification keeps
the same prefix as token-wise verification (the longest prefix equal to the argmax), so greedy runs use that rule.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.core.sampling import sample
from specviz.core.verify import draft_ratios


@dataclass
class BlockWeights:
    backed: list[float]       # p_i, i = 1..k: min(1, p_{i-1} * p(X_i)/q(X_i))
    residual_mass: list[float]  # rho_i, i = 1..k (rho_k = 0: after the last draft comes the bonus)
    h: list[float]            # h_i, i = 1..k: the weight of keeping exactly X_1..X_i
    ratios: list[float]       # p(X_i)/q(X_i), the token-wise rule's ratios for the same drafts


def block_weights(draft: torch.Tensor, q: torch.Tensor, p: torch.Tensor) -> BlockWeights:
    """draft (k,) ids, q (k, V), p (k+1, V) -> the paper's p_i, rho_i, h_i for i = 1..k."""
    k = len(draft)
    ratios = draft_ratios(draft, q, p)
    backed, rho, h = [], [], []
    pi = 1.0
    for i in range(k):
        pi = min(1.0, pi * ratios[i])
        backed.append(pi)
        if i == k - 1:
            rho.append(0.0)
            h.append(pi)                                                  # h_k = p_k
        else:
            r = float((pi * p[i + 1] - q[i + 1]).clamp_min(0.0).sum())   # (V,) summed
            rho.append(r)
            den = r + 1.0 - pi
            h.append(r / den if den > 0 else 1.0)
    return BlockWeights(backed, rho, h, ratios)


def stop_probabilities(h: list[float]) -> list[float]:
    """P(tau = i), i = 0..k, given the drafts: tau is the last i with eta_i <= h_i, so
    P(tau = i) = h_i * prod_{j > i} (1 - h_j) (h_0 = 1: tau = 0 when no eta falls under its h)."""
    out, tail = [], 1.0
    for hi in reversed([1.0] + list(h)):
        out.append(hi * tail)
        tail *= 1.0 - hi
    return out[::-1]


def expected_kept(w: BlockWeights) -> tuple[float, float]:
    """Given the drafts, the drafts each rule keeps in expectation over its uniforms, exactly: (block, token-wise).
    Block: sum_i i * P(tau = i) (stop_probabilities); token-wise keeps X_i when the tests of X_1..X_i all pass:
    sum_i prod_{j <= i} min(1, p(X_j)/q(X_j)). Both on the same drafts, so their ratio has no sampling noise from
    the uniforms nor from two runs writing different texts (the bench's and the lesson's paired figure)."""
    block = sum(i * s for i, s in enumerate(stop_probabilities(w.h)))
    token, reach = 0.0, 1.0
    for r in w.ratios:
        reach *= min(1.0, r)
        token += reach
    return block, token


CORRECTIONS = ("block", "token", "none")   # the paper's residual; two broken ones for the tests' negative controls


def block_residual(tau: int, w: BlockWeights, q: torch.Tensor, p: torch.Tensor,
                   correction: str = "block") -> torch.Tensor:
    """The distribution the token after X_1..X_tau is drawn from: p_{k+1} when tau = k, else
    norm(max(0, p_tau * p_{tau+1} - q_{tau+1})) (p_0 = 1). Broken rules, for negative controls only:
    correction="token" drops the factor p_tau (token-wise verification's residual), "none" draws from p_{tau+1}
    itself, as if nothing had been rejected. (V,)"""
    k = len(w.h)
    if tau == k:
        return p[k]
    if correction == "none":
        return p[tau]
    scale = (w.backed[tau - 1] if tau > 0 else 1.0) if correction == "block" else 1.0
    r = (scale * p[tau] - q[tau]).clamp_min(0.0)                          # (V,)
    mass = float(r.sum())
    return r / mass if mass > 0 else p[tau]


@dataclass
class BlockVerdict:
    n_accepted: int           # tau: drafts kept
    next_token: int           # the correction (tau < k) or the bonus (tau = k)
    origin: str               # "correction" | "bonus"
    weights: BlockWeights
    draws: list[float | None]  # eta_i per draft (None when greedy)
    token_wise_kept: int      # what token-wise verification keeps with the same uniforms (eta_i < min(1, ratio_i))


def verify_block(draft: torch.Tensor, q: torch.Tensor, p: torch.Tensor, greedy: bool,
                 generator: torch.Generator | None = None, correction: str = "block") -> BlockVerdict:
    """draft (k,) ids, q (k, V), p (k+1, V) -> BlockVerdict. Greedy: the longest prefix equal to argmax p."""
    k = len(draft)
    w = block_weights(draft, q, p)
    if greedy:
        tau = 0
        while tau < k and int(p[tau].argmax()) == int(draft[tau]):
            tau += 1
        nxt = int(p[tau].argmax())
        return BlockVerdict(tau, nxt, "bonus" if tau == k else "correction", w, [None] * k, tau)
    draws = torch.rand(k, generator=generator).tolist() if k else []
    tau = max([i + 1 for i in range(k) if draws[i] <= w.h[i]], default=0)
    token_wise = next((i for i in range(k) if not draws[i] < min(1.0, w.ratios[i])), k)
    nxt = sample(block_residual(tau, w, q, p, correction), generator)
    return BlockVerdict(tau, nxt, "bonus" if tau == k else "correction", w, draws, token_wise)
