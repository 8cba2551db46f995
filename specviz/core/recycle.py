"""Token recycling: the target's discarded candidates, kept per token, draft a static tree. Pure tensors, no model.

Source: Luo et al. 2024, "Turning Trash into Treasure: Accelerating Inference of Large Language Models with Token
Recycling" (arXiv 2408.08696; reference code Luowaterbi/TokenRecycling). Every target pass computes a distribution at
every position it reads, accepted or not; its top candidates are what the target itself would say next after that
position's input token. The adjacency table keeps, for each token id, the top-k next tokens from the latest position
whose input was that token (a newer position overwrites an older one). A draft is a static tree read from the table
breadth-first from the last committed token: node = (parent node, rank), its token = the rank-th successor of its
parent's token. No weights, no training; nothing tied to one checkpoint beyond the run's own logits.

Candidates are chosen, not sampled, so each node's q is one-hot and the tree verification (core/tree.py) is
lossless at any temperature, as for suffix decoding.
"""
from __future__ import annotations

import heapq
import itertools
from dataclasses import dataclass

import torch

from specviz.core.tree import depths

TOP_K = 8          # successors kept per token id (the reference code keeps the top 8)
PREFILL = -1       # the step that wrote a row filled from the prompt's own logits
# The weight of a candidate of each rank, for shaping the static tree (a node's score is the product along its
# path; the n best nodes are kept). Rank 0 is the target's own argmax after that token last time.
RANK_WEIGHTS = (0.5, 0.15, 0.08, 0.05, 0.03, 0.02, 0.015, 0.01)


class AdjacencyTable:
    """succ[t] = the top-k next tokens the target gave, the last time t was an input; written[t] = at which step."""

    def __init__(self, vocab: int, top_k: int = TOP_K, keep_p: bool = False):
        if vocab < 1 or top_k < 1:
            raise ValueError(f"the table needs a vocabulary and k >= 1, got {vocab} and {top_k}")
        self.top_k, self.keep_p = top_k, keep_p
        self.succ = torch.full((vocab, top_k), -1, dtype=torch.long)     # (V, k) -1 = not seen yet
        self.prob = torch.zeros((vocab, top_k)) if keep_p else None      # (V, k) the target's p of each successor
                                                                         # (read_dynamic's scores; None: not kept)
        self.written = torch.full((vocab,), -2, dtype=torch.long)        # (V,) step that wrote the row; -2 = never

    def __len__(self) -> int:
        """Token ids with a row."""
        return int((self.written > -2).sum())

    def update(self, inputs: torch.Tensor, logits: torch.Tensor, step: int) -> None:
        """inputs (t,) the token fed at each row, logits (t, V) the target's output there. A later row wins over an
        earlier one with the same input (it is the newer context)."""
        k = min(self.top_k, logits.shape[-1])
        last = {int(x): i for i, x in enumerate(inputs.tolist())}          # each input's latest row
        rows = torch.tensor(list(last.values()), dtype=torch.long)
        ids = torch.tensor(list(last.keys()), dtype=torch.long)
        x = logits[rows].float()                                           # (r, V) each input's latest row
        top = torch.topk(x, k, dim=-1)                                     # (r, k)
        self.succ[ids, :k] = top.indices
        if self.keep_p:                                                    # p = exp(logit - logsumexp): (r, k)
            self.prob[ids, :k] = (top.values - torch.logsumexp(x, dim=-1, keepdim=True)).exp()
        self.written[ids] = step

    def clone(self) -> "AdjacencyTable":
        t = AdjacencyTable.__new__(AdjacencyTable)
        t.top_k, t.keep_p, t.succ, t.written = self.top_k, self.keep_p, self.succ.clone(), self.written.clone()
        t.prob = None if self.prob is None else self.prob.clone()
        return t


def static_tree(n: int, weights: tuple[float, ...] = RANK_WEIGHTS, max_depth: int = 8,
                by_score: bool = False) -> list[tuple[int, int]]:
    """The n best nodes as (parent node, rank), breadth-first (parents before children), parent -1 = the root.
    A node's score is the product of its ranks' weights along its path, so every kept node's parent is kept.
    by_score: in order of score instead (still parents first: a child scores below its parent)."""
    if n < 1:
        raise ValueError(f"the tree needs at least 1 node, got {n}")
    frontier = [(-weights[r], (r,)) for r in range(len(weights))]          # (-score, path of ranks)
    chosen: list[tuple[float, tuple]] = []
    while frontier and len(chosen) < n:
        frontier.sort()
        neg, path = frontier.pop(0)
        chosen.append((-neg, path))
        if len(path) < max_depth:
            frontier += [(neg * weights[c], path + (c,)) for c in range(len(weights))]
    if not by_score:
        chosen.sort(key=lambda c: (len(c[1]), -c[0], c[1]))                # breadth-first, best first per depth
    index = {path: i for i, (_, path) in enumerate(chosen)}
    return [(index.get(path[:-1], -1), path[-1]) for _, path in chosen]


