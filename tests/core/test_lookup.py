"""Pure core: the n-gram search."""
import pytest
import torch

from specviz.core import copybound as cb
from specviz.core.sampling import SamplingConfig
from specviz.proposers.base import Context
from specviz.proposers.lookup import (
    SOLE_FULL,
    SOLE_MAX_V,
    PromptLookup,
    find_continuation,
    lookup,
    match_lookup,
    occurrences,
    sole_pays,
)


def test_no_match():
    assert find_continuation([1, 2, 3, 4, 5], n=2, k=3) == []


def test_most_recent_match_and_k_limit():
    ids = [7, 8, 1, 7, 8, 2, 3, 4, 9, 7, 8]
    assert find_continuation(ids, n=2, k=3) == [2, 3, 4]  # the later occurrence wins
    assert find_continuation(ids, n=2, k=1) == [2]


def test_match_at_very_end_of_context_proposes_what_is_there():
    ids = [5, 6, 9, 5, 6, 5, 6]  # [5, 6] occurs just before the tail: only one token can follow
    assert find_continuation(ids, n=2, k=4) == [5, 6]
    ids = [1, 2, 3, 1, 2]
    assert find_continuation(ids, n=2, k=4) == [3, 1, 2]  # the continuation may run into the tail


def test_n_longer_than_context():
    assert find_continuation([1, 2], n=3, k=2) == []
    assert find_continuation([1, 2, 3], n=3, k=2) == []


def test_min_max_prefers_longest_match():
    # tail [4, 1, 2]: n=3 matches at the start (-> 30), n=2 ([1, 2]) matches later (-> 20)
    ids = [4, 1, 2, 30, 0, 1, 2, 20, 4, 1, 2]
    assert lookup(ids, n_min=2, n_max=3, k=1) == ([30], 3)
    assert lookup(ids, n_min=2, n_max=2, k=1) == ([20], 2)
    assert lookup([9, 9, 8, 1, 2], n_min=1, n_max=3, k=2) == ([], 0)


def test_proposer_interface_and_bad_n():
    ctx = Context(ids=torch.tensor([1, 2, 3, 1, 2]), hidden=None, sampling=SamplingConfig(), generator=None)
    d = PromptLookup(n=2).propose(ctx, k=2)
    assert d.tokens.tolist() == [3, 1] and d.q is None
    assert PromptLookup(n=3).propose(ctx, k=2).tokens.numel() == 0
    with pytest.raises(ValueError):
        PromptLookup(n_min=3, n_max=2)
    with pytest.raises(ValueError):
        PromptLookup(n=0)


def test_vllm_rule_takes_the_earliest_of_the_longest_matches():
    # [7, 8] occurs twice before the tail: followed by 1 (earliest) and by 2 (most recent)
    ids = [7, 8, 1, 5, 7, 8, 2, 9, 7, 8]
    assert find_continuation(ids, n=2, k=2, rule="recent") == [2, 9]
    assert find_continuation(ids, n=2, k=2, rule="earliest") == [1, 5]
    # the longest match still wins before the rule picks among equal-length matches
    ids = [4, 1, 2, 30, 0, 1, 2, 20, 4, 1, 2]
    assert lookup(ids, 2, 3, 1, rule="earliest") == ([30], 3)
    assert lookup([1, 2, 10, 1, 2, 20, 1, 2], 2, 2, 1, rule="earliest") == ([10], 2)
    with pytest.raises(ValueError, match="rule"):
        PromptLookup(n=2, rule="latest")


def test_lookup_says_where_each_copied_token_was_seen():
    """seen_in: the prompt or this request's output, per copied token (a copy can run across the boundary)."""
    import torch

    from specviz.core.sampling import SamplingConfig
    from specviz.proposers.base import Context

    prompt = [5, 6, 7, 8]
    ids = prompt + [9, 5, 6, 7, 8, 9, 5]    # the tail "5" occurred at 0 (prompt) and 5 (output, the longer match)

    def draft(**kw):
        p = PromptLookup(**kw)
        p.reset(torch.tensor(prompt))
        d = p.propose(Context(torch.tensor(ids), None, SamplingConfig(0.0), None), k=4)
        return d.tokens.tolist(), d.seen_in

    out = (["this output"] * 4)
    assert draft(n=1) == ([6, 7, 8, 9], out)                       # most recent: positions 6..9
    assert draft(n=1, rule="earliest") == ([6, 7, 8, 9], ["this prompt"] * 3 + ["this output"])  # 1..4
    assert draft(n=1, k_rule="match", factor=4.0) == ([6, 7, 8, 9], out)  # the longest match (6 tokens) is at 5


# -- the sole-occurrence option of the match rule (issue 35) ---------------------------------------------------
def test_occurrences_counts_earlier_copies_of_the_tail_with_something_after_them():
    ids = [4, 5, 1, 4, 5, 2, 9, 4, 5]
    assert occurrences(ids, 2) == 2                                    # [4, 5] at 0-1 and 3-4; the tail itself not
    assert occurrences(ids, 3) == 0                                    # [9, 4, 5] never before
    assert occurrences([1, 2, 3, 1, 2], 2) == 1
    assert occurrences([7, 7, 7], 1) == 2 and occurrences([7], 1) == 0
    assert occurrences([1, 2], 5) == 0


