"""The anatomy of one verification pass, read from its StepRecord alone.

The target is fed k + 1 tokens: the last committed token and the k drafts. Under the causal mask,
output row i sees the cache and fed tokens 0..i, so it is the target's distribution for the *next*
position: row i scores draft i + 1 (the one-position shift), and row k — which has seen every
draft — gives the bonus token when all drafts are kept. After the verdict the cache is cut back to
the committed tokens: the entries of the rejected drafts are dropped.
"""
from __future__ import annotations

from dataclasses import dataclass

from specviz.core.records import StepRecord


@dataclass
class Row:
    row: int            # output row of the pass (0..k)
    sees: str           # what that row attends to
    position: int       # absolute position whose token this row's distribution is for
    scores: str         # what the row is used for
    verdict: str        # accepted / rejected / not tested / bonus / correction drawn here / unused


@dataclass
class Anatomy:
    fed: list[tuple[int, int, str]]   # (position, token id, role) for the k + 1 inputs
    rows: list[Row]
    mask: list[list[int]]             # (k+1) x (k+2): column 0 = the cached context, then the fed tokens
    target_cache: tuple[int, int, int]
    drafter_cache: tuple[int, int, int] | None
    dropped_positions: list[int]      # target cache entries dropped at the rollback (absolute positions)
    drafter_dropped: list[int]


def of(rec: StepRecord) -> Anatomy:
    k, n, c = rec.n_drafted, rec.n_accepted, rec.context_len
    first = c - 1                                            # position of the last committed token
    fed = [(first, rec.last_token, "last committed token")] + [
        (first + 1 + i, t, f"draft d{i + 1}") for i, t in enumerate(rec.drafted)]
    mask = [[1] + [1 if j <= i else 0 for j in range(k + 1)] for i in range(k + 1)]
    rows = []
    for i in range(k + 1):
        sees = "the cache + " + ("the last committed token" if i == 0 else f"that token and d1..d{i}")
        if i < k:
            scores = f"p for position {first + 1 + i}: tests draft d{i + 1}"
            verdict = ("accepted" if i < n else "rejected: the correction is drawn from this row" if i == n
                       else "not tested (an earlier draft was rejected)")
        else:
            scores = f"p for position {first + 1 + k}: the token after the last draft"
            verdict = "the bonus token is drawn from this row" if n == k else "unused"
        rows.append(Row(i, sees, first + 1 + i, scores, verdict))
    t0, t1, t2 = rec.target_cache
    dropped = list(range(t2, t1))
    dc = rec.drafter_cache
    return Anatomy(fed, rows, mask, rec.target_cache, dc, dropped,
                   list(range(dc[2], dc[1])) if dc else [])
