"""The tree calculator: expected tokens per pass of a draft tree, from measured per-rank acceptance. Pure Python.

A tree's step keeps one root-to-node path and emits one token more. A node is kept only if its parent was, and
then if it is the child the verifier kept. With b_j = P(the j-th child tried is the one kept | its parent kept),
measured from a run (`rank_acceptance`), the chance the path to a node is kept is the product of b over the ranks
on that path, and

    E[τ] = 1 + Σ over nodes of P(the path to the node is kept)

(each kept node is one emitted token; the 1 is the correction or bonus). A chain of k is the tree whose nodes all
have rank 0: E[τ] = 1 + b_0 + b_0² + … + b_0^k, the chain law with α = b_0. The best tree of n nodes for given b
(EAGLE-2's and Sequoia's objective: arXiv 2406.16858, 2402.12374) adds nodes in order of that product: a node's
value never exceeds its parent's or, when b falls with rank, its older sibling's, so the n best values form a tree.
"""
from __future__ import annotations

import heapq

from specviz.core.costmodel import VCost, v_at


def ranks(parents: list[int]) -> list[int]:
    """Each node's rank among its parent's children (0: the first child, tried first)."""
    seen: dict[int, int] = {}
    out = []
    for par in parents:
        out.append(seen.get(par, 0))
        seen[par] = out[-1] + 1
    return out


def rank_acceptance(steps: list) -> list[float]:
    """b_j from step records (core/records.StepRecord with parents, path): of the nodes on the accepted path (the
    root included) that had more than j children, the share whose (j+1)-th child was the one kept. Only nodes the
    walk reached count (the path's own nodes), so a shallow leaf is not a failure."""
    kept: dict[int, int] = {}
    had: dict[int, int] = {}
    for s in steps:
        if not s.parents:
            continue
        rk = ranks(s.parents)
        for i, u in enumerate([-1, *s.path]):
            n_children = sum(1 for par in s.parents if par == u)
            for j in range(n_children):
                had[j] = had.get(j, 0) + 1
            if i < len(s.path):                                    # the child of u that was kept
                kept[rk[s.path[i]]] = kept.get(rk[s.path[i]], 0) + 1
    return [kept.get(j, 0) / had[j] for j in range(max(had, default=-1) + 1)]


def path_probabilities(parents: list[int], b: list[float]) -> list[float]:
    """P(the path to each node is kept) = Π b_rank along it (a rank beyond the measured ones: 0)."""
    rk = ranks(parents)
    out: list[float] = []
    for i, par in enumerate(parents):
        own = b[rk[i]] if rk[i] < len(b) else 0.0
        out.append(own * (out[par] if par >= 0 else 1.0))
    return out


def expected_tau(parents: list[int], b: list[float]) -> float:
    """E[τ] = 1 + Σ over nodes of P(the path to the node is kept)."""
    return 1.0 + sum(path_probabilities(parents, b))


def best_tree(b: list[float], n: int) -> list[int]:
    """Parents of the n-node tree with the highest E[τ] for per-rank acceptance b (grown greedily: the frontier's
    most likely node first; exact when b falls with rank, as measured acceptance does)."""
    parents: list[int] = []
    frontier = [(-b[0], -1, 0)] if b and n > 0 else []                 # (−P(path), parent, rank)
    value: list[float] = []
    while frontier and len(parents) < n:
        neg, par, rank = heapq.heappop(frontier)
        parents.append(par)
        value.append(-neg)
        me = len(parents) - 1
        if len(b) > 0:
            heapq.heappush(frontier, (-value[me] * b[0], me, 0))       # its first child
        if rank + 1 < len(b):
            up = value[par] if par >= 0 else 1.0
            heapq.heappush(frontier, (-up * b[rank + 1], par, rank + 1))   # its next younger sibling
    return parents                                                     # parents come before their children


def chain(n: int) -> list[int]:
    return list(range(-1, n - 1))


def star(n: int) -> list[int]:
    """n candidates for the first position only."""
    return [-1] * n


def two_wide(n: int) -> list[int]:
    """Two candidates per level, the path continuing under the first: depth ⌈n/2⌉."""
    parents, spine = [], -1
    while len(parents) < n:
        parents.append(spine)
        first = len(parents) - 1
        if len(parents) < n:
            parents.append(spine)
        spine = first
    return parents


SHAPES = {"chain": chain, "two per level": two_wide, "star (all at depth 1)": star}


def depth(parents: list[int]) -> int:
    d: list[int] = []
    for par in parents:
        d.append(1 + (d[par] if par >= 0 else 0))
    return max(d, default=0)


def speedup(parents: list[int], b: list[float], c: float, v: VCost) -> float:
    """E[τ] ÷ (v(n) + n·c): a pass over n nodes costs v(n), as a chain of n would (docs/metrics.md, Trees)."""
    n = len(parents)
    return expected_tau(parents, b) / (v_at(v, n) + n * c)


def breakeven_scale(parents: list[int], b: list[float], c: float, v: VCost, tol: float = 1e-9) -> float | None:
    """The factor s on every b_j at which the tree breaks even (speedup 1): below s·b it slows decoding down.
    0.0: it pays at any acceptance; None: it cannot pay even at the largest valid s (Σ s·b_j = 1)."""
    n = len(parents)
    cost = v_at(v, n) + n * c
    if cost <= 1.0:
        return 0.0
    top = 1.0 / sum(b) if sum(b) > 0 else 0.0
    if top == 0.0 or expected_tau(parents, [top * x for x in b]) < cost:
        return None
    lo, hi = 0.0, top
    while hi - lo > tol:
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if expected_tau(parents, [mid * x for x in b]) < cost else (lo, mid)
    return (lo + hi) / 2
