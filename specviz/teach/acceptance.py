"""Acceptance as servers report it: one run's step records turned into the numbers vLLM logs, next to the
geometric law of the measured α.

vLLM (vllm/v1/spec_decode/metrics.py, SpecDecodingLogging.log) reports, over the passes that drafted
("num_drafts"):
    Avg Draft acceptance rate  = accepted tokens ÷ drafted tokens                (α̂ here)
    Mean acceptance length     = 1 + accepted tokens ÷ num_drafts                (τ over drafting passes)
    Per-position acceptance    = passes whose draft was kept at position i ÷ num_drafts
The per-position rate is *unconditional* (divided by every draft), unlike docs/metrics.md's a_i, which is
conditional on reaching position i; the two are tied by rate_i = a_1·a_2·…·a_i. A histogram of accepted
lengths follows from it: P(exactly i kept) = rate_i − rate_(i+1).
"""
from __future__ import annotations

from dataclasses import dataclass

from specviz.core.records import StepRecord, summarize


@dataclass
class ServerView:
    num_drafts: int                       # passes that drafted something
    draft_tokens: int
    accepted: int
    draft_acceptance_rate: float | None   # α̂ (vLLM: Avg Draft acceptance rate)
    mean_acceptance_length: float | None  # 1 + accepted / num_drafts
    per_position: list[float]             # vLLM's unconditional per-position rate, positions 1..k_max
    histogram: list[int]                  # passes keeping exactly i drafts, i = 0..k_max
    expected: list[float]                 # the same counts under the geometric law of α, each pass at its own length
    zero_share: float | None              # share of drafting passes that keep nothing
    alpha: float | None                   # accepted ÷ tested (what the geometric law takes)


def geometric(alpha: float, k: int) -> list[float]:
    """P(exactly i of k drafts kept), i = 0..k, when each is kept with probability α until the first rejection."""
    return [alpha ** i * (1 - alpha) for i in range(k)] + [alpha ** k]


def server_view(steps: list[StepRecord]) -> ServerView:
    drafting = [s for s in steps if s.n_drafted]
    k_max = max((s.depth for s in drafting), default=0)
    n = len(drafting)
    accepted = sum(s.n_accepted for s in drafting)
    drafted = sum(s.n_drafted for s in drafting)
    alpha = summarize("", "", [], 0, drafting, 0.0, 0.0).alpha if drafting else None
    hist = [sum(s.n_accepted == i for s in drafting) for i in range(k_max + 1)]
    expected = [0.0] * (k_max + 1)
    if alpha is not None:
        for s in drafting:
            for i, pr in enumerate(geometric(alpha, s.depth)):
                expected[i] += pr
    return ServerView(
        num_drafts=n, draft_tokens=drafted, accepted=accepted,
        draft_acceptance_rate=accepted / drafted if drafted else None,
        mean_acceptance_length=1 + accepted / n if n else None,
        per_position=[sum(s.n_accepted > i for s in drafting) / n for i in range(k_max)] if n else [],
        histogram=hist, expected=expected, zero_share=hist[0] / n if n else None, alpha=alpha)


def log_line(v: ServerView) -> str:
    """The run written as vLLM's SpecDecoding metrics log line (the fields a server operator reads)."""
    if not v.num_drafts:
        return "SpecDecoding metrics: nothing was drafted in this run"
    rates = ", ".join(f"{r:.3f}" for r in v.per_position)
    return (f"SpecDecoding metrics: Mean acceptance length: {v.mean_acceptance_length:.2f}, "
            f"Accepted: {v.accepted} tokens, Drafted: {v.draft_tokens} tokens, "
            f"Per-position acceptance rate: {rates}, Avg Draft acceptance rate: {100 * v.draft_acceptance_rate:.1f}%")
