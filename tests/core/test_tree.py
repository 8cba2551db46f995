"""Tree verification, pure: the mask, the positions, chain = verify(), and losslessness of the
multi-round rule with several sampled candidates per position (joint over two tokens)."""
import torch

from specviz.core import tree as T
from specviz.core.sampling import sample
from specviz.core.verify import verify
from tests.stats import matches

#        root
#       /    \
#      0      1
#     / \     |
#    2   3    4
PARENTS = [-1, -1, 0, 0, 1]


def test_mask_lets_each_node_see_root_ancestors_and_itself_only():
    m = T.tree_mask(PARENTS)
    want = {0: [0], 1: [0, 1], 2: [0, 2], 3: [0, 1, 3], 4: [0, 1, 4], 5: [0, 2, 5]}
    for row, cols in want.items():
        assert m[row].nonzero().flatten().tolist() == cols
    assert T.position_offsets(PARENTS).tolist() == [0, 1, 1, 2, 2, 2]
    assert torch.equal(T.tree_mask([-1, 0, 1]), torch.ones(4, 4, dtype=torch.bool).tril())  # a chain: causal


def test_pruning_keeps_a_tree():
    t = T.Tree(torch.arange(5), PARENTS, torch.eye(5))
    p = t.pruned(1)
    assert p.parents == [-1, -1] and p.tokens.tolist() == [0, 1]
    assert T.Tree(torch.arange(3), [-1, 0, 1], torch.eye(3)).is_chain and not t.is_chain


def test_a_chain_gives_verify_s_verdict_with_the_same_draws():
    g = torch.Generator().manual_seed(0)
    for trial in range(200):
        k, V = 1 + trial % 4, 6
        p = torch.rand(k + 1, V, generator=g).pow(3).softmax(-1) if trial % 2 else torch.rand(k + 1, V, generator=g)
        p = p / p.sum(-1, keepdim=True)
        q = torch.rand(k, V, generator=g)
        q = q / q.sum(-1, keepdim=True)
        x = torch.stack([torch.multinomial(q[i], 1, generator=g)[0] for i in range(k)])
        greedy = trial % 3 == 0
        a = verify(x, q, p, greedy, torch.Generator().manual_seed(trial))
        b = T.verify_tree(T.Tree.chain(x, q), p, greedy, torch.Generator().manual_seed(trial))
        assert (a.n_accepted, a.next_token, a.origin, a.ratios, a.draws) == \
               (len(b.path), b.next_token, b.origin, b.ratios, b.draws)


def test_greedy_follows_the_argmax_down_the_tree():
    p = torch.full((6, 4), 0.1)
    p[0, 3] = 1.0                             # root prefers token 3 (node 1), node 1 prefers token 0 (node 4)
    p[2, 0] = 1.0
    tokens = torch.tensor([1, 3, 2, 2, 0])
    v = T.verify_tree(T.Tree(tokens, PARENTS, torch.eye(4)[tokens]), p, greedy=True)
    assert v.path == [1, 4] and v.tested == [0, 1, 4] and v.decisions == [False, True, True]
    assert v.origin == "bonus" and v.next_token == int(p[5].argmax())


V = 5
G = torch.Generator().manual_seed(1)
P_NEXT = torch.rand(V + 1, V, generator=G).pow(2)          # Markov target: p(next | last token)
P_NEXT /= P_NEXT.sum(-1, keepdim=True)
Q_NEXT = torch.rand(V + 1, V, generator=G)                 # the draft's guess of it
Q_NEXT /= Q_NEXT.sum(-1, keepdim=True)
SHAPE = [-1, -1, -1, 0, 0, 1, 3]                           # 3 candidates at depth 1, several below


def sampled_tree(last: int, g: torch.Generator) -> T.Tree:
    """SpecInfer's tree: each node's children drawn i.i.d. from q given the node's token."""
    tokens, qs = [], []
    for par in SHAPE:
        q = Q_NEXT[last if par < 0 else tokens[par]]
        tokens.append(sample(q, g))
        qs.append(q)
    return T.Tree(torch.tensor(tokens), SHAPE, torch.stack(qs))


def first_two(runs: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(2)
    counts = torch.zeros(V * V)
    for _ in range(runs):
        out, last = [], V                                   # token V = the prompt's last token
        while len(out) < 2:
            t = sampled_tree(last, g)
            p = torch.stack([P_NEXT[last]] + [P_NEXT[int(x)] for x in t.tokens])   # (n+1, V)
            v = T.verify_tree(t, p, greedy=False, generator=g)
            out += t.tokens[v.path].tolist() + [v.next_token]
            last = out[-1]
        counts[out[0] * V + out[1]] += 1
    return counts


def test_several_sampled_candidates_per_position_are_lossless(monkeypatch):
    exact = (P_NEXT[V][:, None] * P_NEXT[:V]).flatten()                     # (V*V,) joint of two tokens
    assert matches(first_two(6000), exact)
    # negative control: after a rejection, keep testing (and correct) against p, not the residual
    monkeypatch.setattr(T, "residual", lambda r, q: r)
    assert not matches(first_two(6000), exact)
