"""Held-out Σ min(p, q): the chance a sampled draft is kept (docs/metrics.md), for every proposer.

At temperature T a drafted token x ~ q is kept with probability min(1, p(x)/q(x)), so the expected
acceptance of one drafted position is Σ_x q(x)·min(1, p(x)/q(x)) = Σ_x min(p(x), q(x)). p is the
target's full distribution, recomputed from the corpus's cached final hidden state through the
target's LM head; q is the proposer's, over its draft vocabulary (zero elsewhere).
"""
from __future__ import annotations

import torch

from specviz.proposers.vocab import SubsetHead

T_SAMPLED = 0.8  # the temperature the issue and the bench sample at


@torch.no_grad()
def target_p(target_hidden: torch.Tensor, out: SubsetHead, temperature: float = T_SAMPLED,
             chunk: int = 512) -> torch.Tensor:
    """(n, N) the target's full-vocabulary p at `temperature`, read on the draft vocabulary out.ids
    (mass outside it is mass q cannot match); target_hidden (n, H) final hidden states."""
    w = out.weight.detach().float()                                             # (V, H)
    ids = out.ids.to(w.device)
    parts = [torch.softmax(target_hidden[i:i + chunk].to(w.device, torch.float32) @ w.T / temperature, -1)
             .index_select(-1, ids).cpu() for i in range(0, len(target_hidden), chunk)]  # (c, N) each
    return torch.cat(parts) if parts else torch.zeros(0, len(ids))


@torch.no_grad()
def overlap(p_sub: torch.Tensor, q_sub_logits: torch.Tensor, temperature: float = T_SAMPLED) -> torch.Tensor:
    """(n,) Σ_x min(p(x), q(x)), with p from target_p and q = softmax(q_sub_logits / T)."""
    q = torch.softmax(q_sub_logits.float().cpu() / temperature, -1)             # (n, N)
    return torch.minimum(p_sub, q).sum(-1)


def sum_min(target_hidden: torch.Tensor, q_sub_logits: torch.Tensor, out: SubsetHead,
            temperature: float = T_SAMPLED, chunk: int = 512) -> torch.Tensor:
    """(n,) Σ_x min(p(x), q(x)) per position; target_hidden (n, H), q_sub_logits (n, N) over out.ids."""
    return overlap(target_p(target_hidden, out, temperature, chunk), q_sub_logits, temperature)
