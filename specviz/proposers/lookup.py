"""n-gram prompt lookup: no weights; copy what followed the last occurrence of the context's tail.

Search: take the last n tokens of the context, find an earlier occurrence, and propose the (up to)
k tokens that followed it. With n_min < n_max the widest n that matches wins (as vLLM's
prompt_lookup_min/max). No match: a step with no draft.

Which occurrence: specviz's rule ("recent") takes the most recent one; vLLM's n-gram proposer
("earliest", its KMP search over the reversed context) takes the earliest among the longest matches.
"""
from __future__ import annotations

import torch

from specviz.proposers.base import Context, Draft, Proposer, empty_draft


RULES = ("recent", "earliest")  # specviz's rule, vLLM's rule


def find_continuation(ids: list[int], n: int, k: int, rule: str = "recent") -> list[int]:
    """Tokens that followed the most recent (or earliest) earlier match of ids[-n:], at most k; [] when none."""
    T = len(ids)
    if n < 1 or k < 1 or T <= n:
        return []
    tail = ids[-n:]
    starts = range(T - n - 1, -1, -1) if rule == "recent" else range(0, T - n)  # the tail itself is excluded
    for start in starts:
        if ids[start:start + n] == tail:
            follow = ids[start + n: start + n + k]
            if follow:
                return follow
    return []


def lookup(ids: list[int], n_min: int, n_max: int, k: int, rule: str = "recent") -> tuple[list[int], int]:
    """Widest match first: returns (draft, n used) or ([], 0)."""
    for n in range(n_max, n_min - 1, -1):
        draft = find_continuation(ids, n, k, rule)
        if draft:
            return draft, n
    return [], 0


class PromptLookup(Proposer):
    name = "lookup"
    deterministic = True

    def __init__(self, n: int = 3, n_min: int | None = None, n_max: int | None = None, rule: str = "recent"):
        self.n_min = n_min if n_min is not None else n
        self.n_max = n_max if n_max is not None else n
        if self.n_min < 1:
            raise ValueError(f"n must be >= 1, got {self.n_min}")
        if self.n_min > self.n_max:
            raise ValueError(f"n-min ({self.n_min}) must not exceed n-max ({self.n_max})")
        if rule not in RULES:
            raise ValueError(f"lookup rule must be one of {', '.join(RULES)}, got {rule!r}")
        self.rule = rule
        self.last_n = 0  # the n that matched at the last step (0: no match)

    def propose(self, ctx: Context, k: int) -> Draft:
        draft, self.last_n = lookup(ctx.ids.tolist(), self.n_min, self.n_max, k, self.rule)
        if not draft:
            return empty_draft()
        return Draft(tokens=torch.tensor(draft, dtype=torch.long))
