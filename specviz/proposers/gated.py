"""A proposer switched off while its recent drafts are mostly rejected: lookup gated on a running hit rate.

On novel text lookup still finds short, stray matches; each costs a wider verify pass and is rejected. A server
can watch the draft acceptance rate α̂ (kept ÷ drafted) of the last few drafts and stop drafting while it is low,
so those steps are ordinary decoding steps. A probe draft every few skipped steps lets the gate reopen when the
text turns copyable again. The rule and its defaults are this app's own (switching speculation off by batch size is
the other rule a server uses: Serving reality).

A gate can instead ask whether the recent passes paid on this machine (`Gate.v`, a measured {k: v(k)} table,
docs/metrics.md): a pass that verified n drafts costs v(n) plain steps and yields its kept drafts plus one token, so
the window's drafting passes paid while Σ (kept + 1) >= Σ v(n). It is the break-even of the cost model, applied to
the last few passes: on a CPU where a wide pass is nearly free it seldom closes, on one where each row costs
(no native bfloat16) it closes on text that keeps little. α̂ alone cannot say this for a tree (one path of many
nodes is kept however good the tree).
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from specviz.core.costmodel import v_at
from specviz.core.errors import InputError
from specviz.proposers.base import Context, Draft, Proposer, empty_draft


@dataclass(frozen=True)
class Gate:
    """Draft only while α̂ over the last `window` drafts is at least `threshold` — or, with `v` (a measured
    ((k, v(k)), ...) table of this machine), only while those drafts paid: Σ (kept + 1) >= Σ v(drafted). While
    closed, still draft on every `probe_every`-th step (a probe), whose outcome counts like any other draft."""
    threshold: float = 0.3
    window: int = 8
    probe_every: int = 4
    v: tuple[tuple[int, float], ...] | None = None
    where: str = ""      # where v was measured, for words()

    def check(self) -> None:
        if not 0.0 <= self.threshold <= 1.0:
            raise InputError(f"the gate's threshold must be between 0 and 1, got {self.threshold:g}")
        if self.v is not None and (not self.v or any(k < 1 or not b >= 1.0 for k, b in self.v)):
            raise InputError("the gate's v table needs at least one k >= 1, and v(k) >= 1 at each (a pass of k "
                             "drafts costs at least one plain step)")
        if self.window < 1 or self.probe_every < 1:
            raise InputError(f"the gate's window and probe interval must be >= 1, got {self.window} and "
                             f"{self.probe_every}")

    def words(self) -> str:
        probe = f"(a probe every {self.probe_every} steps)"
        if self.v is not None:
            at = f" {self.where}" if self.where else ""
            return (f"off while its last {self.window} drafting passes did not pay: kept + 1 < v(drafted), v "
                    f"measured{at} {probe}")
        return f"off while α̂ of its last {self.window} drafts < {self.threshold:g} {probe}"

    def held_words(self) -> str:
        """Why a step drafted nothing while the gate was shut (a step record's `held`)."""
        last = (f"its last {self.window} drafting passes did not pay here" if self.v is not None
                else f"α̂ of its last {self.window} drafts was below {self.threshold:g}")
        return f"the gate was shut: {last}; the next probe drafts within {self.probe_every} steps"

    def is_open(self, history) -> bool:
        """The rule on a window of (drafted, kept) pairs; open before any draft."""
        if not history:
            return True
        if self.v is None:
            return hit_rate(history) >= self.threshold
        return pass_gain(history, dict(self.v)) >= 0.0


def hit_rate(history) -> float | None:
    """α̂ over (drafted, kept) pairs; None before any draft."""
    drafted = sum(d for d, _ in history)
    return sum(k for _, k in history) / drafted if drafted else None


def pass_gain(history, v: dict[int, float]) -> float:
    """Tokens the drafting passes in `history` ((drafted, kept) pairs) yielded beyond the plain steps their time
    would have bought: Σ (kept + 1 - v(drafted)); >= 0 when they paid."""
    return sum(k + 1 - v_at(v, d) for d, k in history)


class Gated(Proposer):
    """`inner`'s drafts, gated by Gate on its recent drafts. Named like `inner`: it is the same method, with a gate."""

    def __init__(self, inner: Proposer, gate: Gate):
        gate.check()
        self.inner, self.gate = inner, gate
        self.name = inner.name
        self.deterministic = inner.deterministic
        self.needs_hidden, self.feature_layers = inner.needs_hidden, inner.feature_layers
        # what the decode loop reads off a proposer's class: a tree's size, and whether it learns from the target's
        # logits (recycling fills its table from every pass, drafting or not: a closed gate must not starve it)
        self.max_nodes, self.reads_logits, self.prefill_rows = inner.max_nodes, inner.reads_logits, inner.prefill_rows
        self.reset_state()

    def reset_state(self) -> None:
        self.history: deque[tuple[int, int]] = deque(maxlen=self.gate.window)   # (drafted, kept) per draft
        self.closed_steps = 0    # steps the gate kept shut this run (no draft)
        self._since_probe = 0
        self._drafted = 0        # the last step's draft length, for update()

    def reset(self, prompt_ids) -> None:
        self.inner.reset(prompt_ids)
        self.reset_state()

    def is_open(self) -> bool:
        return self.gate.is_open(self.history)

    def propose(self, ctx: Context, k: int) -> Draft:
        if not self.is_open():
            self._since_probe += 1
            if self._since_probe < self.gate.probe_every:
                self.closed_steps += 1
                self._drafted = 0
                return empty_draft(held=self.gate.held_words())
        self._since_probe = 0
        d = self.inner.propose(ctx, k)
        self._drafted = len(d.tokens)
        return d

    def update(self, ctx: Context, n_accepted: int) -> None:
        if self._drafted:
            self.history.append((self._drafted, n_accepted))
        self._drafted = 0
        self.inner.update(ctx, n_accepted)

    def observe(self, inputs, logits, step: int) -> None:
        self.inner.observe(inputs, logits, step)

    def cache_length(self) -> int | None:
        return self.inner.cache_length()

    def table_rows(self) -> int | None:
        return self.inner.table_rows()

    def __getattr__(self, name):   # the inner proposer's settings (k_rule, n_min, factor) read through the gate
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)
