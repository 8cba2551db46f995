"""A reduced draft vocabulary: the target's own output layer restricted to a subset of token ids.

Same tokenizer, same ids: the draft distribution q is simply zero outside the subset. Drafting
over 8-16K rows instead of 49K cuts the largest share of a head's or a drafter's step cost.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from specviz.proposers.base import Proposer


class SubsetHead(torch.nn.Module):
    """Logits over `ids` only, from the rows of a frozen (V, H) output weight shared with the target."""

    def __init__(self, weight: torch.Tensor, ids: torch.Tensor):
        super().__init__()
        self.weight = weight                      # (V, H) the target's tensor, not a copy
        self.vocab_size = weight.shape[0]
        self.set_ids(ids)

    def set_ids(self, ids: torch.Tensor) -> None:
        # on the CPU: to_sub is a CPU table (it maps CPU labels), and a CPU tensor cannot be indexed by CUDA ids
        ids = torch.unique(ids.long().flatten().cpu().clamp(0, self.vocab_size - 1))  # (N,) sorted
        self.ids = ids.to(self.weight.device)
        self.rows = self.weight.detach().index_select(0, self.ids).contiguous()      # (N, H)
        to_sub = torch.full((self.vocab_size,), -1, dtype=torch.long)
        to_sub[ids] = torch.arange(len(ids))
        self.to_sub = to_sub                                                          # (V,) id -> row or -1

    def sub_logits(self, h: torch.Tensor) -> torch.Tensor:
        return F.linear(h, self.rows.to(h.dtype))                                     # (..., N)

    def full(self, sub: torch.Tensor) -> torch.Tensor:
        """Scatter subset logits into the full vocabulary, -inf elsewhere (q is 0 there)."""
        out = torch.full((*sub.shape[:-1], self.vocab_size), float("-inf"), dtype=sub.dtype, device=sub.device)
        return out.index_copy_(-1, self.ids, sub) if sub.dim() == 1 else \
            out.index_copy_(sub.dim() - 1, self.ids, sub)                              # (..., V)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return self.full(self.sub_logits(h))


def frequent_ids(labels: torch.Tensor, size: int, vocab_size: int, always: list[int] = ()) -> torch.Tensor:
    """The `size` ids most often predicted by the target in the corpus (ties: lower id first),
    topped up with the lowest ids (BPE merges come roughly in frequency order), plus `always`."""
    counts = torch.bincount(labels.long().flatten(), minlength=vocab_size).float()   # (V,)
    counts += 1e-6 * (vocab_size - torch.arange(vocab_size)) / vocab_size              # tie-break: low ids
    ids = torch.topk(counts, min(size, vocab_size)).indices
    return torch.unique(torch.cat([ids, torch.tensor(list(always), dtype=torch.long)]))


class HeadProposer(Proposer):
    """A proposer whose drafts end in a SubsetHead `out` (Medusa's heads, EAGLE's head): with add_prompt_ids
    the prompt's tokens join the draft vocabulary at each reset."""

    def _init_head(self, module: torch.nn.Module, out: SubsetHead, add_prompt_ids: bool) -> None:
        self.out = out
        self.base_ids = out.ids.clone()
        self.add_prompt_ids = add_prompt_ids
        p = next(module.parameters())
        self.dtype, self.device = p.dtype, p.device

    def reset(self, prompt_ids: torch.Tensor) -> None:
        if self.add_prompt_ids:                      # the prompt's tokens join the draft vocabulary
            self.out.set_ids(torch.cat([self.base_ids, prompt_ids.to(self.base_ids.device)]))
