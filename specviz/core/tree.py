"""Tree verification: several candidates per position, checked in one target pass. Pure tensors, no model.

A tree's nodes are draft tokens; node i hangs under parents[i] (-1: the root, which is the last
committed token). Parents come before their children (parents[i] < i). A chain of k drafts is the
tree whose node i hangs under node i - 1, so the decode loop has one path for both.

The target reads the root and every node in one pass. Node i sees the context, the root, its
ancestors and itself (`tree_mask`), at position root + depth(i) (`position_offsets`).

Acceptance walks down from the root (SpecInfer's and EAGLE's multi-round speculative sampling).
At node u the target's p_u is in force; u's children are tried in order, each against the
residual left by the children rejected before it:
    r = p_u
    for each child c, whose token x_c was drawn from q_c:
        accept with probability min(1, r(x_c) / q_c(x_c)) and continue from c;
        otherwise r = norm(max(0, r - q_c)) and try the next child.
    no child accepted: the correction is sampled from r.  A leaf reached: the bonus from p_leaf.
Each child is one round of the chain rule's lossless argument, so the output follows p, provided q_c
is the distribution x_c was drawn from given the siblings before it (a top-k candidate chosen
deterministically has a one-hot q_c). Greedy: accept the child whose token is argmax p_u.
For a chain this is verify.verify() step for step, with the same random draws.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from specviz.core.sampling import sample
from specviz.core.verify import residual


def depths(parents: list[int]) -> list[int]:
    """Depth of each node: 1 for the root's children."""
    d: list[int] = []
    for par in parents:
        d.append(1 + (d[par] if par >= 0 else 0))
    return d


@dataclass
class Tree:
    tokens: torch.Tensor          # (n,) draft ids, parents before children
    parents: list[int]            # parent node of each node; -1 = the root (last committed token)
    q: torch.Tensor               # (n, V) the distribution each node's token was drawn from

    @classmethod
    def chain(cls, tokens: torch.Tensor, q: torch.Tensor) -> "Tree":
        return cls(tokens, list(range(-1, len(tokens) - 1)), q)

    def __len__(self) -> int:
        return len(self.parents)

    @property
    def is_chain(self) -> bool:
        return self.parents == list(range(-1, len(self) - 1))

    @property
    def depths(self) -> list[int]:
        return depths(self.parents)

    def children(self, u: int) -> list[int]:
        return [i for i, par in enumerate(self.parents) if par == u]

    def ancestors(self, i: int) -> list[int]:
        """Nodes from the root's child down to i, i included."""
        out = []
        while i >= 0:
            out.append(i)
            i = self.parents[i]
        return out[::-1]

    def pruned(self, max_depth: int) -> "Tree":
        """The nodes at depth <= max_depth (parents re-indexed)."""
        keep = [i for i, d in enumerate(self.depths) if d <= max_depth]
        new = {old: j for j, old in enumerate(keep)}
        idx = torch.tensor(keep, dtype=torch.long)
        return Tree(self.tokens[idx], [new.get(self.parents[i], -1) for i in keep], self.q[idx])


def tree_mask(parents: list[int]) -> torch.Tensor:
    """(n+1, n+1) bool: row/column 0 is the root, row i+1 is node i; True = may attend."""
    n = len(parents)
    m = torch.zeros(n + 1, n + 1, dtype=torch.bool)
    m[:, 0] = True                                   # everyone sees the root
    for i, par in enumerate(parents):
        m[i + 1, i + 1] = True
        if par >= 0:
            m[i + 1] |= m[par + 1]                   # and whatever its parent sees
    return m


def position_offsets(parents: list[int]) -> torch.Tensor:
    """(n+1,) position of the root and of each node, relative to the root."""
    return torch.tensor([0] + depths(parents), dtype=torch.long)


@dataclass
class TreeVerdict:
    path: list[int]               # accepted nodes, the root's child first
    next_token: int               # the correction (all children of the path's end rejected) or the bonus
    origin: str                   # "correction" | "bonus"
    tested: list[int]             # nodes tested, in order
    decisions: list[bool]         # accepted? per tested node
    ratios: list[float]           # r(x)/q(x) per tested node (r = p, or the residual left by its older siblings)
    draws: list[float | None]     # the uniform per tested node (None when greedy)


def verify_tree(tree: Tree, p: torch.Tensor, greedy: bool,
                generator: torch.Generator | None = None) -> TreeVerdict:
    """tree of n nodes, p (n+1, V): row 0 at the root, row i+1 at node i -> TreeVerdict."""
    n = len(tree)
    assert p.shape[0] == n + 1 and tree.q.shape[0] == n, (p.shape, tree.q.shape)
    uniforms = torch.rand(n, generator=generator).tolist() if (n and not greedy) else [None] * n
    path, tested, decisions, ratios, draws = [], [], [], [], []
    u = -1
    while True:
        row = p[u + 1]                                                    # (V,) p at node u
        r = row
        accepted = None
        for c in tree.children(u):
            x, qx = int(tree.tokens[c]), float(tree.q[c, int(tree.tokens[c])])
            ratio = float(r[x]) / qx if qx > 0 else float("inf")
            ok = (int(row.argmax()) == x) if greedy else uniforms[c] < min(1.0, ratio)
            tested.append(c), decisions.append(ok), ratios.append(ratio), draws.append(uniforms[c])
            if ok:
                accepted = c
                break
            if not greedy:
                r = residual(r, tree.q[c])                                # (V,) what the next child faces
        if accepted is None:
            origin = "correction" if tree.children(u) else "bonus"
            nxt = int(row.argmax()) if greedy else sample(r, generator)
            return TreeVerdict(path, nxt, origin, tested, decisions, ratios, draws)
        path.append(accepted)
        u = accepted
