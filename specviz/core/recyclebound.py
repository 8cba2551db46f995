"""How far token recycling could go on a given text: the real tree replayed, and the bounds above it. No model.

Under greedy verification a pass keeps the longest root path of its tree that the text continues with, plus one
token from the target (core/copybound.py's argument), so on plain decoding's own text a recycling run's passes are
fixed by its trees alone. Unlike copying, the table also learns from rows the text never shows (a rejected node's
logits), so the replay is given every row each pass handed the table (`Rows`: its inputs and the target's top-k
there, recorded once from a real run) and checks, pass by pass, that the tree it reads from the rebuilt table is
the tree the real pass fed: a faithful replay writes the real run's τ. At the same passes, with the same table:

  actual     the static tree the proposer reads (template in order of score, at most n nodes, depth <= the pass's k);
  same size  the most any tree of as many nodes as the actual one could keep, read from that table: the longest
             prefix of the coming text whose every token is among the kept successors (its top k) of the token
             before it, whose row exists; a chain of d nodes is a tree of d nodes, and no tree keeps more than
             its longest root path, so nothing read from that table keeps more at that size;
  n nodes    the same with the full budget of n nodes, whatever the actual tree drafted.
A perfect table (the text's next token always at rank 0 of its predecessor's row) is a policy of its own:
  perfect, template   the static template read from it keeps its all-rank-0 path (rank0_depth) every pass;
  perfect, n          any tree of n nodes keeps min(n, k) every pass: n + 1 tokens per pass.
actual <= same size <= n nodes at every pass; same size - actual is the static tree's shape, n nodes - same size
the budget the tree left unused, perfect - n nodes the table's evidence (rows missing, or the text's token not
among the top k the row keeps).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from specviz.core.copybound import kept_along
from specviz.core.costmodel import VCost, v_at
from specviz.core.recycle import PREFILL, AdjacencyTable, read_tree


@dataclass(frozen=True)
class Rows:
    """What one target pass handed the table: the token fed at each row and the target's top-k there, best first."""
    step: int                              # PREFILL for the prompt's rows, else the pass's index
    inputs: tuple[int, ...]
    top: tuple[tuple[int, ...], ...]       # (rows, k)


@dataclass(frozen=True)
class Pass:
    t: int            # text tokens committed before the pass
    nodes: int        # nodes the actual tree drafted
    kept: int         # of them kept (greedy: its longest root path the text continues with)
    same_size: int    # the most a tree of `nodes` nodes from the same table could keep
    full: int         # the most a tree of n nodes from the same table could keep
    stop: str = ""    # why `full` ended (STOPS)


def fill(table: AdjacencyTable, rows: Rows) -> None:
    """AdjacencyTable.update from top-k ids instead of logits: a later row wins over an earlier one."""
    last = {x: i for i, x in enumerate(rows.inputs)}
    k = min(table.top_k, len(rows.top[0]))
    for x, i in last.items():
        table.succ[x, :k] = torch.tensor(rows.top[i][:k], dtype=torch.long)
        table.written[x] = rows.step


def supported_run(table: AdjacencyTable, root: int, text: Sequence[int], t: int, cap: int) -> int:
    """The longest prefix of text[t:] (at most cap) whose every token is in its predecessor's row (root first)."""
    d, prev = 0, root
    while d < cap and t + d < len(text):
        if int(table.written[prev]) == -2 or text[t + d] not in table.succ[prev].tolist():
            break
        prev = text[t + d]
        d += 1
    return d


STOPS = ("row missing", "not in its row", "budget")   # why the longest supported run ended


def why_stopped(table: AdjacencyTable, root: int, text: Sequence[int], t: int, d: int) -> str:
    """Why supported_run stopped at d: the token before text[t + d] has no row (never an input yet), or its row (the
    target's top k the last time it was an input, in another context) does not hold text[t + d], or neither
    (the budget or the text ended first)."""
    if t + d >= len(text):
        return "budget"
    prev = root if d == 0 else text[t + d - 1]
    if int(table.written[prev]) == -2:
        return "row missing"
    return "not in its row" if text[t + d] not in table.succ[prev].tolist() else "budget"


def _depths(parents: Sequence[int]) -> list[int]:
    out: list[int] = []
    for pa in parents:
        out.append(1 + (out[pa] if pa >= 0 else 0))
    return out


def replay(prompt: Sequence[int], text: Sequence[int], rows: Sequence[Rows], vocab: int, top_k: int,
           template: list[tuple[int, int]], nodes: int, max_new: int, cap: int) -> list[Pass]:
    """The real run's passes over `text` (its rows: the prefill's, then one per pass, in order), re-read from the
    table they fill; raises ValueError where a pass fed other tokens than the tree replayed (not faithful)."""
    table = AdjacencyTable(vocab, top_k)
    todo = list(rows)
    while todo and todo[0].step == PREFILL:
        fill(table, todo.pop(0))
    t, out = 0, []
    while t < len(text):
        k = min(cap, max_new - t - 1)
        root = int(prompt[-1]) if t == 0 else int(text[t - 1])
        tokens, parents = [], []
        if k > 0:
            d = read_tree(table, root, template, nodes)
            keep = [i for i, dep in enumerate(_depths(d.parents)) if dep <= k]
            new = {old: j for j, old in enumerate(keep)}
            tokens = [d.tokens[i] for i in keep]
            parents = [new.get(d.parents[i], -1) for i in keep]
        if not todo or list(todo[0].inputs) != [root] + tokens:
            got = list(todo[0].inputs) if todo else "no rows"
            raise ValueError(f"pass {len(out)}: the replayed tree feeds {[root] + tokens}, the real pass fed {got}")
        kept = kept_along(tokens, parents, text, t)
        full = supported_run(table, root, text, t, min(nodes, max(k, 0)))
        out.append(Pass(t, len(tokens), kept, supported_run(table, root, text, t, min(len(tokens), k)), full,
                        why_stopped(table, root, text, t, full) if full < min(nodes, max(k, 0)) else "budget"))
        fill(table, todo.pop(0))
        t += kept + 1
    return out


def rank0_depth(template: list[tuple[int, int]], limit: int) -> int:
    """How deep the all-rank-0 path goes among the template's first `limit` nodes (what a table that always holds
    the text's next token at rank 0 lets the static tree keep per pass)."""
    depth: dict[int, int] = {}
    for i, (pa, rank) in enumerate(template[:limit]):
        if rank == 0 and (pa < 0 or pa in depth):
            depth[i] = 1 + (depth[pa] if pa >= 0 else 0)
    return max(depth.values(), default=0)


def perfect(n_text: int, per_pass: int, max_new: int, cap: int) -> list[int]:
    """Tokens kept per pass by a policy that keeps min(per_pass, the pass's k) drafts every pass."""
    t, out = 0, []
    while t < n_text:
        kept = min(per_pass, max(0, min(cap, max_new - t - 1)), n_text - t)
        out.append(kept)
        t += kept + 1
    return out


def tau(n_text: int, passes: int) -> float:
    return n_text / passes if passes else 0.0


def at_same_passes(n_text: int, passes: Sequence[Pass], field: str) -> float:
    """Tokens per pass had every pass kept `field` drafts (plus the target's token, within the text)."""
    got = sum(min(getattr(p, field) + 1, n_text - p.t) for p in passes)
    return got / len(passes) if passes else 0.0


def cost_per_pass(v_tree: VCost, nodes: Sequence[int]) -> float:
    """The cost model's mean cost of a pass, in plain steps: v_tree(nodes) (v(0) = 1)."""
    return sum(v_at(v_tree, n) for n in nodes) / len(nodes) if nodes else 0.0
