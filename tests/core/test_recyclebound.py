"""The recycling replay and its bounds (core/recyclebound.py) on a toy target: milliseconds, no model."""
import pytest
import torch

from specviz.core import recyclebound as rb
from specviz.core.copybound import kept_along
from specviz.core.recycle import PREFILL, AdjacencyTable, read_tree, static_tree

V, K = 12, 4


def toy_logits(path: list[int]) -> torch.Tensor:
    """A target whose next token depends on the last two tokens (the table, keyed by one, cannot hold it all)."""
    c = (3 * path[-1] + path[-2]) % V
    return torch.tensor([-float((x - c) % V) for x in range(V)])         # (V,) distinct: no ties


def toy_run(prompt: list[int], max_new: int, nodes: int, cap: int = 24):
    """A recycling run as the decode loop does it (the table fed every row of every pass), with its rows recorded."""
    template = static_tree(4 * nodes, by_score=True)
    table, rows, text = AdjacencyTable(V, K), [], []
    pre = torch.stack([toy_logits(prompt[:i + 1]) for i in range(1, len(prompt) - 1)])
    table.update(torch.tensor(prompt[1:-1]), pre, PREFILL)
    rows.append(rb.Rows(PREFILL, tuple(prompt[1:-1]), tuple(tuple(torch.topk(pre, K).indices[i].tolist())
                                                                for i in range(len(pre)))))
    while len(text) < max_new:
        ctx, k = prompt + text, min(cap, max_new - len(text) - 1)
        d = read_tree(table, ctx[-1], template, nodes) if k > 0 else None
        keep = [i for i, dep in enumerate(rb._depths(d.parents)) if dep <= k] if d else []
        tokens = [d.tokens[i] for i in keep]
        parents = [keep.index(d.parents[i]) if d.parents[i] >= 0 else -1 for i in keep]
        paths = [ctx]
        for tok, pa in zip(tokens, parents):
            paths.append((paths[pa + 1] if pa >= 0 else ctx) + [tok])
        logits = torch.stack([toy_logits(p) for p in paths])              # (n+1, V)
        table.update(torch.tensor([ctx[-1]] + tokens), logits, len(rows) - 1)
        rows.append(rb.Rows(len(rows) - 1, tuple([ctx[-1]] + tokens),
                            tuple(tuple(r) for r in torch.topk(logits, K).indices.tolist())))
        row, node = 0, -1                                                 # greedy: down the tree while it matches
        while True:
            want = int(logits[row].argmax())
            kids = [i for i, pa in enumerate(parents) if pa == node and tokens[i] == want]
            text.append(want)
            if not kids or len(text) >= max_new:
                break
            node = kids[0]
            row = node + 1
    return template, rows, text[:max_new]


def plain(prompt: list[int], n: int) -> list[int]:
    ids = list(prompt)
    for _ in range(n):
        ids.append(int(toy_logits(ids).argmax()))
    return ids[len(prompt):]


@pytest.mark.parametrize("prompt,nodes", [([1, 5, 2, 7, 3, 5, 2], 6), ([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11], 12)])
def test_the_replay_rewrites_the_real_runs_passes(prompt, nodes):
    template, rows, text = toy_run(prompt, 40, nodes)
    assert text == plain(prompt, 40)                                      # the toy run is lossless
    passes = rb.replay(prompt, text, rows, V, K, template, nodes, 40, 24)
    assert len(passes) == len(rows) - 1                                   # one per real pass
    assert sum(p.kept for p in passes) > 0                                # the table does draft on this toy
    for p in passes:
        assert p.kept <= p.same_size <= p.full <= nodes


def test_a_pass_that_fed_other_tokens_is_caught():
    prompt = [1, 5, 2, 7, 3, 5, 2]
    template, rows, text = toy_run(prompt, 40, 6)
    i = next(j for j, r in enumerate(rows) if r.step >= 0 and len(r.inputs) > 1)
    bad = rb.Rows(rows[i].step, rows[i].inputs[:-1], rows[i].top[:-1])  # one node fewer than the tree read
    with pytest.raises(ValueError, match=f"pass {rows[i].step}"):
        rb.replay(prompt, text, rows[:i] + [bad] + rows[i + 1:], V, K, template, 6, 40, 24)


