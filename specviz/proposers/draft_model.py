"""A separate draft model: same tokenizer, its own KV cache, k serial small forward passes."""
from __future__ import annotations

import torch
from transformers import DynamicCache

from ..sampling import logits_to_probs, sample
from .base import Context, Draft, Proposer


class DraftModel(Proposer):
    name = "draft"

    def __init__(self, model: torch.nn.Module, name: str = "draft"):
        self.model = model
        self.name = name
        self.device = next(model.parameters()).device
        self.cache: DynamicCache | None = None

    def reset(self, prompt_ids: torch.Tensor) -> None:
        self.cache = DynamicCache(config=self.model.config)

    @torch.inference_mode()
    def _forward(self, ids: list[int]) -> torch.Tensor:
        x = torch.tensor([ids], device=self.device)  # (1, t)
        out = self.model(input_ids=x, cache=self.cache, use_cache=True,
                         logits_to_keep=1)
        return out.logits[0, -1].float().cpu()  # (V,)

    def propose(self, ctx: Context, k: int) -> Draft:
        if self.cache is None:
            self.reset(ctx.ids)
        ids = ctx.ids.tolist()
        seen = self.cache.get_seq_length()
        logits = self._forward(ids[seen:])  # catch up on tokens the drafter has not seen
        tokens, qs = [], []
        for i in range(k):
            q = logits_to_probs(logits, ctx.sampling)  # (V,)
            x = sample(q, ctx.generator) if not ctx.sampling.greedy else int(q.argmax())
            tokens.append(x)
            qs.append(q)
            if i < k - 1:
                logits = self._forward([x])
        return Draft(tokens=torch.tensor(tokens, dtype=torch.long), q=torch.stack(qs))  # q: (k, V)

    def update(self, ctx: Context, n_accepted: int) -> None:
        # Keep the cache only for tokens that are now committed; drafted-and-rejected ones go.
        extra = self.cache.get_seq_length() - (len(ctx.ids) - 1)
        if extra > 0:
            self.cache.crop(-extra)
