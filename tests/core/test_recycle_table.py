"""Token recycling's adjacency table and the tree it yields, on hand-made logits (core/recycle.py)."""
import pytest
import torch

from specviz.core.recycle import PREFILL, AdjacencyTable, chain_template, read_tree, static_tree

V = 10


def logits_ranking(*order: int) -> torch.Tensor:
    """A (V,) logit row whose ranking starts with `order`."""
    row = torch.zeros(V)
    for r, t in enumerate(order):
        row[t] = 10.0 - r
    return row


def test_the_table_keeps_each_inputs_latest_top_k():
    t = AdjacencyTable(V, top_k=3)
    t.update(torch.tensor([4, 7]), torch.stack([logits_ranking(1, 2, 3), logits_ranking(5, 6, 8)]), PREFILL)
    assert t.succ[4].tolist() == [1, 2, 3] and t.succ[7].tolist() == [5, 6, 8]
    assert t.written[4] == PREFILL and len(t) == 2
    # a later pass: row 0 reads 4 again (overwrites), and 4 twice in one pass: the later row wins
    t.update(torch.tensor([4, 9, 4]), torch.stack([logits_ranking(9, 8, 7), logits_ranking(0, 1, 2),
                                                   logits_ranking(6, 5, 4)]), 3)
    assert t.succ[4].tolist() == [6, 5, 4] and t.written[4] == 3
    assert t.succ[9].tolist() == [0, 1, 2] and t.succ[7].tolist() == [5, 6, 8] and t.written[7] == PREFILL
    assert t.succ[2].tolist() == [-1, -1, -1] and len(t) == 3


def test_static_tree_keeps_the_best_nodes_parents_first():
    # scores (0) .6, (1) .2, (0,0) .36, (0,0,0) .216, (0,0,0,0) .1296 beat (0,1) .12: a spine of rank 0, one sibling
    assert static_tree(5, (0.6, 0.2, 0.1)) == [(-1, 0), (-1, 1), (0, 0), (2, 0), (3, 0)]
    for n in (1, 7, 12, 30):
        t = static_tree(n)
        assert len(t) == n and all(par < i for i, (par, _) in enumerate(t))
    with pytest.raises(ValueError):
        static_tree(0)


def test_static_tree_scores_exactly():
    # with weights (0.6, 0.2, 0.1): .6 (0), .36 (0,0), .216 (0,0,0), .2 (1), .13 (0,0,0,0), .12 (0,1) ...
    t = static_tree(5, (0.6, 0.2, 0.1))
    paths = []
    for par, r in t:
        paths.append((paths[par] if par >= 0 else ()) + (r,))
    assert sorted(paths) == sorted([(0,), (0, 0), (0, 0, 0), (1,), (0, 0, 0, 0)])


def test_read_tree_follows_the_table_and_names_the_step():
    t = AdjacencyTable(V, top_k=2)
    t.update(torch.tensor([1]), logits_ranking(2, 3)[None], PREFILL)        # after 1: 2, then 3
    t.update(torch.tensor([2, 3]), torch.stack([logits_ranking(4, 5), logits_ranking(6, 7)]), 5)
    template = [(-1, 0), (-1, 1), (0, 0), (0, 1), (1, 0), (2, 0)]             # 2 ; 3 ; 2->4 ; 2->5 ; 3->6 ; 4->?
    d = read_tree(t, 1, template)
    assert d.tokens == [2, 3, 4, 5, 6]                                      # 4 has no row: its child is dropped
    assert d.parents == [-1, -1, 0, 0, 1]
    assert d.recycled_from == [PREFILL, PREFILL, 5, 5, 5]
    assert read_tree(t, 8, template).tokens == []                           # an unseen root drafts nothing
    chain = read_tree(t, 1, chain_template(3))
    assert chain.tokens == [2, 4] and chain.parents == [-1, 0]


def test_a_dropped_parent_drops_its_subtree_and_reindexes():
    t = AdjacencyTable(V, top_k=2)
    t.update(torch.tensor([1, 3]), torch.stack([logits_ranking(2, 3), logits_ranking(8, 9)]), 0)
    d = read_tree(t, 1, [(-1, 0), (-1, 1), (0, 0), (1, 0), (2, 0)])         # 2 has no row: (0,0) and its child go
    assert d.tokens == [2, 3, 8] and d.parents == [-1, -1, 1]


def test_a_budget_fills_with_the_next_best_readable_nodes_breadth_first():
    t = AdjacencyTable(V, top_k=3)
    t.update(torch.tensor([1, 2]), torch.stack([logits_ranking(2, 3, 4), logits_ranking(5, 6, 7)]), 0)
    template = static_tree(12, (0.6, 0.2, 0.1), by_score=True)
    assert all(par < i for i, (par, _) in enumerate(template))
    d = read_tree(t, 1, template, limit=5)                 # 3 has no row: the budget goes to 2's children
    assert len(d.tokens) == 5 and all(par < i for i, par in enumerate(d.parents))
    assert sorted(zip(d.tokens, d.parents)) == sorted([(2, -1), (3, -1), (4, -1), (5, 0), (6, 0)])
