"""Typed records: the only thing that crosses from the engine to the UI, CLI, bench and tests.

Every number uses the names and definitions of docs/metrics.md:
    draft_acceptance_rate  alpha-hat = accepted / drafted  (tau = 1 + alpha-hat * k-bar exactly)
    alpha                  accepted / tested, tested = accepted + rejections (the papers' alpha)
    tokens_per_pass        tau = emitted / target passes
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from specviz.core.block import BlockVerdict
from specviz.core.tree import depths

TOP_N = 10  # how many tokens of p and q a step keeps for the bar charts


@dataclass
class TopTokens:
    ids: list[int]
    probs: list[float]


@dataclass
class StepRecord:
    index: int                     # 0-based step number (= target pass number)
    k: int                         # draft length asked for this step (adaptive k may change it)
    context_len: int               # committed tokens before this step (prompt included)
    drafted: list[int]             # draft token ids, one per tree node (may be empty: a step with no draft)
    decisions: list[bool]          # per tested node: accepted?
    draws: list[float | None]      # uniform r per tested node (None when greedy)
    ratios: list[float]            # p(x)/q(x) per tested node (p: the residual left by older siblings)
    n_accepted: int                # accepted drafts (the accepted path's length)
    next_token: int                # correction or bonus
    next_origin: str               # "correction" | "bonus"
    emitted: list[int]             # accepted drafts + next_token (truncated at EOS / max_new_tokens)
    draft_s: float                 # wall time spent drafting
    verify_s: float                # wall time of the target pass (+ acceptance)
    logit_top1: list[float]        # target's top logit at each emitted position
    logit_gap: list[float]         # target's top1 - top2 logit at each emitted position
    greedy: bool = True
    q_deterministic: bool = False  # True when the proposer gave no q (lookup): q is one-hot
    # The draft as a tree (core/tree.py); a chain has parents [-1, 0, 1, ...] and tested = path (+ the rejection)
    parents: list[int] = field(default_factory=list)  # parent node of each drafted node (-1: the root)
    tested: list[int] = field(default_factory=list)   # the node each decision is about
    path: list[int] = field(default_factory=list)     # accepted nodes, root's child first
    seen_in: list[str] | None = None                  # where each node's token was seen (suffix, lookup), else None
    held: str | None = None                           # no draft on purpose, why (a gate was shut), else None
    # For the charts (only filled when recording is on):
    p_top: list[TopTokens] = field(default_factory=list)  # root + one per node; softmax at T=1 when greedy
    q_top: list[TopTokens] = field(default_factory=list)  # one per drafted node
    # (V,) p at the node whose last child was rejected (the distribution in force)
    p_rejected: torch.Tensor | None = None
    q_rejected: torch.Tensor | None = None  # (V,) q of the last rejected node
    # The anatomy of the pass: the committed token fed first, and KV cache lengths (entries) measured
    # before the step, after the target pass (drafting, for the drafter) and after the rollback.
    last_token: int = -1
    target_cache: tuple[int, int, int] = (0, 0, 0)
    drafter_cache: tuple[int, int, int] | None = None  # None: the proposer keeps no KV cache of its own
    feature_layers: list[int] | None = None  # the target layers whose outputs the head was fed (EAGLE-3), else None
    verify: str = "token"          # "token" (token by token) or "block" (the chain verified jointly, core/block.py)
    block: BlockVerdict | None = None  # verify="block": every draft's h_i and p_i, the uniforms eta_i, and what
                                       # token-wise verification keeps with the same uniforms (weights.ratios)
    table_rows: int | None = None  # token recycling: token ids with a row in the adjacency table when this step
                                   # drafted (the proposer's own state); None for a proposer without a table

    @property
    def n_drafted(self) -> int:
        return len(self.drafted)

    @property
    def n_emitted(self) -> int:
        return len(self.emitted)

    @property
    def is_tree(self) -> bool:
        return self.parents != list(range(-1, len(self.parents) - 1))

    @property
    def depth(self) -> int:
        """Longest root-to-leaf path of the draft (= n_drafted for a chain)."""
        return max(depths(self.parents), default=0) if self.parents else self.n_drafted

    @property
    def rejected_at(self) -> int | None:
        """Depth index (0-based) where the last tested draft was rejected, if it was."""
        return self.n_accepted if self.decisions and not self.decisions[-1] else None

    def origins(self) -> list[str]:
        """Origin of each emitted token: 'accepted' draft, 'correction', 'bonus', or 'own' (nothing was drafted:
        the target's own token, as in plain decoding)."""
        out = ["accepted"] * self.n_accepted + [self.next_origin if self.drafted else "own"]
        return out[: len(self.emitted)]


@dataclass
class RunSummary:
    method: str
    text: str
    token_ids: list[int]
    prompt_tokens: int
    target_passes: int
    drafted: int
    accepted: int
    draft_acceptance_rate: float | None    # alpha-hat = accepted / drafted; None when nothing was drafted
    tested: int                            # accepted + rejections (drafts after a rejection are untested)
    alpha: float | None                    # accepted / tested (the papers' alpha); None when nothing tested
    tokens_per_pass: float                 # tau = emitted / target_passes
    per_position_acceptance: list[float]   # a_i, i = 1..k_max (index 0 is a_1); see per_position_acceptance()
    wall_s: float                          # end to end: prefill included, model load excluded
    tokens_per_s: float
    prefill_s: float
    draft_s: float
    verify_s: float
    mean_k: float                          # mean drafted length per step (k-bar)
    k_at_floor: int = 0                    # adaptive k: steps whose k sat at its floor of 1
    stopped_at_eos: bool = False

    @property
    def tokens(self) -> int:
        """Tokens the run added to the output."""
        return len(self.token_ids)

    @property
    def decode_tokens_per_s(self) -> float | None:
        """tokens/s with the prefill left out; None when the prefill took the whole run."""
        return rate(self.tokens, self.wall_s - self.prefill_s) if self.wall_s > self.prefill_s else None

    def retimed(self, wall_s: float) -> RunSummary:
        """The same run timed from the outside (engine/measure.run): its wall time, and its tokens/s from it."""
        return replace(self, wall_s=wall_s, tokens_per_s=rate(self.tokens, wall_s))

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def rate(count: float, per: float) -> float:
    """count ÷ per, 0.0 when per is not positive: tokens/s (per: seconds), τ and k̄ (per: target passes). The
    arithmetic of every rate a run record holds; a transformers' run, which has no record (bench/runs.py), uses it
    for its tokens/s and τ."""
    return count / per if per > 0 else 0.0


def is_tree_run(steps: list[StepRecord]) -> bool:
    """Whether any step drafted a tree (several candidates at a position): the chain law E[τ] = (1 − α^(k+1)) ÷
    (1 − α) does not describe such a run (docs/metrics.md, Trees)."""
    return any(s.is_tree for s in steps if s.parents)


def _has_child_at(s: StepRecord, i: int) -> bool:
    """Whether the step drafted something at depth i + 1 below its first i accepted nodes: for a chain, a draft at
    position i + 1; for a tree, a child of the i-th accepted node (of the root when i = 0)."""
    if not s.parents:                                           # a chain without its tree form
        return s.n_drafted > i
    anchor = -1 if i == 0 else s.path[i - 1]
    return anchor in s.parents


def per_position_acceptance(steps: list[StepRecord]) -> list[float]:
    """a_i for i = 1..k_max (docs/metrics.md): accepted at position i / steps that reached position i
    with a draft there (a draft at i, and positions < i all accepted). For a tree, position i = depth i along
    the accepted path, and a path that ended at a leaf above depth i did not reach i (nothing was tested there:
    not a failure). Flat a_i = independent acceptance; a_i rising with i = bursty (whole runs right or wrong).
    The list stops at the first position no step reached (reaching i+1 implies reaching i), so it is a_1..a_m,
    m <= k_max."""
    out = []
    for i in range(max((s.depth for s in steps), default=0)):  # depth = n_drafted for a chain
        reached = [s for s in steps if s.n_accepted >= i and _has_child_at(s, i)]
        if not reached:
            break
        out.append(sum(s.n_accepted > i for s in reached) / len(reached))
    return out


def summarize(method: str, text: str, token_ids: list[int], prompt_tokens: int,
              steps: list[StepRecord], wall_s: float, prefill_s: float,
              stopped_at_eos: bool = False) -> RunSummary:
    drafted = sum(s.n_drafted for s in steps)
    accepted = sum(s.n_accepted for s in steps)
    emitted = sum(s.n_emitted for s in steps)
    passes = len(steps)
    tested = sum(len(s.decisions) for s in steps)  # accepted + rejections (a tree may test several children)
    return RunSummary(
        method=method, text=text, token_ids=token_ids, prompt_tokens=prompt_tokens,
        target_passes=passes, drafted=drafted, accepted=accepted,
        draft_acceptance_rate=(accepted / drafted) if drafted else None,
        tested=tested, alpha=(accepted / tested) if tested else None,
        tokens_per_pass=rate(emitted, passes),
        per_position_acceptance=per_position_acceptance(steps), wall_s=wall_s,
        tokens_per_s=rate(emitted, wall_s),
        prefill_s=prefill_s, draft_s=sum(s.draft_s for s in steps),
        verify_s=sum(s.verify_s for s in steps),
        mean_k=rate(drafted, passes),
        k_at_floor=sum(1 for s in steps if s.k == 1),
        stopped_at_eos=stopped_at_eos,
    )


def combine(method: str, runs: list[RunSummary], steps: list[StepRecord]) -> RunSummary:
    """Several runs in order as one (a session's requests): their steps (`steps`, every run's in order), their
    output and their times summed, and every rate recomputed from the sums by summarize: the session's τ is its
    tokens ÷ its passes over every request, its tokens/s its tokens ÷ its wall time (prefills included)."""
    s = summarize(method, "".join(r.text for r in runs), [t for r in runs for t in r.token_ids],
                  sum(r.prompt_tokens for r in runs), steps, sum(r.wall_s for r in runs),
                  sum(r.prefill_s for r in runs), any(r.stopped_at_eos for r in runs))
    return replace(s, k_at_floor=sum(r.k_at_floor for r in runs))
