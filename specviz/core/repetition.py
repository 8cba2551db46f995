"""How much a text loops: the share of its n-grams seen earlier in it (a column of the comparison tables)."""
from __future__ import annotations


def repetition(ids: list[int], n: int = 4) -> float:
    """Share of the output's n-grams that already occurred earlier in it: how much the text loops."""
    grams = [tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)]
    seen, repeats = set(), 0
    for g in grams:
        repeats += g in seen
        seen.add(g)
    return repeats / len(grams) if grams else 0.0
