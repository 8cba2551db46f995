"""Logits -> probabilities, applied identically to the target (p) and the draft (q).

Temperature 0 means greedy: the distribution is one-hot on the argmax, so the acceptance
rule in verify.py reduces to "accept x when x is the target's argmax".
"""
from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class SamplingConfig:
    temperature: float = 0.0  # 0 = greedy (argmax)
    top_k: int = 0            # 0 = off; keep the k most likely tokens
    top_p: float = 1.0        # 1 = off; keep the smallest set with this much mass

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0.0

    def check(self) -> None:
        if self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")
        if self.top_k < 0:
            raise ValueError(f"top-k must be >= 0, got {self.top_k}")
        if not 0.0 < self.top_p <= 1.0:
            raise ValueError(f"top-p must be in (0, 1], got {self.top_p}")


def logits_to_probs(logits: torch.Tensor, cfg: SamplingConfig) -> torch.Tensor:
    """(..., V) logits -> (..., V) float32 probabilities under cfg."""
    logits = logits.float()
    if cfg.greedy:
        one_hot = torch.zeros_like(logits)  # (..., V)
        return one_hot.scatter_(-1, logits.argmax(-1, keepdim=True), 1.0)
    logits = logits / cfg.temperature
    if cfg.top_k and cfg.top_k < logits.shape[-1]:
        kth = torch.topk(logits, cfg.top_k, dim=-1).values[..., -1:]  # (..., 1)
        logits = logits.masked_fill(logits < kth, float("-inf"))
    if cfg.top_p < 1.0:
        sorted_logits, order = torch.sort(logits, dim=-1, descending=True)  # (..., V)
        cum = sorted_logits.softmax(-1).cumsum(-1)
        drop_sorted = (cum - sorted_logits.softmax(-1)) >= cfg.top_p  # keep the token that crosses top_p
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)
        logits = logits.masked_fill(drop, float("-inf"))
    return logits.softmax(-1)


def sample(probs: torch.Tensor, generator: torch.Generator | None = None) -> int:
    """Draw one token id from a (V,) distribution (argmax when it is one-hot)."""
    return int(torch.multinomial(probs, 1, generator=generator))
