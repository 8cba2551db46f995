"""Medusa heads: K small heads on the target's last hidden state, each guessing one later token.

The target's hidden state h_t at position t predicts token t+1 through its LM head; head i
(i = 1..K) maps h_t to a guess for token t+1+i through a zero-initialised residual block feeding
the same frozen LM head. All K guesses come from one call: drafting costs no serial steps, but
the heads cannot see each other's choices, so later positions are accepted less often.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from specviz.core.sampling import logits_to_probs, sample
from specviz.proposers.base import Context, Draft, empty_draft
from specviz.proposers.vocab import HeadProposer, SubsetHead


class ResBlock(torch.nn.Module):
    """x + SiLU(W x + b), with W = 0 at start: an identity, so head i starts as 'repeat the target'."""

    def __init__(self, hidden: int):
        super().__init__()
        self.linear = torch.nn.Linear(hidden, hidden)
        torch.nn.init.zeros_(self.linear.weight)
        torch.nn.init.zeros_(self.linear.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + F.silu(self.linear(x))


class MedusaHeads(torch.nn.Module):
    def __init__(self, hidden: int, n_heads: int = 4):
        super().__init__()
        self.blocks = torch.nn.ModuleList([ResBlock(hidden) for _ in range(n_heads)])  # separate modules

    @property
    def n_heads(self) -> int:
        return len(self.blocks)

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return torch.stack([b(h) for b in self.blocks])  # (K, ..., H): head i's hidden guess


class Medusa(HeadProposer):
    """Chain drafting: the top-1 (or a sample) of heads 1..k, verified left to right."""

    name = "medusa"
    needs_hidden = True

    def __init__(self, heads: MedusaHeads, out: SubsetHead, name: str = "medusa",
                 add_prompt_ids: bool = True):
        self.heads, self.name = heads, name
        self._init_head(heads, out, add_prompt_ids)

    @torch.inference_mode()
    def propose(self, ctx: Context, k: int) -> Draft:
        """The heads draft from the target's last hidden state: none yet, or k < 1, and they draft nothing."""
        if ctx.hidden is None or len(ctx.hidden) == 0 or k < 1:
            return empty_draft()
        return self._draft(ctx, k, ctx.hidden[-1].to(self.device, self.dtype))  # h (H,): produced ids[-1]

    def _draft(self, ctx: Context, k: int, h: torch.Tensor) -> Draft:
        """A chain of k: head i's top-1 (or a sample) at position i."""
        g = self.heads(h)[:k]                                            # (k, H)
        logits = self.out(g).float().cpu()                               # (k, V), -inf off the subset
        q = logits_to_probs(logits, ctx.sampling)                        # (k, V)
        if ctx.sampling.greedy:
            tokens = logits.argmax(-1)                                   # (k,)
        else:
            tokens = torch.tensor([sample(q[i], ctx.generator) for i in range(len(q))])
        return Draft(tokens=tokens.long(), q=q)


# Medusa's sparse static tree, as data: each path lists, per depth, which of that depth's head's
# candidates to take (0 = its top-1). Paths favour the likelier candidates, as Medusa's trees do.
MEDUSA_TREE_20 = [
    (0,), (1,), (2,), (3,),
    (0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (2, 0), (3, 0),
    (0, 0, 0), (0, 0, 1), (0, 1, 0), (1, 0, 0), (0, 0, 2),
    (0, 0, 0, 0), (0, 0, 0, 1), (0, 0, 1, 0), (0, 1, 0, 0),
]
# the default: 8 nodes. On the 2-core CPU a 20-node tree kept more per pass (τ 1.60 vs 1.46 on novel
# prompts) but its verify pass cost more than that bought (scripts/tree_shape.py, models/notes.md)
MEDUSA_TREE = [(0,), (1,), (0, 0), (0, 1), (1, 0), (0, 0, 0), (0, 0, 1), (0, 0, 0, 0)]


class MedusaTree(Medusa):
    """Head d's top candidates at depth d, arranged as the sparse tree `paths` (one target pass checks
    them all). The candidates are chosen, not sampled, so each node's q is one-hot (Draft.q = None):
    the tree's chance at a node is the target probability its candidates cover there."""

    def __init__(self, heads: MedusaHeads, out: SubsetHead, paths=MEDUSA_TREE, name: str = "medusa-tree",
                 add_prompt_ids: bool = True):
        super().__init__(heads, out, name, add_prompt_ids)
        self.paths = sorted((tuple(c) for c in paths if len(c) <= heads.n_heads), key=lambda c: (len(c), c))
        self.width = 1 + max(max(c) for c in self.paths)
        self.max_nodes = len(self.paths)

    def _draft(self, ctx: Context, k: int, h: torch.Tensor) -> Draft:
        """The tree's paths up to depth k, each node a head's candidate (chosen, so q is one-hot)."""
        paths = [c for c in self.paths if len(c) <= k]
        depth = max(len(c) for c in paths)
        logits = self.out(self.heads(h)[:depth]).float().cpu()           # (D, V)
        top = torch.topk(logits, self.width, dim=-1).indices             # (D, w) each head's candidates
        node = {c: i for i, c in enumerate(paths)}
        tokens = torch.stack([top[len(c) - 1, c[-1]] for c in paths])    # (n,)
        parents = [node[c[:-1]] if len(c) > 1 else -1 for c in paths]
        return Draft(tokens=tokens.long(), parents=parents)
