"""How far copying can go on a given text: replaying drafting rules on it, and the ceiling none passes.

Under greedy verification a pass keeps the longest prefix of its draft (for a tree: the longest root path)
that the text continues with, plus one token from the target. So on a fixed text (what plain greedy
decoding writes; a lossless speculative run writes the same) a copying rule's passes can be replayed
without the model, and compared with a ceiling:

  ceiling  at every pass, draft exactly the longest run of the coming text (at most `cap` tokens) that some
           searched text holds right after `min_match` tokens equal to the context's last `min_match` tokens.

`min_match` is the evidence a rule needs before it drafts: lookup's match rule drafts from 2 matched tokens,
suffix decoding from 1; with 0 the ceiling may copy from anywhere (it knows the future, no rule can). No rule
that drafts only after `min_match` matched tokens, copying a run from one place (a chain, or a path of a
suffix tree, which is a run of some searched text), keeps more tokens in fewer passes: the run available
at step t shifted by one is available at t + 1 with one more matched token, so the ceiling's position
stays ahead of any rule's after every pass: its τ is a ceiling. It drafts nothing it loses, so with a verify
cost linear in the drafted tokens (the measured v(k) nearly is) its cost-model speedup is one too: a replay's
drafted lengths are priced by core/costmodel.passes_speedup, the one pricing module.
"""
from __future__ import annotations

from typing import Callable, Sequence

CAP = 24   # the longest run a pass may draft (lookup's and suffix's default depth)


def _run_after(src: Sequence[int], p: int, end: int, rest: Sequence[int], cap: int) -> int:
    """Tokens of `rest` that src[p + 1:end] starts with, at most cap."""
    n = 0
    while n < cap and n < len(rest) and p + 1 + n < end and src[p + 1 + n] == rest[n]:
        n += 1
    return n


def supported_run(ctx: Sequence[int], rest: Sequence[int], sources: Sequence[Sequence[int]] = (),
                  min_match: int = 1, cap: int = CAP) -> int:
    """The longest prefix of `rest` (at most cap) that ctx itself (only what is already in it) or one of
    `sources` holds right after min_match tokens equal to ctx's last min_match tokens."""
    T, best = len(ctx), 0
    if min_match > T:
        return 0
    tail = list(ctx[T - min_match:]) if min_match else []
    for src, end in [(ctx, T)] + [(s, len(s)) for s in sources]:
        for p in range(min_match - 1, end - 1):
            if min_match and list(src[p - min_match + 1:p + 1]) != tail:
                continue
            best = max(best, _run_after(src, p, end, rest, cap))
            if best == min(cap, len(rest)):
                return best
    return best


def ceiling(prompt: Sequence[int], text: Sequence[int], sources: Sequence[Sequence[int]] = (),
            min_match: int = 1, cap: int = CAP) -> list[int]:
    """The ceiling's drafted length per pass over `text` (module docstring)."""
    t, lengths, ctx = 0, [], list(prompt)
    while t < len(text):
        n = supported_run(ctx, text[t:], sources, min_match, cap)
        lengths.append(n)
        ctx.extend(text[t:t + n + 1])
        t += n + 1
    return lengths


def kept_along(tokens: Sequence[int], parents: Sequence[int], text: Sequence[int], t: int) -> int:
    """What greedy verification keeps of a drafted tree (parents first, -1 = the root) when the target writes
    `text` from position t: the longest root path that text[t:] starts with."""
    depth: dict[int, int] = {}
    kept = 0
    for i, (x, pa) in enumerate(zip(tokens, parents)):
        d = 0 if pa < 0 else depth.get(pa)
        if d is not None and t + d < len(text) and text[t + d] == x:
            depth[i] = d + 1
            kept = max(kept, d + 1)
    return kept


def replay(prompt: Sequence[int], text: Sequence[int],
           draft: Callable[[list[int]], tuple[Sequence[int], Sequence[int] | None]]) -> list[int]:
    """Drafted tokens per pass when draft(context) proposes (tokens, parents): a tree (each node's parent
    index or -1, parents first), or a chain when parents is None; greedy acceptance keeps the longest root
    path that `text` continues with."""
    t, nodes, ctx = 0, [], list(prompt)
    while t < len(text):
        tokens, parents = draft(list(ctx))
        if parents is None:
            parents = range(-1, len(tokens) - 1)                      # a chain: token i follows token i - 1
        kept = kept_along(tokens, parents, text, t)
        nodes.append(len(tokens))
        ctx.extend(text[t:t + kept + 1])
        t += kept + 1
    return nodes


def tokens_per_pass(text: Sequence[int], lengths: Sequence[int]) -> float:
    """τ of a replay: the text's tokens ÷ its passes."""
    return len(text) / len(lengths) if lengths else 0.0
