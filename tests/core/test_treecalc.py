"""The tree calculator (core/treecalc.py): E[τ] of a tree from per-rank acceptance, against the chain law, brute
force over every tree shape, counting on random trees, and per-rank acceptance read from step records."""
import itertools
import random

import pytest

from specviz.core import costmodel as be, treecalc as T
from specviz.core.records import StepRecord


def test_a_chain_is_the_chain_law_and_its_break_even():
    for a in (0.3, 0.7, 0.9):
        assert T.expected_tau(T.chain(4), [a, 0.1]) == pytest.approx(be.expected_tokens_per_pass(a, 4))
        assert T.breakeven_scale(T.chain(4), [1.0], 0.05, 1.1) == pytest.approx(be.breakeven_alpha(4, 0.05, 1.1),
                                                                                abs=1e-6)
    assert T.breakeven_scale(T.chain(4), [0.5], 0.0, 1.0) == 0.0               # costs one pass: pays at any α
    assert T.breakeven_scale(T.star(8), [0.5, 0.2], 0.5, 1.0) is None           # 1 + Σ b ≤ 2 < 5: never pays


def test_best_tree_is_the_best_of_every_shape():
    b = [0.6, 0.25, 0.1]
    for n in range(1, 6):
        shapes = [list(ps) for ps in itertools.product(*[range(-1, i) for i in range(n)])]   # parents[i] < i
        brute = max(T.expected_tau(ps, b) for ps in shapes)
        best = T.best_tree(b, n)
        assert len(best) == n and all(par < i for i, par in enumerate(best))
        assert T.expected_tau(best, b) == pytest.approx(brute)
    # a chain wins when the first guess is nearly always right; a star when it rarely is and the others help
    assert T.best_tree([0.95, 0.03], 4) == T.chain(4)
    assert T.depth(T.best_tree([0.3, 0.25, 0.2, 0.15], 4)) == 1


def test_expected_tau_matches_counting_on_random_trees():
    rng = random.Random(0)
    b = [0.5, 0.3, 0.1]
    parents = T.best_tree(b, 7)
    rk = T.ranks(parents)
    kids = {u: [i for i, par in enumerate(parents) if par == u] for u in [-1, *range(7)]}
    total, trials = 0, 40000
    for _ in range(trials):
        u, kept = -1, 0
        while kids[u]:
            x, acc = rng.random(), 0.0                              # the kept rank is j with probability b_j
            nxt = None
            for c in kids[u]:
                acc += b[rk[c]]
                if x < acc:
                    nxt = c
                    break
            if nxt is None:
                break
            u, kept = nxt, kept + 1
        total += kept + 1
    assert total / trials == pytest.approx(T.expected_tau(parents, b), abs=0.03)
    assert abs(total / trials - T.expected_tau(T.chain(7), b)) > 0.1        # negative control: another shape


def _step(parents, path, rejected):
    drafted = [10 + j for j in range(len(parents))]
    tested = list(path) + list(rejected)
    return StepRecord(index=0, k=4, context_len=10, drafted=drafted,
                      decisions=[True] * len(path) + [False] * len(rejected), draws=[None] * len(tested),
                      ratios=[1.0] * len(tested), n_accepted=len(path), next_token=7,
                      next_origin="correction" if rejected else "bonus", emitted=[drafted[j] for j in path] + [7],
                      draft_s=0.0, verify_s=0.01, logit_top1=[], logit_gap=[], parents=parents, tested=tested,
                      path=list(path))


def test_rank_acceptance_from_step_records():
    parents = [-1, -1, 0, 0]                   # root: children 0 (rank 0) and 1 (rank 1); node 0: children 2, 3
    steps = [_step(parents, [0, 2], []),       # root -> rank 0 kept; node 0 -> rank 0 kept; node 2 is a leaf
             _step(parents, [1], [0]),         # root: rank 0 rejected, rank 1 kept; node 1 is a leaf (not a miss)
             _step(parents, [0], [2, 3])]      # root -> rank 0; node 0: both children rejected
    # rank 0: tried under root x3 and node 0 x2 = 5 parents with a first child; kept: 2 (root) + 1 (node 0) = 3
    # rank 1: parents with a second child: root x3, node 0 x2 = 5; kept: 1
    assert T.rank_acceptance(steps) == pytest.approx([3 / 5, 1 / 5])
