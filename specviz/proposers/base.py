"""The proposer interface: given the context, return up to k draft tokens (and their q).

Shaped after transformers' candidate generators (get candidates, then update the strategy),
with the target's hidden states in the context from the start, so head-based proposers
(Medusa, EAGLE) fit without changing the decode loop.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.core.sampling import SamplingConfig


@dataclass
class Context:
    ids: torch.Tensor                  # (T,) every committed token: prompt + generated
    hidden: torch.Tensor | None        # (T-1, H) target's final hidden state at each position whose
                                       # next token is committed; hidden[-1] produced ids[-1].
                                       # Filled only for proposers with needs_hidden=True.
    sampling: SamplingConfig
    generator: torch.Generator | None
    features: torch.Tensor | None = None  # (T-1, n*H) the outputs of the target layers the proposer named
                                       # (feature_layers), concatenated, at the same positions as hidden.
                                       # Filled only for proposers with feature_layers (EAGLE-3).


@dataclass
class Draft:
    tokens: torch.Tensor               # (k',) drafted ids, k' <= k (may be empty)
    q: torch.Tensor | None = None      # (k', V) draft distributions; None for a deterministic proposer
    parents: list[int] | None = None   # a tree (core/tree.py): parent node of each token, -1 = the root;
                                       # None = a chain (token i follows token i-1)
    seen_in: list[str] | None = None   # where each token was seen (suffix: 'this prompt', 'request 2 output')
    held: str | None = None            # an empty draft held back on purpose, why (a gate: proposers/gated.py)


class Proposer:
    """Subclasses implement propose(); the others are optional hooks."""

    name = "proposer"
    needs_hidden = False      # True: the decode loop keeps the target's hidden states in Context
    feature_layers: tuple[int, ...] = ()  # target decoder layers (0-based) whose outputs the decode loop
                                          # taps and keeps, fused, in Context.features; () = none (no hooks)
    deterministic = False     # True: q is one-hot on the drafted token (lookup)
    max_nodes = 0             # tree proposers: the most nodes one draft may hold (for the context-window check)
    reads_logits = False      # True: the decode loop calls observe() with the target's logits at every row it reads
    prefill_rows = 0          # reads_logits: how many of the prompt's last rows the prefill computes logits for

    def reset(self, prompt_ids: torch.Tensor) -> None:
        """Start a new sequence."""

    def propose(self, ctx: Context, k: int) -> Draft:
        raise NotImplementedError

    def observe(self, inputs: torch.Tensor, logits: torch.Tensor, step: int) -> None:
        """For reads_logits proposers: the target read `inputs` (t,) and gave `logits` (t, V), at step `step`
        (-1: the prefill), every row, accepted or not (token recycling keeps them)."""

    def update(self, ctx: Context, n_accepted: int) -> None:
        """Called after verification with the new committed context (e.g. to roll back a KV cache)."""

    def cache_length(self) -> int | None:
        """Entries in the proposer's own KV cache; None when it keeps none (lookup, Medusa's heads)."""
        return None

    def table_rows(self) -> int | None:
        """Token ids with a row in the proposer's adjacency table (token recycling); None when it keeps none."""
        return None


def empty_draft(held: str | None = None) -> Draft:
    return Draft(tokens=torch.zeros(0, dtype=torch.long), held=held)


def draft_on(proposer: Proposer, ids: list[int], k: int) -> tuple[list[int], list[int] | None]:
    """A deterministic proposer's draft for a bare context (no hidden states, greedy): (tokens, parents or
    None for a chain), as core/copybound.replay takes it."""
    d = proposer.propose(Context(torch.tensor(ids), None, SamplingConfig(), None), k)
    return d.tokens.tolist(), d.parents


class Plain(Proposer):
    """No draft: every step is one ordinary decoding step. The baseline."""

    name = "plain"
    deterministic = True

    def propose(self, ctx: Context, k: int) -> Draft:
        return empty_draft()
