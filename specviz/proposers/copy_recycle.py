"""A training-free proposer for any text: copy when the context offers a match, recycle otherwise.

One tree per pass: suffix decoding's tree (core/suffix.py) when the context's tail matches earlier text (this
request or the session's earlier ones; engine/methods.py builds it to ask for a match of COPY_MIN_MATCH tokens,
since a one-token match on novel text drafts mostly misses), else token recycling's static tree (core/recycle.py).
Both choose their candidates rather than sample them, so q is one-hot and the tree verification stays lossless at
any temperature.
The recycling table keeps learning from every pass, including the passes that verified a copied tree.
"""
from __future__ import annotations

import torch

from specviz.proposers.base import Context, Draft, Proposer
from specviz.proposers.recycle import Recycle
from specviz.proposers.suffix import SuffixProposer


class CopyRecycle(Proposer):
    name = "copy-recycle"
    deterministic = True
    reads_logits = True

    def __init__(self, copy: SuffixProposer, recycle: Recycle):
        self.copy, self.recycle = copy, recycle
        self.prefill_rows = recycle.prefill_rows
        self.max_nodes = max(recycle.max_nodes, 24)
        self.used = ""                    # which part drafted the last step: "copy" | "recycle"

    def reset(self, prompt_ids: torch.Tensor) -> None:
        self.copy.reset(prompt_ids)
        self.recycle.reset(prompt_ids)

    def observe(self, inputs: torch.Tensor, logits: torch.Tensor, step: int) -> None:
        self.recycle.observe(inputs, logits, step)

    def propose(self, ctx: Context, k: int) -> Draft:
        d = self.copy.propose(ctx, k)
        if len(d.tokens):
            self.used = "copy"
            return d
        self.used = "recycle"
        return self.recycle.propose(ctx, k)

    def table_rows(self) -> int:
        return self.recycle.table_rows()

    def remember(self) -> None:
        self.copy.remember()
        self.recycle.remember()
