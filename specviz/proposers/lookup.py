"""n-gram prompt lookup: no weights; copy what followed the last occurrence of the context's tail.

Search: take the last n tokens of the context, find an earlier occurrence, and propose the (up to)
k tokens that followed it. With n_min < n_max the widest n that matches wins (as vLLM's
prompt_lookup_min/max). No match: a step with no draft.

How many tokens (`K_RULES`):
  fixed  k every time a match is found (transformers' and vLLM's n-gram proposers; what the k/n sweep teaches);
  match  as far as the evidence goes: the longest earlier match of the context's tail, m tokens (up to
         n_max, default MAX_MATCH), drafts floor(factor * m) tokens, at most k; no draft when m < n_min.
         This is SuffixDecoding's length rule (arXiv 2411.04975; vLLM's suffix_decoding_max_spec_factor)
         applied to one copied chain: a long match is a copy in progress, a short one is a guess.

  sole   (an option of the match rule, on in the registry's default lookup) when the context's last n_min
         tokens occurred exactly once before, draft k tokens whatever m is: a run of tokens seen once in the
         context is evidence of a copy; a short run seen many times (", the", a newline and an indent) is not.
  follow (an option of the match rule, on in the registry's default lookup) which occurrence: the one whose
         copy would start where the last draft's kept tokens ended in the source (within a few tokens),
         when one matches n_min tokens; else the longest, as below. A copy goes on from where it was.

Which occurrence: specviz's rule ("recent") takes the most recent one; vLLM's n-gram proposer
("earliest", its KMP search over the reversed context) takes the earliest among the longest matches.
Replayed on the model's own texts (scripts/copy_bound.py --held-out), choosing among the longest matches
by how many other occurrences agree with each continuation, or by how much of the text before the match
agrees at the same offset, kept no more than "recent" (docs/copying.md); the sole and follow options gained.
"""
from __future__ import annotations

import torch

from specviz.core.errors import InputError, check_choice
from specviz.core.suffix import MAX_TREE_DEPTH
from specviz.proposers.base import Context, Draft, Proposer, empty_draft

RULES = ("recent", "earliest")  # specviz's rule, vLLM's rule
K_RULES = ("fixed", "match")    # draft k tokens, or as many as the match length justifies
MAX_MATCH = MAX_TREE_DEPTH      # the match rule's default longest match (and its default k, as vLLM's suffix method)
# The match rule's defaults, one setting for every workload: chosen on this 2-core CPU from tokens per pass and
# the bench's v(k) (scripts/copy_rules.py, float32, the same text for every setting): drafts up to 4 x the match,
# from 2 matched tokens, gave the cost model's decode-only speedup 3.85 (median of the four copy-heavy workloads)
# against 3.79 for 3 x, 3.61 for 1.5 x and 3.30 for transformers-like fixed k = 10; novel prompts stay at ~1.0x
# sampled (lowest 0.99). A verify pass over 24 tokens costs ~1.5 plain steps, so a long draft on a long match is
# cheap and a wasted one costs little. vLLM's suffix default factor is 1.0.
MATCH_MIN, MATCH_FACTOR = 2, 4.0
# A sole occurrence of the last MATCH_MIN tokens drafts k: replayed on the model's bfloat16 texts of the bench's
# four copy-heavy workloads and seven held-out ones (docs/copying.md), it kept 0.919 of the m≥2 ceiling at the
# median of all eleven against 0.898 without it (the four: 0.927 against 0.905).
SOLE_FULL = True          # the registry's default lookup where the machine is not timed; PromptLookup's own: off
# ... but a sole draft is 24 tokens off a 2-token match, and whether that pays depends on what a wide verify pass
# costs. Replayed on the eleven copy-heavy texts and the four novel ones (greedy float32, scripts/lookup_sole_replay.py)
# with the AVX2 EPYC's v(k) scaled from free passes to its own, the sole option raises the copy-heavy median while
# a pass of 1 + 24 rows costs up to ~1.55 one-token steps and lowers it beyond (on novel text it never gains):
# the registry's lookup takes it where this machine's timed v_wide is at most SOLE_MAX_V (docs/copying.md).
SOLE_MAX_V = 1.55
# Following the copy: after a draft, the next copy is looked for where the kept part of it ended in the source, from
# FOLLOW_BACK tokens before to FOLLOW_AHEAD after (an edit skips a few source tokens). With the sole rule it kept
# 0.927 of the m≥2 ceiling at the median of the eleven texts against 0.919 without (docs/copying.md); windows of
# 16 and 32 tokens gave 0.926.
FOLLOW, FOLLOW_BACK, FOLLOW_AHEAD = True, 2, 8


