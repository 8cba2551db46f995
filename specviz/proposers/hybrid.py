"""Lookup when the context offers a match, a learned proposer otherwise.

Copy-heavy stretches get lookup's free, long drafts; novel stretches fall back to the learned
proposer, whose own state (KV cache, features) keeps catching up on every committed token.
"""
from __future__ import annotations

import torch

from specviz.proposers.base import Context, Draft, Proposer
from specviz.proposers.lookup import lookup


class Hybrid(Proposer):
    def __init__(self, learned: Proposer, n_min: int = 2, n_max: int = 3):
        self.learned, self.n_min, self.n_max = learned, n_min, n_max
        self.name = f"lookup+{learned.name}"
        self.needs_hidden = learned.needs_hidden
        self.feature_layers = learned.feature_layers

    def reset(self, prompt_ids: torch.Tensor) -> None:
        self.learned.reset(prompt_ids)

    def propose(self, ctx: Context, k: int) -> Draft:
        found, _ = lookup(ctx.ids.tolist(), self.n_min, self.n_max, k)
        if found:
            return Draft(tokens=torch.tensor(found[:k], dtype=torch.long))
        return self.learned.propose(ctx, k)

    def update(self, ctx: Context, n_accepted: int) -> None:
        self.learned.update(ctx, n_accepted)

    def cache_length(self) -> int | None:
        return self.learned.cache_length()
