"""Greedy loops, measured: a small model's greedy output repeats itself and lookup copies the loop, so its
greedy numbers on novel prompts flatter it; sampling breaks the loops (Compare proposers' second panel)."""
from __future__ import annotations

from specviz.core.sampling import SamplingConfig
from specviz.engine.comparisons import compare, table
from specviz.engine.models import LoadedModel
from specviz.engine.workloads import NOVEL, Workload

LOOPS_AT = 0.2         # plain output repeating this share of its 4-grams loops: lookup copies the loop


def novel_loops(rows: list[dict]) -> tuple[list[dict], list[dict]]:
    """table() rows of plain decoding on novel workloads, and those of them whose output loops (repeats at
    least LOOPS_AT of its 4-grams): there lookup copies the loop, and its numbers flatter it."""
    novel = [r for r in rows if r["method"] == "plain" and r["kind"] == NOVEL]
    return novel, [r for r in novel if r["repetition"] >= LOOPS_AT]


def lookup_vs_plain(rows: list[dict]) -> list[tuple[dict, dict]]:
    """greedy_vs_sampled() rows paired: (lookup's row, the plain row of the same workload and mode)."""
    plain = {(r["workload"], r["mode"]): r for r in rows if r["method"] == "plain"}
    return [(r, plain[r["workload"], r["mode"]]) for r in rows if r["method"] == "lookup"]


def greedy_vs_sampled(target: LoadedModel, workloads: list[Workload], k: int = 5, n: int = 3,
                      max_new_tokens: int = 48, temperature: float = 0.8, seed: int = 0,
                      progress=None) -> list[dict]:
    """Lookup vs plain on the same prompts, greedy and sampled: table rows with a 'mode' column.

    With a small model, greedy output loops, and lookup copies the loop; sampling breaks the loops.
    Lookup runs the fixed-k rule here: k tokens per match, the k the caller chose."""
    rows = []
    modes = [("greedy", SamplingConfig()), (f"sampled T={temperature:g}", SamplingConfig(temperature))]
    for i, (mode, samp) in enumerate(modes):
        sub = (lambda f, t, i=i: progress((i + f) / len(modes), f"{mode}: {t}")) if progress else None  # noqa: E731
        runs = compare(target, workloads, ["lookup"], [k], n, samp, max_new_tokens, seed, progress=sub, k_rule="fixed")
        for row in table(runs):
            row["mode"] = mode
            rows.append(row)
    return rows