def test_a_sole_short_match_drafts_k_and_a_common_one_factor_times_m():
    src = list(range(10, 40))
    sole = src + [99] + src[:2]                                        # [10, 11] once before: a copy starting
    assert match_lookup(sole, 2, 24, k=24, factor=4.0) == (src[2:10], 2)              # without: 4 x 2 tokens
    assert match_lookup(sole, 2, 24, k=24, factor=4.0, sole=True) == (src[2:26], 2)   # with: all k
    assert match_lookup(sole, 2, 24, k=5, factor=4.0, sole=True) == (src[2:7], 2)     # k still caps it
    common = [10, 11, 50, 51] + sole                                   # [10, 11] twice before: no evidence
    assert match_lookup(common, 2, 24, k=24, factor=4.0, sole=True) == match_lookup(common, 2, 24, k=24, factor=4.0)
    assert match_lookup(sole, 3, 24, k=24, sole=True) == ([], 2)       # too short a match still drafts nothing
    c = Context(torch.tensor(sole), None, SamplingConfig(), None)
    assert PromptLookup(n_min=2, k_rule="match", sole=True).propose(c, k=24).tokens.tolist() == src[2:26]
    assert PromptLookup(n_min=2, k_rule="match").propose(c, k=24).tokens.tolist() == src[2:10]


def test_the_sole_rule_keeps_a_long_copy_in_fewer_passes_where_the_old_rule_drafts_short():
    """A quote that restarts after an edit: the first two tokens after the edit occur once in the prompt, so
    the copy goes on; the old rule drafts 4 x 2 tokens there and needs an extra pass, the sole rule does not.
    Neither passes the m >= 2 ceiling."""
    quote = list(range(10, 50))                                        # 40 distinct tokens
    prompt = [1, 2] + quote + [3]
    text = quote[:10] + [77] + quote[11:35]                            # one token edited, then copying again
    old = cb.replay(prompt, text, lambda c: (match_lookup(c, 2, 24, 24)[0], None))
    new = cb.replay(prompt, text, lambda c: (match_lookup(c, 2, 24, 24, sole=True)[0], None))
    best = cb.ceiling(prompt, text, min_match=2)
    assert len(best) <= len(new) < len(old)


# -- the follow option: which occurrence, where the copy in progress goes on -------------------------------------
SOURCE = [10, 11, 12, 13, 14, 50, 51, 20, 21, 22, 23, 30, 31, 50, 51, 40, 41, 42, 43]   # [50, 51] twice


def _steps(prop, prompt, committed):
    """Drafts of `prop` at each growing context prompt + committed[:i] (a decode loop's calls)."""
    prop.reset(torch.tensor(prompt))
    return [prop.propose(Context(torch.tensor(prompt + committed[:i]), None, SamplingConfig(), None), 24)
            .tokens.tolist() for i in (2, 5, 6, 7)]


def test_follow_copies_from_where_the_copy_left_off_where_the_most_recent_match_is_the_wrong_one():
    """A quote with one edit (14 -> 77): after the edit the tail [50, 51] matches twice; the copy goes on at
    the first (20, 21, ...), the most recent match (the old rule) copies from the second (40, 41, ...)."""
    prompt = [1] + SOURCE + [2]
    out = [10, 11, 12, 13, 77, 50, 51, 20, 21, 22, 23]
    old = _steps(PromptLookup(n_min=2, k_rule="match"), prompt, out)
    new = _steps(PromptLookup(n_min=2, k_rule="match", follow=True), prompt, out)
    assert old[0] == new[0] == [12, 13, 14, 50, 51, 20, 21, 22]          # the first draft: both the same
    assert old[1] == new[1] == [] and old[2] == new[2] == []             # the edit: nothing matches 2 tokens
    assert old[3][:2] == [40, 41]                                         # recent: the wrong occurrence
    assert new[3][:4] == [20, 21, 22, 23]                                 # follow: where the copy left off
    text = out + [30, 31]
    assert len(cb.replay(prompt, text, lambda c, p=PromptLookup(n_min=2, k_rule="match", follow=True):
                         (p.propose(Context(torch.tensor(c), None, SamplingConfig(), None), 24).tokens.tolist(),
                          None))) < len(cb.replay(prompt, text, lambda c: (match_lookup(c, 2, 24, 24)[0], None)))


def test_follow_without_a_match_near_the_copy_takes_the_longest_and_asking_twice_changes_nothing():
    prompt = [1] + SOURCE + [2]
    p = PromptLookup(n_min=2, k_rule="match", follow=True)
    p.reset(torch.tensor(prompt))
    c = Context(torch.tensor(prompt + [30, 31]), None, SamplingConfig(), None)
    first = p.propose(c, 24).tokens.tolist()
    assert first == p.propose(c, 24).tokens.tolist() == match_lookup(prompt + [30, 31], 2, 24, 24)[0]
    far = Context(torch.tensor(prompt + [30, 31, 50, 51, 9, 9, 10, 11]), None, SamplingConfig(), None)
    assert p.propose(far, 24).tokens.tolist() == match_lookup(far.ids.tolist(), 2, 24, 24)[0]


def test_the_sole_rule_follows_what_a_wide_pass_costs_on_the_machine():
    """On where a 25-row verify pass costs at most SOLE_MAX_V one-token steps (an AMX CPU), off where it costs more (an
    AVX2-only one, ~2.3), the default where the machine was not timed; the words give the cost and the threshold."""
    assert sole_pays(None)[0] is SOLE_FULL and "not timed" in sole_pays(None)[1]
    assert sole_pays(1.3)[0] and sole_pays(SOLE_MAX_V)[0]
    off, why = sole_pays(2.28)
    assert not off and "costs 2.28 one-token steps" in why and f"up to {SOLE_MAX_V:g}" in why and "not 24" in why