def test_fill_is_the_tables_own_update():
    g = torch.Generator().manual_seed(0)
    inputs, logits = torch.tensor([3, 1, 3, 7]), torch.randn(4, V, generator=g)
    a, b = AdjacencyTable(V, K), AdjacencyTable(V, K)
    a.update(inputs, logits, 5)
    rb.fill(b, rb.Rows(5, tuple(inputs.tolist()), tuple(tuple(r) for r in torch.topk(logits, K).indices.tolist())))
    assert torch.equal(a.succ, b.succ) and torch.equal(a.written, b.written)


def test_the_same_size_bound_sees_a_path_the_template_misses():
    table = AdjacencyTable(V, K)
    rb.fill(table, rb.Rows(0, (0, 2), ((1, 2, 4, 5), (6, 7, 8, 3))))     # after 0: 1, 2, ...; after 2: ..., 3
    template = [(-1, 0), (-1, 1)]                                        # two nodes: ranks 0 and 1 after the root
    d = read_tree(table, 0, template, 2)
    assert d.tokens == [1, 2] and kept_along(d.tokens, d.parents, [2, 3], 0) == 1
    assert rb.supported_run(table, 0, [2, 3], 0, cap=2) == 2              # 2 then 3 (rank 3 of 2's row)
    assert rb.supported_run(table, 0, [2, 3, 9], 0, cap=5) == 2           # 9 is in no row: stops
    assert rb.supported_run(table, 5, [2], 0, cap=5) == 0                 # 5 has no row
    assert rb.why_stopped(table, 0, [2, 3, 9], 0, 2) == "row missing"     # 3 was never an input
    assert rb.why_stopped(table, 0, [2, 5], 0, 1) == "not in its row"     # 2's row holds 6, 7, 8, 3
    assert rb.why_stopped(table, 0, [2, 3], 0, 2) == "budget"             # the text ended


def test_a_perfect_table_through_the_static_template():
    template = static_tree(48, by_score=True)
    assert rb.rank0_depth(template, 12) == 4            # 0, 00, 1, 000, 2, 01, 10, 0000, 3, 02, 20, …
    assert rb.rank0_depth(template, 1) == 1
    assert rb.perfect(10, 4, max_new=10, cap=24) == [4, 4]                # τ 5
    assert rb.perfect(10, 12, max_new=10, cap=24) == [9]                  # the last token has no draft after it
    assert rb.tau(10, 2) == 5.0


def test_tokens_per_pass_at_the_same_passes():
    passes = [rb.Pass(0, 3, 1, 2, 3), rb.Pass(2, 3, 0, 0, 1)]
    assert rb.at_same_passes(3, passes, "kept") == (2 + 1) / 2
    assert rb.at_same_passes(3, passes, "same_size") == (3 + 1) / 2
    assert rb.at_same_passes(3, passes, "full") == (3 + 1) / 2        # 4 and 2 tokens, capped at what is left
    assert rb.cost_per_pass({4: 1.1, 8: 1.2}, [0, 8]) == pytest.approx(1.1)


def test_the_replay_of_real_recorded_runs_writes_their_tau():
    """data/recycle_rows (scripts/recycle_bound.py): real greedy recycle runs of the default model, every row they
    handed the table recorded. The replay must feed every pass's tree and so reach the run's own pass count."""
    import json
    import os

    from specviz.core.recycle import TOP_K
    from specviz.proposers.recycle import FILL
    path = os.path.join(os.path.dirname(__file__), "..", "..", "data", "recycle_rows", "bfloat16-128-n12.json")
    have = json.load(open(path))
    nodes, new = have["nodes"], have["new_tokens"]
    for name, r in have["texts"].items():
        rows = [rb.Rows(s, tuple(i), tuple(map(tuple, top))) for s, i, top in r["rows"]]
        passes = rb.replay(r["prompt_ids"], r["run_ids"], rows, r["vocab"], TOP_K,
                           static_tree(FILL * nodes, by_score=True), nodes, new, 24)
        assert len(passes) == r["passes"], name                                 # τ of the replay = τ of the run
        assert r["run_ids"] == r["plain_ids"], name                             # on plain decoding's own text
        assert all(p.kept <= p.same_size <= p.full for p in passes), name
