"""Token recycling (Luo et al. 2024, arXiv 2408.08696): a static tree read from the target's own discarded candidates.

The decode loop hands this proposer the target's logits at every row of the prefill and of every verify pass
(`observe`, for proposers with reads_logits); core/recycle.py keeps them in the adjacency table and reads the tree.
A session: like suffix's cache, nothing carries over to the next request unless remember() is called after a
finished one (engine/sessions.py does, with the cross-request cache on); reset() goes back to what was remembered,
so re-running a request never drafts from its own earlier run.
"""
from __future__ import annotations

import torch

from specviz.core.errors import InputError
from specviz.core.recycle import (
    PREFILL,
    TOP_K,
    AdjacencyTable,
    RecycledDraft,
    chain_template,
    read_dynamic,
    read_tree,
    static_tree,
)
from specviz.proposers.base import Context, Draft, Proposer, empty_draft

FILL = 4            # candidate template nodes per node drafted (when the table cannot fill a node, the next best)
TREE_NODES = 8      # the default tree size: 6-10 nodes ran ~6% faster than 12 greedy, sampled alike (docs/recycling.md,
                    # scripts/recycle_sizes.py); the k/n page sweeps it; bench/README.md has the bench at this size
MAX_NODES = 64
# The prefill's logits for the prompt's last PREFILL_ROWS positions go into the table. The prefill never computes
# the LM head otherwise, and over a whole prompt it is costly on a CPU: 3.5 s for edit-code's 175 rows in bfloat16
# on the 2-core machine under load (/tmp script, 2026-12-02), about as long as a plain 64-token run.
PREFILL_ROWS = 16


def origin_text(step: int) -> str:
    return "the prompt's own logits" if step == PREFILL else f"step {step + 1}'s candidates"


class Recycle(Proposer):
    name = "recycle"
    deterministic = True
    reads_logits = True

    def __init__(self, vocab: int, nodes: int = TREE_NODES, chain: bool = False, top_k: int = TOP_K,
                 prefill_rows: int = PREFILL_ROWS, dynamic: bool = False):
        if not chain and not 1 <= nodes <= MAX_NODES:
            raise InputError(f"the recycling tree's size must be between 1 and {MAX_NODES} nodes, got {nodes}")
        if not 1 <= top_k <= 32:
            raise InputError(f"the successors kept per token must be between 1 and 32, got {top_k}")
        if prefill_rows < 0:
            raise InputError(f"the prompt rows read at the prefill must be >= 0, got {prefill_rows}")
        self.chain, self.nodes, self.prefill_rows, self.dynamic = chain, nodes, prefill_rows, dynamic
        self.name = "recycle-chain" if chain else "recycle"
        self.max_nodes = 0 if chain else nodes
        # the template in order of score, four times the budget: the n best nodes the table can fill
        self.template = None if chain else static_tree(FILL * nodes, by_score=True)
        self.remembered = AdjacencyTable(vocab, top_k, keep_p=dynamic)   # what the session kept (empty at first)
        self.table = self.remembered.clone()
        self.last = RecycledDraft([], [], [])

    def reset(self, prompt_ids: torch.Tensor) -> None:
        self.table = self.remembered.clone()

    def observe(self, inputs: torch.Tensor, logits: torch.Tensor, step: int) -> None:
        """The target read `inputs` (t,) and gave `logits` (t, V) at step `step` (PREFILL for the prompt)."""
        self.table.update(inputs, logits, step)

    def propose(self, ctx: Context, k: int) -> Draft:
        if self.dynamic and not self.chain:
            self.last = read_dynamic(self.table, int(ctx.ids[-1]), self.nodes)
            return self._draft()
        template = chain_template(k) if self.chain else self.template
        self.last = read_tree(self.table, int(ctx.ids[-1]), template, None if self.chain else self.nodes)
        return self._draft()

    def _draft(self) -> Draft:
        if not self.last.tokens:
            return empty_draft()
        return Draft(tokens=torch.tensor(self.last.tokens, dtype=torch.long),                 # (n,) parents first
                     parents=None if self.chain else list(self.last.parents),
                     seen_in=[origin_text(s) for s in self.last.recycled_from])

    def table_rows(self) -> int:
        """Token ids whose successors the table holds now."""
        return len(self.table)

    def remember(self) -> None:
        """This request is finished: the next requests of the session start from its table."""
        self.remembered = self.table.clone()
