"""The anatomy of a verification pass, read from real step records of tiny models."""
from specviz.engine.decode import DecodeConfig, Decoder
from specviz.engine.models import tiny_llama
from specviz.proposers.draft_model import DraftModel
from specviz.teach import anatomy


def run(drafter_seed):
    t = tiny_llama()
    d = t if drafter_seed is None else tiny_llama(seed=drafter_seed, layers=1)
    dec = Decoder(t, DraftModel(d.model), [2, 3, 4, 5, 6, 7], DecodeConfig(k=3, max_new_tokens=10))
    return [r for r in dec.run()], dec


def test_caches_grow_by_the_fed_tokens_and_roll_back_to_the_committed_ones():
    for seed in (None, 1):              # the target drafting for itself (all kept) and a stranger (mostly rejected)
        steps, dec = run(seed)
        for r in steps:
            a = anatomy.of(r)
            t0, t1, t2 = a.target_cache
            assert t0 == r.context_len - 1 and t1 - t0 == r.n_drafted + 1 and t2 == r.context_len + r.n_accepted
            assert len(a.dropped_positions) == r.n_drafted - r.n_accepted
            assert a.fed[0] == (r.context_len - 1, int(dec.ids[r.context_len - 1]), "root: the last committed token")
            assert [t for _, t, _ in a.fed[1:]] == r.drafted
            d0, d1, d2 = a.drafter_cache
            assert d2 == min(d1, r.context_len + len(r.emitted) - 1)  # cut back to the committed tokens
        assert all(len(row) == steps[0].n_drafted + 2 for row in anatomy.of(steps[0]).mask)


def test_rows_say_which_draft_each_scores_and_where_the_bonus_comes_from():
    steps, _ = run(None)                # self-drafting, greedy: every draft kept, so the last row gives the bonus
    a = anatomy.of(steps[0])
    assert [r.verdict for r in a.rows] == ["d1 accepted", "d2 accepted", "d3 accepted",
                                           "the bonus token is drawn from this row"]
    assert a.rows[0].scores.endswith("tests draft d1") and a.rows[0].position == steps[0].context_len
    assert a.mask == [[1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]
    steps, _ = run(1)
    r = next(s for s in steps if s.n_accepted < s.n_drafted)
    verdicts = [row.verdict for row in anatomy.of(r).rows]
    assert verdicts[r.n_accepted] == f"d{r.n_accepted + 1} rejected: the correction is drawn from this row"
    assert verdicts[-1].startswith("unused")
    text = anatomy.cache_text(anatomy.of(r), r)
    dropped = r.n_drafted - r.n_accepted
    assert (f"position {r.context_len + r.n_accepted}" if dropped == 1 else
            f"positions {r.context_len + r.n_accepted}–{r.context_len + r.n_drafted - 1}") in text
    assert "258–258" not in text and "positions 1–1" not in text


def test_span_names_one_position_once():
    assert anatomy.span([258]) == "position 258"
    assert anatomy.span([258, 259, 260]) == "positions 258–260"
    assert anatomy.span([258, 260]) == "positions 258, 260"


# -- a tree step: positions at root + depth, the tree mask, rows by node, the path compacted -------------
def tree_steps(kind):
    from tests.tiny.test_heads import V, prompt
    from tests.tiny.test_trees import eagle_tree, medusa_tree

    t = tiny_llama(vocab_size=V, layers=2, hidden=64, seed=0)
    proposer = eagle_tree(t) if kind == "eagle" else medusa_tree(t)
    dec = Decoder(t, proposer, prompt(3), DecodeConfig(k=4, max_new_tokens=40, stop_at_eos=False))
    return [r for r in dec.run() if r.is_tree]


def test_a_tree_step_is_laid_out_as_a_tree_not_a_chain():
    from specviz.core.tree import depths, tree_mask

    steps = tree_steps("eagle")
    assert steps
    branched = [r for r in steps if r.path and r.path != list(range(len(r.path)))]  # kept a branch off node 0's line
    assert branched, "no step kept a branch: the compaction is not exercised"
    for r in steps:
        a = anatomy.of(r)
        root, dep = r.context_len - 1, depths(r.parents)
        # positions: root + depth (the old chain layout put node i at root + i + 1)
        assert [pos for pos, _, _ in a.fed] == [root] + [root + d for d in dep]
        # the mask is the tree mask, behind a column for the cache
        assert a.mask == [[1] + row for row in tree_mask(r.parents).int().tolist()]
        # every tested node is tested in its parent's row, with its verdict
        for node, ok in zip(r.tested, r.decisions):
            row = a.rows[r.parents[node] + 1]
            assert f"d{node + 1} {'accepted' if ok else 'rejected'}" in row.verdict
            assert f"d{node + 1}" in row.scores
        # the next token comes from the row at the end of the accepted path; rows off the path are unused
        end = (r.path[-1] + 1) if r.path else 0
        assert f"the {r.next_origin} " in a.rows[end].verdict
        assert all(a.rows[i + 1].verdict.startswith("unused") for i in range(r.n_drafted) if i not in r.path)
        # the KV entries kept: the root and the path, gathered into consecutive slots
        t0, t1, t2 = a.target_cache
        assert a.kept_rows == [0] + [i + 1 for i in r.path] and t2 - t0 == len(a.kept_rows)
        assert a.moves == [(t0 + rw, t0 + j) for j, rw in enumerate(a.kept_rows) if rw != j]
        assert sorted(a.dropped_nodes + r.path) == list(range(r.n_drafted))
    r = branched[0]
    a = anatomy.of(r)
    assert a.moves and "gathered and moved down" in anatomy.cache_text(a, r)


def test_the_eagle_head_shows_its_own_cache_and_medusa_has_none():
    for r in tree_steps("eagle"):
        d0, d1, d2 = r.drafter_cache                     # the head keeps a KV cache: it is shown
        assert d2 == r.context_len - 1 and d1 >= d2      # every drafted entry dropped; the real context stays
        assert "keeps its own KV cache" in anatomy.drafter_text(anatomy.of(r), "eagle-tree")
    r = tree_steps("medusa")[0]
    assert r.drafter_cache is None
    assert "no KV cache of its own" in anatomy.drafter_text(anatomy.of(r), "medusa-tree")


def test_tree_tally_is_kept_over_tested_and_kept_per_pass():
    from specviz.core.records import summarize

    steps = tree_steps("eagle")
    s = summarize("eagle-tree", "", [], 3, steps, 1.0, 0.0)
    (l1, v1, _), (l2, v2, _) = anatomy.tree_tally(s)
    assert v1 == f"{s.accepted / s.tested:.0%} ({s.accepted} / {s.tested})" and s.tested < s.drafted
    assert v2 == f"{s.accepted / len(steps):.2f}"


def test_a_step_with_no_draft_is_an_ordinary_decoding_step():
    from specviz.proposers.lookup import PromptLookup

    t = tiny_llama()
    dec = Decoder(t, PromptLookup(3, 3), [2, 3, 4, 5, 6, 7], DecodeConfig(k=3, max_new_tokens=4))
    r = next(r for r in dec.run() if not r.drafted)       # no earlier occurrence of the last 3 tokens
    a = anatomy.of(r)
    assert len(a.fed) == 1 and len(a.rows) == 1 and "bonus" not in a.rows[0].verdict
    assert "ordinary decoding step" in anatomy.inputs_text(a, str)
    assert "lookup searches" in anatomy.drafter_text(a, "lookup")
