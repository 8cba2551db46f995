"""Token recycling's adjacency table and the tree it yields, on hand-made logits (core/recycle.py)."""
import pytest
import torch

from specviz.core.recycle import PREFILL, AdjacencyTable, chain_template, read_dynamic, read_tree, static_tree

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


def peaked(top: int, p: float) -> torch.Tensor:
    """A (V,) logit row whose softmax gives `top` probability p and the rest equal shares, in index order."""
    row = torch.full((V,), ((1 - p) / (V - 1)))
    row[top] = p
    row -= torch.arange(V) * 1e-6                          # ties broken by index, as topk does not promise
    return row.log()


def test_the_table_keeps_the_targets_probabilities_beside_the_ids():
    t = AdjacencyTable(V, top_k=2, keep_p=True)
    t.update(torch.tensor([1]), peaked(2, 0.91)[None], 0)
    assert t.succ[1, 0] == 2 and t.prob[1, 0] == pytest.approx(0.91, abs=1e-4)
    assert t.prob[1, 1] == pytest.approx(0.01, abs=1e-4) and t.clone().prob[1, 0] == t.prob[1, 0]
    plain = AdjacencyTable(V, top_k=2)                                      # the static tree's table keeps ids only
    plain.update(torch.tensor([1]), peaked(2, 0.91)[None], 0)
    assert plain.succ[1].tolist() == t.succ[1].tolist() and plain.prob is None


def test_the_dynamic_tree_grows_deep_where_the_rows_are_sure_and_wide_where_they_are_not():
    t = AdjacencyTable(V, top_k=3, keep_p=True)
    # after 1 the target is sure of 2, after 2 of 3, after 3 of 4: a chain of 0.9s
    t.update(torch.tensor([1, 2, 3]), torch.stack([peaked(2, 0.9), peaked(3, 0.9), peaked(4, 0.9)]), 0)
    d = read_dynamic(t, 1, 3)
    assert d.tokens == [2, 3, 4] and d.parents == [-1, 0, 1] and d.recycled_from == [0, 0, 0]
    # after 5 a flat row (0.3 for 6, the rest ~0.078 each): the second node is a sibling of 6, not its child
    t.update(torch.tensor([5, 6]), torch.stack([peaked(6, 0.3), peaked(7, 0.2)]), 4)
    d = read_dynamic(t, 5, 3)
    assert d.parents == [-1, -1, -1] and d.tokens[0] == 6
    # a template made for sure rows reads them by rank alone: 5 -> 6 -> 7 (and 7 has no row), whatever p says
    assert read_tree(t, 5, static_tree(3, (0.9, 0.05, 0.05))).tokens == [6, 7]
    assert read_dynamic(t, 8, 4).tokens == []              # an unseen root drafts nothing
    d = read_dynamic(t, 1, 20)                            # a bigger budget: breadth-first, parents first, best first
    assert len(d.tokens) == 20 and all(par < i for i, par in enumerate(d.parents)) and d.tokens[0] == 2
    one = AdjacencyTable(V, top_k=3, keep_p=True)
    one.update(torch.tensor([5]), peaked(6, 0.3)[None], 0)
    assert len(read_dynamic(one, 5, 20).tokens) == 3      # 5's successors have no rows: its 3 and no more
