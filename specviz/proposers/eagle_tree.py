"""EAGLE-2's dynamic draft tree: grow the tree where the draft is confident, keep the best nodes.

Every node has a score, the draft's probability of its whole path (the product of q along it). Each
round expands the `width` best nodes of the newest layer by the head's `width` most likely next
tokens; all the head calls of a round are one batch, with a tree mask so each node sees the context
and its own ancestors. At the end the `nodes` best-scoring nodes are kept (a parent always scores at
least its child, so the kept set is a tree). Candidates are chosen, not sampled: q is one-hot.
"""
from __future__ import annotations

import torch

from specviz.proposers.base import Context, Draft
from specviz.proposers.eagle import Eagle

# the default shape: 12 nodes, depth <= 5, width 3. On the 2-core CPU 8-12 nodes beat 20 and 32 (a bigger
# tree keeps more per pass but its verify pass costs more than that buys: scripts/tree_shape.py)
NODES, DEPTH, WIDTH = 12, 5, 3


class EagleTree(Eagle):
    name = "eagle-tree"

    def __init__(self, *args, depth: int = DEPTH, width: int = WIDTH, nodes: int = NODES, **kw):
        kw.setdefault("name", "eagle-tree")
        super().__init__(*args, **kw)
        self.depth, self.width, self.max_nodes = depth, width, nodes

    def _children(self, f: torch.Tensor, score: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Features (r, H) and their path scores (r,) -> the width best next tokens (r, w) and their scores."""
        lq = self._logits(f).float().cpu().log_softmax(-1)               # (r, V)
        top = torch.topk(lq, self.width, dim=-1)                         # (r, w)
        return top.indices, score[:, None] + top.values                  # (r, w), (r, w)

    def _draft(self, ctx: Context, k: int, n_real: int) -> Draft:
        """The tree grown from self.f_last, round by round, then pruned to the best max_nodes nodes."""
        tokens: list[int] = []
        parents: list[int] = []
        scores: list[float] = []
        feat_in: dict[int, torch.Tensor] = {}   # node -> the feature that predicted its token
        col: dict[int, int] = {}                # node -> its column in the head's cache

        def add(toks, scs, par, f):
            new = []
            for t, s in zip(toks.tolist(), scs.tolist()):
                new.append(len(tokens))
                tokens.append(t), scores.append(s), parents.append(par)
                feat_in[new[-1]] = f
            return new

        toks, scs = self._children(self.f_last[None], torch.zeros(1))    # (1, w)
        layer = add(toks[0], scs[0], -1, self.f_last)
        for d in range(2, min(self.depth, k) + 1):
            # expand the best nodes of the newest layer, in one batched head call
            best = sorted(layer, key=lambda i: -scores[i])[: self.width]
            L = self.past[0].shape[2]
            mask = torch.zeros(len(best), L + len(best), dtype=torch.bool)  # (r, L+r)
            mask[:, :n_real] = True                                       # the real context
            for j, u in enumerate(best):
                a = u
                while parents[a] >= 0:                                    # its ancestors already fed
                    a = parents[a]
                    mask[j, col[a]] = True
                mask[j, L + j] = True                                     # itself
                col[u] = L + j
            feats = torch.stack([feat_in[u] for u in best])               # (r, H)
            pos = torch.full((len(best),), n_real + d - 2)                # the fed node's depth - 1
            y = self._step(feats, torch.tensor([tokens[u] for u in best]), pos, mask)  # (r, H)
            toks, scs = self._children(y, torch.tensor([scores[u] for u in best]))
            layer = [i for j, u in enumerate(best) for i in add(toks[j], scs[j], u, y[j])]
        # keep the best nodes; ties go to the older node, so parents stay before children
        keep = sorted(sorted(range(len(tokens)), key=lambda i: (-scores[i], i))[: self.max_nodes])
        new = {old: j for j, old in enumerate(keep)}
        return Draft(tokens=torch.tensor([tokens[i] for i in keep], dtype=torch.long),
                     parents=[new[parents[i]] if parents[i] >= 0 else -1 for i in keep])