def chain_template(k: int) -> list[tuple[int, int]]:
    """The chain variant: the rank-0 successor of the rank-0 successor ..., k deep."""
    if k < 1:
        raise ValueError(f"the chain needs k >= 1, got {k}")
    return [(i - 1, 0) for i in range(k)]


@dataclass
class RecycledDraft:
    tokens: list[int]
    parents: list[int]
    recycled_from: list[int]     # the step whose candidates each node came from (PREFILL: the prompt's own logits)


def breadth_first(d: RecycledDraft) -> RecycledDraft:
    """The same tree with its nodes ordered by depth (stable), parents re-indexed."""
    order = sorted(range(len(d.tokens)), key=depths(d.parents).__getitem__)
    new = {old: j for j, old in enumerate(order)}
    return RecycledDraft([d.tokens[j] for j in order], [new[d.parents[j]] if d.parents[j] >= 0 else -1 for j in order],
                         [d.recycled_from[j] for j in order])


def read_dynamic(table: AdjacencyTable, root: int, n: int, max_depth: int = 8) -> RecycledDraft:
    """The n nodes whose paths the table's own probabilities rate highest (EAGLE-2's dynamic tree, Li et al. 2024,
    arXiv 2406.16858, read from the recycled rows instead of a draft head): best-first from the root, a node's score
    the product of its successors' p along its path (the target's p when it last read the parent's token). A row
    sure of its first successor grows a deep chain, a flat one a wide fan. Returned breadth-first."""
    tokens: list[int] = []
    parents: list[int] = []
    origin: list[int] = []
    depth: list[int] = []                                                  # each node's, for max_depth
    heap: list[tuple[float, int, int, int]] = []                          # (-score, order, parent node, token)
    order = itertools.count()                                              # ties: the earlier pushed (lower rank)

    rows: dict[int, list[tuple[float, int]]] = {}                          # token -> [(p, successor)], by rank

    def push(parent: int, tok: int, score: float) -> None:
        if tok not in rows:                                                # read each row once, as Python lists
            seen = int(table.written[tok]) != -2
            rows[tok] = [] if not seen else [(p, s) for p, s in zip(table.prob[tok].tolist(),
                                                                    table.succ[tok].tolist()) if s >= 0]
        for p, s in rows[tok]:
            heapq.heappush(heap, (-score * p, next(order), parent, s))

    push(-1, root, 1.0)
    while heap and len(tokens) < n:
        neg, _, par, tok = heapq.heappop(heap)
        src = root if par < 0 else tokens[par]
        tokens.append(tok)
        parents.append(par)
        origin.append(int(table.written[src]))
        depth.append(1 + (depth[par] if par >= 0 else 0))
        if depth[-1] < max_depth:
            push(len(tokens) - 1, tok, -neg)
    return breadth_first(RecycledDraft(tokens, parents, origin))


def read_tree(table: AdjacencyTable, root: int, template: list[tuple[int, int]],
              limit: int | None = None) -> RecycledDraft:
    """The template filled from the table from `root`; a node whose parent's token has no row (or whose parent was
    dropped) is dropped with its subtree. Parents are re-indexed to the nodes kept. limit: keep the first `limit`
    nodes that can be read (a template in order of score, static_tree(by_score=True), then fills the budget with
    the next best nodes instead of leaving it unused), returned breadth-first."""
    tokens: list[int] = []
    parents: list[int] = []
    origin: list[int] = []
    kept: dict[int, int] = {}                                              # template node -> draft node
    for i, (par, rank) in enumerate(template):
        if limit is not None and len(tokens) >= limit:
            break
        if par >= 0 and par not in kept:
            continue
        t = root if par < 0 else tokens[kept[par]]
        if rank >= table.top_k or int(table.written[t]) == -2:
            continue
        tok = int(table.succ[t, rank])
        if tok < 0:
            continue
        kept[i] = len(tokens)
        tokens.append(tok)
        parents.append(kept[par] if par >= 0 else -1)
        origin.append(int(table.written[t]))
    d = RecycledDraft(tokens, parents, origin)
    return breadth_first(d) if limit is not None else d
