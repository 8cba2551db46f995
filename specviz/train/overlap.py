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
def sum_min(target_hidden: torch.Tensor, q_sub_logits: torch.Tensor, out: SubsetHead,
            temperature: float = T_SAMPLED, chunk: int = 512) -> torch.Tensor:
    """(n,) Σ_x min(p(x), q(x)) per position; target_hidden (n, H), q_sub_logits (n, N) over out.ids."""
    w = out.weight.detach().float()                                             # (V, H)
    ids = out.ids.to(w.device)
    res = []
    for i in range(0, len(target_hidden), chunk):
        h = target_hidden[i:i + chunk].to(w.device, torch.float32)             # (c, H)
        p = torch.softmax(h @ w.T / temperature, -1).index_select(-1, ids)      # (c, N) p on the subset
        q = torch.softmax(q_sub_logits[i:i + chunk].to(w.device).float() / temperature, -1)  # (c, N)
        res.append(torch.minimum(p, q).sum(-1).cpu())
    return torch.cat(res) if res else torch.zeros(0)
