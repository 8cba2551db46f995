"""A training-free proposer for any text: copy when the context offers a match, recycle otherwise.

One tree per pass: suffix decoding's tree (core/suffix.py) or token recycling's static tree (core/recycle.py),
chosen by core/copychoice.py's rule: recycling when suffix finds no match, copying on a match of 2 tokens or more,
and on a one-token match the part whose trees have kept more on this request's earlier one-token-match passes (both
parts' trees scored against the text that followed). An option (`union`, not the default): on a one-token match both
trees merged into one pass (core/copychoice.merge; it keeps what either would), under greedy decoding or always;
whether its extra nodes pay depends on the machine's cost per node (docs/recycling.md, "Both trees in one pass").
Both parts choose their candidates rather than sample them, and the rule reads the committed text only, so q is
one-hot and the tree verification stays lossless at any temperature.
The recycling table keeps learning from every pass, including the passes that verified a copied tree.
"""
from __future__ import annotations

import torch

from specviz.core.copychoice import ALWAYS_COPY, COPY, RECYCLE, PartChooser, merge
from specviz.proposers.base import Context, Draft, Proposer
from specviz.proposers.recycle import Recycle
from specviz.proposers.suffix import SuffixProposer

UNION_MODES = ("never", "greedy", "always")   # when a one-token match drafts both trees merged (else: the rule's pick)


class CopyRecycle(Proposer):
    name = "copy-recycle"
    deterministic = True
    reads_logits = True

    def __init__(self, copy: SuffixProposer, recycle: Recycle, always_copy: int = ALWAYS_COPY, union: str = "never"):
        if union not in UNION_MODES:
            raise ValueError(f"copy-recycle's union must be one of {', '.join(UNION_MODES)}, got {union!r}")
        self.copy, self.recycle, self.union = copy, recycle, union
        self.rule = PartChooser(always_copy)
        self.prefill_rows = recycle.prefill_rows
        self.max_nodes = max(recycle.max_nodes, 24) + (recycle.max_nodes if union != "never" else 0)
        self.used = ""                    # which part drafted the last step: "copy" | "recycle" | "copy+recycle"

    def reset(self, prompt_ids: torch.Tensor) -> None:
        self.copy.reset(prompt_ids)
        self.recycle.reset(prompt_ids)
        self.rule.reset()

    def observe(self, inputs: torch.Tensor, logits: torch.Tensor, step: int) -> None:
        self.recycle.observe(inputs, logits, step)

    def propose(self, ctx: Context, k: int) -> Draft:
        c = self.copy.propose(ctx, k)
        text = self.copy.this.tokens                  # the committed text, kept by the suffix part
        self.rule.score(text)
        match = self.copy.last.match_len if len(c.tokens) else 0
        if len(c.tokens) and match >= self.rule.always_copy:
            self.used = COPY
            return c
        r = self.recycle.propose(ctx, k)
        merged = self.union == "always" or (self.union == "greedy" and ctx.sampling.greedy)
        if merged and len(c.tokens) and len(r.tokens):   # a one-token match: both trees in one pass
            self.used = COPY + "+" + RECYCLE
            tokens, parents, from_r = merge((c.tokens.tolist(), list(c.parents)), (r.tokens.tolist(), list(r.parents)))
            seen = None if c.seen_in is None or r.seen_in is None else [
                c.seen_in[i] if j < 0 else r.seen_in[j] for i, j in enumerate(from_r)]
            return Draft(tokens=torch.tensor(tokens, dtype=torch.long), parents=parents, seen_in=seen)
        self.used = self.rule.choose(match, len(c.tokens), len(r.tokens))
        if len(c.tokens) and len(r.tokens):
            self.rule.note(len(text), match, (c.tokens.tolist(), list(c.parents)), (r.tokens.tolist(), list(r.parents)))
        return c if self.used == COPY else r

    def table_rows(self) -> int:
        return self.recycle.table_rows()

    def remember(self) -> None:
        self.copy.remember()
        self.recycle.remember()


__all__ = ["CopyRecycle", "COPY", "RECYCLE"]