def sole_pays(v_wide: float | None) -> tuple[bool, str]:
    """Whether the registry's lookup takes the sole option on a machine where a verify pass of 1 + 24 rows costs
    v_wide one-token steps (None: not timed here, SOLE_FULL), and why, in words."""
    m, k = MATCH_MIN, MAX_MATCH
    on = SOLE_FULL if v_wide is None else v_wide <= SOLE_MAX_V
    what = (f"a {m}-token match seen only once before drafts all {k} tokens" if on else
            f"a {m}-token match seen only once before drafts {MATCH_FACTOR * m:g} tokens ({MATCH_FACTOR:g} × the "
            f"match), not {k}")
    if v_wide is None:
        return on, f"{what} (the default: this machine's verify pass of {1 + k} rows was not timed)"
    return on, (f"{what}: a verify pass of {1 + k} rows costs {v_wide:.2f} one-token steps here (a long draft off a "
                f"short match pays up to {SOLE_MAX_V:g})")


def occurrences(ids: list[int], n: int) -> int:
    """How many earlier positions p (something follows them: p < len(ids) - 1) end a copy of ids[-n:]."""
    T = len(ids)
    if n < 1 or T <= n:
        return 0
    tail = ids[-n:]
    return sum(1 for p in range(n - 1, T - 1) if ids[p] == tail[-1] and ids[p - n + 1:p + 1] == tail)


def find_continuation_at(ids: list[int], n: int, k: int, rule: str = "recent") -> tuple[list[int], int]:
    """(tokens that followed the most recent (or earliest) earlier match of ids[-n:], at most k; the position
    the first of them was copied from); ([], -1) when none."""
    T = len(ids)
    if n < 1 or k < 1 or T <= n:
        return [], -1
    tail = ids[-n:]
    starts = range(T - n - 1, -1, -1) if rule == "recent" else range(0, T - n)  # the tail itself is excluded
    for start in starts:
        if ids[start:start + n] == tail:
            follow = ids[start + n: start + n + k]
            if follow:
                return follow, start + n
    return [], -1


def find_continuation(ids: list[int], n: int, k: int, rule: str = "recent") -> list[int]:
    """Tokens that followed the most recent (or earliest) earlier match of ids[-n:], at most k; [] when none."""
    return find_continuation_at(ids, n, k, rule)[0]


def lookup_at(ids: list[int], n_min: int, n_max: int, k: int, rule: str = "recent") -> tuple[list[int], int, int]:
    """Widest match first: (draft, n used, position the draft was copied from) or ([], 0, -1)."""
    for n in range(n_max, n_min - 1, -1):
        draft, at = find_continuation_at(ids, n, k, rule)
        if draft:
            return draft, n, at
    return [], 0, -1


def lookup(ids: list[int], n_min: int, n_max: int, k: int, rule: str = "recent") -> tuple[list[int], int]:
    """Widest match first: returns (draft, n used) or ([], 0)."""
    draft, n, _ = lookup_at(ids, n_min, n_max, k, rule)
    return draft, n


def longest_match(ids: list[int], max_len: int, rule: str = "recent") -> tuple[int, int]:
    """(m, p): the longest m <= max_len such that the m tokens ending at an earlier position p (p < T - 1,
    so something follows it) equal the context's last m tokens; among equal m the most recent p (or the
    earliest, rule 'earliest'). (0, -1) when the last token never occurred before."""
    T = len(ids)
    if T < 2 or max_len < 1:
        return 0, -1
    last = ids[-1]
    order = range(T - 2, -1, -1) if rule == "recent" else range(0, T - 1)
    best_m, best_p = 0, -1
    for p in order:
        if ids[p] != last:
            continue
        m = 1
        while m < max_len and m <= p and ids[p - m] == ids[T - 1 - m]:
            m += 1
        if m > best_m:                   # strictly longer: ties keep the first found in `order`
            best_m, best_p = m, p
            if m == max_len:
                break
    return best_m, best_p


def matches(ids: list[int], max_len: int) -> list[tuple[int, int]]:
    """(p, m) for every earlier position p (p < T - 1) holding the context's last token, m = how many tokens
    ending at p equal the context's last ones (at most max_len); most recent first."""
    T = len(ids)
    out = []
    for p in range(T - 2, -1, -1):
        if ids[p] == ids[-1]:
            m = 1
            while m < max_len and m <= p and ids[p - m] == ids[T - 1 - m]:
                m += 1
            out.append((p, m))
    return out


def near_match(ids: list[int], n_min: int, n_max: int, near: int) -> tuple[int, int]:
    """(m, p) of the match of at least n_min tokens whose copy would start (at p + 1) closest to `near`, from
    FOLLOW_BACK tokens before it to FOLLOW_AHEAD after (the longer match on a tie); (0, -1) when none is."""
    pool = [(p, m) for p, m in matches(ids, n_max) if m >= n_min and -FOLLOW_BACK <= p + 1 - near <= FOLLOW_AHEAD]
    if not pool:
        return 0, -1
    p, m = min(pool, key=lambda pm: (abs(pm[0] + 1 - near), -pm[1]))
    return m, p


