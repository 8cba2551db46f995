"""Suffix decoding: a tree of what most often followed the context's tail, in this request and earlier ones.

No weights. The text searched is this prompt, this output so far and the session's earlier requests
(a SessionCache, bounded, oldest evicted first); the counting and the tree are core/suffix.py's. Each
step drafts a small tree (SuffixDecoding, arXiv 2411.04975): the most frequent continuations of the
matched suffix, pruned below `min_prob`, as many nodes as the match length justifies (`factor`), match plus
draft within `max_depth`, at most k nodes (vLLM's suffix method treats num_speculative_tokens as the
same ceiling). Candidates are chosen, not sampled, so q is one-hot and the tree verification is
lossless at any temperature.

A session: give several requests one SessionCache (or reuse the proposer) and call remember() after
each finished request; nothing is remembered otherwise, so re-running a request (a reset) never
copies from its own earlier run.
"""
from __future__ import annotations

import torch

from specviz.core.errors import InputError
from specviz.core.suffix import (
    MAX_TREE_DEPTH,
    MIN_TOKEN_PROB,
    SUFFIX_FACTOR,
    SessionCache,
    SuffixDraft,
    TokenSeq,
    speculate,
)
from specviz.proposers.base import Context, Draft, Proposer, empty_draft


class SuffixProposer(Proposer):
    name = "suffix"
    deterministic = True

    def __init__(self, max_depth: int = MAX_TREE_DEPTH, factor: float = SUFFIX_FACTOR,
                 min_prob: float = MIN_TOKEN_PROB, cache: SessionCache | None = None, min_match: int = 1):
        if max_depth < 2:
            raise InputError(f"the suffix tree's depth must be >= 2 (a match and a draft), got {max_depth}")
        if not factor > 0:
            raise InputError(f"the spec factor must be > 0, got {factor}")
        if not 0 <= min_prob <= 1:
            raise InputError(f"the minimum token probability must be in [0, 1], got {min_prob}")
        if min_match < 1:
            raise InputError(f"the shortest match must be >= 1, got {min_match}")
        self.max_depth, self.factor, self.min_prob, self.min_match = max_depth, factor, min_prob, min_match
        self.cache = cache if cache is not None else SessionCache()
        self.this = TokenSeq(name="this")
        self.last: SuffixDraft = SuffixDraft()         # the last step's draft, with probs and where each token was seen

    def reset(self, prompt_ids: torch.Tensor) -> None:
        self.this = TokenSeq(prompt_ids.tolist(), name="this")

    def _sync(self, ids: torch.Tensor) -> None:
        """Index the tokens committed since the last step (the decode loop only ever appends)."""
        if len(ids) > len(self.this):
            self.this.extend(ids[len(self.this):].tolist())

    def propose(self, ctx: Context, k: int) -> Draft:
        self._sync(ctx.ids)
        sources = [self.this, *reversed(self.cache.seqs)]              # newest first
        self.last = speculate(sources, self.this.tokens[-self.max_depth:], k, self.max_depth, self.factor,
                              self.min_prob, self.min_match)
        if not self.last.tokens:
            return empty_draft()
        return Draft(tokens=torch.tensor(self.last.tokens, dtype=torch.long),     # (n,) nodes, parents first
                     parents=list(self.last.parents), seen_in=list(self.last.seen_in))

    def remember(self, include_prompt: bool = False) -> None:
        """This request is finished: keep its output for the session's next requests (SuffixDecoding's
        global tree keeps responses only; each request's own prompt is searched anyway). include_prompt:
        keep its prompt too."""
        start = 0 if include_prompt else self.this.prompt_len
        self.cache.add(self.this.tokens[start:], self.this.prompt_len - start)
