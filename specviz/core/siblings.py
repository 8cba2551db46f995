"""Sampled siblings: n candidates for one tree node drawn from the drafter's q, then tested in turn (multi-round
speculative sampling, core/tree.py). Pure tensors, no model.

How the siblings are drawn decides what q each one must be tested with:
- i.i.d. from q (SpecInfer, Miao et al. 2024, arXiv 2305.09781): every sibling is drawn from q and tested against
  the residual r with q; after a rejection r = norm(max(0, r − q)). Lossless.
- without replacement, q renormalised (SpecTr, Sun et al. 2023, arXiv 2310.15141; recursive rejection sampling,
  Jeon et al. 2024, arXiv 2402.14160): sibling j is drawn from q with the earlier siblings' tokens removed and
  renormalised, and tested with *that* distribution. Lossless.
- without replacement, q unadjusted: drawn as above but tested with the original q. Not lossless: the output drifts
  (e.g. p = (0.1, 0.6, 0.3), q = (0.6, 0.2, 0.2), 2 siblings: (0.1, 0.45, 0.45)).

`output_distribution` computes what the emitted token follows by enumerating every draw (closed form, its own
arithmetic); `simulate` draws siblings and runs specviz's tree verifier (core/tree.py `verify_tree`) on a root
whose children are the siblings, each declaring the q the mode tests it with. The two agree for every mode: the
verifier is lossless exactly when each child's q is the distribution its token was really drawn from.
"""
from __future__ import annotations

import torch

from specviz.core.errors import InputError, check_choice
from specviz.core.tree import Tree, verify_tree

IID, RENORM, UNADJUSTED = "i.i.d. from q", "without replacement, q renormalised", "without replacement, q unadjusted"
MODES = {
    IID: "SpecInfer: each sibling drawn from q and tested with q; after a rejection the residual "
         "norm(max(0, r − q)) is what the next sibling faces. Lossless.",
    RENORM: "SpecTr / recursive rejection sampling: each sibling drawn from q without the earlier siblings' tokens, "
            "renormalised, and tested with that renormalised q (the residual too). Lossless.",
    UNADJUSTED: "Drawn without replacement, but tested with the original q, as if each were a fresh draw from q. "
                "Not lossless: the output drifts from p.",
}


def _without(q: torch.Tensor, drawn: list[int]) -> torch.Tensor:
    """q with the drawn tokens removed, renormalised. (V,) -> (V,)"""
    out = q.clone()
    out[drawn] = 0.0
    return out / out.sum()


def _residual(r: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """norm(max(0, r − q)), written out here (not core.verify's) so the closed form is an independent check."""
    d = (r - q).clamp_min(0.0)
    return d / d.sum()


def check(p: torch.Tensor, q: torch.Tensor, n: int, mode: str) -> None:
    """InputError, in one line, for a mode or a sibling count the draw cannot make."""
    check_choice("draw mode", mode, MODES)
    if not 1 <= n <= 4:
        raise InputError(f"the number of siblings must be between 1 and 4, got {n}")
    support = int((q > 0).sum())
    if mode != IID and n > support:
        raise InputError(f"q puts mass on only {support} token{'s' if support != 1 else ''}: {n} siblings cannot "
                         "be drawn without replacement")


def _draw_and_test(q: torch.Tensor, drawn: list[int], mode: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(the distribution the next sibling is drawn from, the q it is tested with)."""
    if mode == IID:
        return q, q
    qd = _without(q, drawn)
    return qd, (qd if mode == RENORM else q)


def output_distribution(p: torch.Tensor, q: torch.Tensor, n: int, mode: str) -> tuple[torch.Tensor, float]:
    """(what the emitted token follows (V,), P(some sibling kept)), by enumerating every sequence of draws."""
    check(p, q, n, mode)

    def walk(r: torch.Tensor, drawn: list[int], left: int) -> tuple[torch.Tensor, float]:
        if left == 0:
            return r.clone(), 0.0                             # no sibling kept: the correction is drawn from r
        qd, qt = _draw_and_test(q, drawn, mode)
        out, kept = torch.zeros_like(p), 0.0
        for x in torch.nonzero(qd > 0).flatten().tolist():
            w = float(qd[x])
            a = min(1.0, float(r[x]) / float(qt[x]))
            out[x] += w * a
            kept += w * a
            if a < 1.0:
                o, k = walk(_residual(r, qt), drawn + [x], left - 1)
                out += w * (1.0 - a) * o
                kept += w * (1.0 - a) * k
        return out, kept

    return walk(p.double(), [], n)


def draw_siblings(q: torch.Tensor, n: int, mode: str, generator: torch.Generator) -> Tree:
    """n siblings under the root, drawn per `mode`, each with the q the mode tests it with. (V,) -> Tree of n"""
    tokens, qs = [], []
    for _ in range(n):
        qd, qt = _draw_and_test(q, tokens, mode)
        tokens.append(int(torch.multinomial(qd, 1, generator=generator)))
        qs.append(qt)
    return Tree(torch.tensor(tokens), [-1] * n, torch.stack(qs))          # q: (n, V)


def simulate(p: torch.Tensor, q: torch.Tensor, n: int, mode: str, trials: int, seed: int = 0
             ) -> tuple[torch.Tensor, int]:
    """`trials` draws of the emitted token through core/tree.py's verifier: (counts (V,), trials that kept a
    sibling)."""
    check(p, q, n, mode)
    if trials < 1:
        raise InputError("the number of trials must be >= 1")
    gen = torch.Generator().manual_seed(seed)
    counts, kept = torch.zeros(len(p)), 0
    rows = p.expand(n + 1, len(p))                                       # (n+1, V): p at the root; leaves unused
    for _ in range(trials):
        tree = draw_siblings(q, n, mode, gen)
        v = verify_tree(tree, rows, greedy=False, generator=gen)
        tok = int(tree.tokens[v.path[0]]) if v.path else v.next_token     # a kept sibling, or the correction
        counts[tok] += 1
        kept += bool(v.path)
    return counts, kept