def match_lookup_at(ids: list[int], n_min: int, n_max: int, k: int, factor: float = MATCH_FACTOR,
                    rule: str = "recent", sole: bool = False, near: int | None = None) -> tuple[list[int], int, int]:
    """match_lookup and the position its draft was copied from (-1 when there is no draft). near: where the
    copy in progress goes on (PromptLookup's follow option): a match whose copy starts near it is taken first."""
    m, p = longest_match(ids, n_max, rule)
    if m < n_min or m == 0:
        return [], m, -1
    if near is not None:
        m_near, p_near = near_match(ids, n_min, n_max, near)
        if p_near >= 0:
            m, p = m_near, p_near
    length = min(k, int(factor * m + 1e-6))
    if sole and length < k and occurrences(ids, n_min) == 1:      # the only earlier copy of the tail: all k
        length = k
    draft = ids[p + 1: p + 1 + length]
    return draft, m, (p + 1 if draft else -1)


def match_lookup(ids: list[int], n_min: int, n_max: int, k: int, factor: float = MATCH_FACTOR,
                 rule: str = "recent", sole: bool = False) -> tuple[list[int], int]:
    """The match rule: (draft, m), draft = the min(k, floor(factor * m)) tokens that followed the longest
    earlier match (m <= n_max), all k of them with `sole` when the last n_min tokens occurred only once
    before; ([], m) when m < n_min."""
    draft, m, _ = match_lookup_at(ids, n_min, n_max, k, factor, rule, sole)
    return draft, m


def seen_where(pos: int, prompt_len: int) -> str:
    """Where the token at `pos` of this request's committed text stands: 'this prompt' or 'this output'
    (the labels the suffix proposer gives its nodes)."""
    return "this prompt" if pos < prompt_len else "this output"


class PromptLookup(Proposer):
    name = "lookup"
    deterministic = True

    def __init__(self, n: int = 3, n_min: int | None = None, n_max: int | None = None, rule: str = "recent",
                 k_rule: str = "fixed", factor: float = MATCH_FACTOR, sole: bool = False, follow: bool = False):
        check_choice("lookup k rule", k_rule, K_RULES)
        self.k_rule = k_rule
        self.n_min = n_min if n_min is not None else n
        self.n_max = n_max if n_max is not None else (MAX_MATCH if k_rule == "match" else n)
        if self.n_min < 1:
            raise InputError(f"n must be >= 1, got {self.n_min}")
        if self.n_min > self.n_max:
            raise InputError(f"n-min ({self.n_min}) must not exceed n-max ({self.n_max})")
        if rule not in RULES:
            raise InputError(f"lookup rule must be one of {', '.join(RULES)}, got {rule!r}")
        if not factor > 0:
            raise InputError(f"the spec factor must be > 0, got {factor}")
        self.rule, self.factor, self.sole, self.follow = rule, factor, sole, follow   # the match rule's options
        self.sole_reason: str | None = None   # why the registry chose sole on or off here (engine/methods.py)
        self._last: tuple[int, list[int], int] | None = None   # follow: (copied from, draft, context length) last step
        self._near: int | None = None                           # follow: where the copy in progress goes on
        self.last_n = 0  # the n that matched at the last step (0: no match; the match rule: the match length)
        self.prompt_len = 0  # set by reset(): where this request's prompt ends (for seen_in)

    def reset(self, prompt_ids: torch.Tensor) -> None:
        self.prompt_len = len(prompt_ids)
        self._last, self._near = None, None

    def _follow(self, ids: list[int]) -> int | None:
        """Where the copy in progress goes on: past the last draft's kept tokens (and the target's own token
        after them); without a draft last step, as many tokens on as were committed since. None: no copy yet."""
        if self._last is None or len(ids) < self._last[2]:
            return None
        at, draft, T0 = self._last
        new = ids[T0:]
        if not new:
            return self._near                                            # the same context asked again
        if at < 0:
            return None if self._near is None else self._near + len(new)
        kept = 0
        while kept < min(len(draft), len(new)) and draft[kept] == new[kept]:
            kept += 1
        return at + kept + (1 if kept < len(new) else 0)

    def propose(self, ctx: Context, k: int) -> Draft:
        ids = ctx.ids.tolist()
        if self.k_rule == "match":
            self._near = self._follow(ids) if self.follow else None
            draft, self.last_n, at = match_lookup_at(ids, self.n_min, self.n_max, k, self.factor, self.rule,
                                                     self.sole, self._near)
            self._last = (at, draft, len(ids))
        else:
            draft, self.last_n, at = lookup_at(ids, self.n_min, self.n_max, k, self.rule)
        if not draft:
            return empty_draft()
        return Draft(tokens=torch.tensor(draft, dtype=torch.long),  # (k',)
                     seen_in=[seen_where(at + j, self.prompt_len) for j in range(len(draft))])
