"""Pure core: the n-gram search."""
import pytest
import torch

from specviz.core.sampling import SamplingConfig
from specviz.proposers.base import Context
from specviz.proposers.lookup import PromptLookup, find_continuation, lookup


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
