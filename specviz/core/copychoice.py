"""copy-recycle's rule: which of its two parts drafts a pass. Pure Python, no model.

The two parts (proposers/copy_recycle.py): suffix decoding's tree (core/suffix.py) and token recycling's static tree
(core/recycle.py). Each pass drafts one tree:
  - no suffix match at all: recycling's tree;
  - a match of `always_copy` tokens or more (default 2): suffix's tree — on such matches copying keeps several
    tokens a pass (bench: 4-10 on the copy-heavy workloads);
  - a one-token match (suffix's best match is its last token alone): the part that has kept more on this
    request's earlier one-token-match passes. Both trees of every such pass are scored, once the text that
    followed decides them (it goes past each tree's longest matching path), by the longest root path that text
    begins with — what verification keeps of a tree of chosen (one-hot) candidates, at any temperature: the
    committed token at each depth is distributed as the target's p, and a node is kept when it equals it.
    So the part that drafted and the part that did not are scored alike, on the same passes. A tie (at the
    start: 0 against 0) goes to copying.
A one-token match is the uncertain case: on copy-heavy text it usually continues the copy (suffix's own default
drafts from it), on novel text it is often a common token followed by anything, where the recycled candidates
(what the target itself said after that token last time) do better. Measuring both on the request itself decides
without a threshold tuned to any workload.

The choice depends on the committed text only (never on this pass's random draws), so the draft stays a function of
the context and q stays one-hot: the tree verification is lossless as with either part alone.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from specviz.core.copybound import kept_along
from specviz.core.tree import depths

COPY, RECYCLE = "copy", "recycle"
ALWAYS_COPY = 2     # a suffix match of this many tokens or more always copies
BUCKETS = 4         # matches of 1, 2, 3 and 4+ tokens are scored apart


def tree_depth(parents: Sequence[int]) -> int:
    return max(depths(list(parents)), default=0)


def decided(tokens: Sequence[int], parents: Sequence[int], text: Sequence[int], t: int) -> int | None:
    """kept_along once the text decides it: the text holds a token past the longest matching path, or that path
    reaches the tree's depth; None while the text may still extend it."""
    kept = kept_along(tokens, parents, text, t)
    return kept if kept < len(text) - t or kept == tree_depth(parents) else None


def merge(a: tuple[Sequence[int], Sequence[int]], b: tuple[Sequence[int], Sequence[int]]
          ) -> tuple[list[int], list[int], list[int]]:
    """One tree holding both (tokens, parents) trees: a's nodes first, then b's, a node of b that repeats a node
    already there (same parent, same token) merged into it. Returns (tokens, parents, from_b) with from_b the b-node
    index of each added node (-1 for a's). Parents before children, as each input has them."""
    tokens, parents = list(a[0]), list(a[1])
    where = {(par, tok): i for i, (tok, par) in enumerate(zip(tokens, parents))}
    from_b = [-1] * len(tokens)
    at: list[int] = []                                   # b's node -> merged node
    for j, (tok, par) in enumerate(zip(b[0], b[1])):
        key = (at[par] if par >= 0 else -1, tok)
        if key not in where:
            where[key] = len(tokens)
            tokens.append(tok)
            parents.append(key[0])
            from_b.append(j)
        at.append(where[key])
    return tokens, parents, from_b


@dataclass
class _Pending:
    at: int                      # the text's length when both trees were drafted (their first token's index)
    bucket: int                  # the match length it was drafted at (capped at BUCKETS)
    trees: dict                  # part -> (tokens, parents)


class PartChooser:
    """The rule above, with its running score: kept[bucket][part] = the tokens that part's trees would have kept,
    summed over this request's scored passes of that match length (both parts on the same passes)."""

    def __init__(self, always_copy: int = ALWAYS_COPY):
        if always_copy < 1:
            raise ValueError(f"the match that always copies must be >= 1 token, got {always_copy}")
        self.always_copy = always_copy
        self.reset()

    def reset(self) -> None:
        self.kept = {b: {COPY: 0, RECYCLE: 0} for b in range(1, BUCKETS + 1)}
        self.scored = 0                               # passes scored
        self.pending: list[_Pending] = []

    @staticmethod
    def bucket(match_len: int) -> int:
        return min(match_len, BUCKETS)

    def choose(self, match_len: int, copy_nodes: int, recycle_nodes: int) -> str:
        """Which part drafts: match_len = suffix's match (0: none), *_nodes = the size of each part's tree."""
        if not copy_nodes:
            return RECYCLE
        if match_len >= self.always_copy or not recycle_nodes:
            return COPY
        kept = self.kept[self.bucket(match_len)]
        return COPY if kept[COPY] >= kept[RECYCLE] else RECYCLE

    def note(self, at: int, match_len: int, copy_tree: tuple[list[int], list[int]],
             recycle_tree: tuple[list[int], list[int]]) -> None:
        """A pass at a match of `match_len` drafted both trees at text length `at`: score them when the text
        allows."""
        self.pending.append(_Pending(at, self.bucket(match_len), {COPY: copy_tree, RECYCLE: recycle_tree}))

    def score(self, text: Sequence[int]) -> None:
        """Score the pending passes the committed `text` now decides: for each tree, the text has gone one token past
        its longest matching path (no child of that node took it), or that path is as deep as the tree."""
        left = []
        for p in self.pending:
            got = {part: decided(tokens, parents, text, p.at) for part, (tokens, parents) in p.trees.items()}
            if any(k is None for k in got.values()):
                left.append(p)
                continue
            for part, k in got.items():
                self.kept[p.bucket][part] += k
            self.scored += 1
        self.pending = left
