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
            assert a.fed[0] == (r.context_len - 1, int(dec.ids[r.context_len - 1]), "last committed token")
            assert [t for _, t, _ in a.fed[1:]] == r.drafted
            d0, d1, d2 = a.drafter_cache
            assert d2 == min(d1, r.context_len + len(r.emitted) - 1)  # cut back to the committed tokens
        assert all(len(row) == steps[0].n_drafted + 2 for row in anatomy.of(steps[0]).mask)


def test_rows_say_which_draft_each_scores_and_where_the_bonus_comes_from():
    steps, _ = run(None)                # self-drafting, greedy: every draft kept, so the last row gives the bonus
    a = anatomy.of(steps[0])
    assert [r.verdict for r in a.rows] == ["accepted"] * 3 + ["the bonus token is drawn from this row"]
    assert a.rows[0].scores.endswith("tests draft d1") and a.rows[0].position == steps[0].context_len
    assert a.mask == [[1, 1, 0, 0, 0], [1, 1, 1, 0, 0], [1, 1, 1, 1, 0], [1, 1, 1, 1, 1]]
    steps, _ = run(1)
    r = next(s for s in steps if s.n_accepted < s.n_drafted)
    verdicts = [row.verdict for row in anatomy.of(r).rows]
    assert verdicts[r.n_accepted].startswith("rejected") and verdicts[-1] == "unused"
