"""Pure core: suffix matching with counts (core/suffix.py) and the match-length lookup rule, on hand-made sequences."""
import random

import pytest
import torch

from specviz.core.errors import InputError
from specviz.core.sampling import SamplingConfig
from specviz.core.suffix import SessionCache, TokenSeq, continuation_trie, match_lengths, speculate
from specviz.proposers.base import Context
from specviz.proposers.lookup import MATCH_FACTOR, PromptLookup, longest_match, lookup, match_lookup
from specviz.proposers.suffix import SuffixProposer


def brute_occurrences(seq, s, end=None):
    """End positions p (p + 1 < end) where the string s occurs, by direct comparison."""
    end = len(seq) if end is None else end
    m = len(s)
    return [p for p in range(m - 1, end - 1) if seq[p - m + 1: p + 1] == s]


def test_match_lengths_give_the_occurrences_of_every_suffix():
    """{p : l_p >= m} is the set of occurrences of the tail's last m tokens: the counts a depth-D suffix
    tree keeps, for every m <= D, on random sequences over a small vocabulary (many repeats)."""
    rng = random.Random(0)
    for trial in range(200):
        seq = [rng.randrange(4) for _ in range(rng.randrange(2, 40))]
        tail = seq[-rng.randrange(1, len(seq) + 1):] if trial % 2 else [rng.randrange(4) for _ in range(6)]
        D = rng.randrange(1, 8)
        got = match_lengths(TokenSeq(seq), tail, D)
        for m in range(1, min(D, len(tail)) + 1):
            assert sorted(p for p, length in got if length >= m) == brute_occurrences(seq, tail[-m:])
        assert all(1 <= length <= D for _, length in got)


def test_continuation_counts_are_the_suffix_trees():
    """Under the node of string s, the child path c counts the occurrences of s + c (that have a token after s)."""
    rng = random.Random(1)
    for _ in range(100):
        seq = [rng.randrange(3) for _ in range(30)]
        s = seq[-2:]
        occ = brute_occurrences(seq, s)
        root = continuation_trie([(TokenSeq(seq), p) for p in occ], depth=3)
        assert root.count == len(occ)
        stack = [(root, [])]
        while stack:
            node, path = stack.pop()
            for tok, child in node.children.items():
                c = path + [tok]
                # occurrences of s followed by c, with c read within the sequence
                want = sum(1 for p in occ if seq[p + 1: p + 1 + len(c)] == c)
                assert child.count == want
                stack.append((child, c))


def test_match_lengths_stop_at_the_start_of_the_sequence_and_skip_the_tail():
    seq = TokenSeq([5, 6, 7, 5, 6])
    assert match_lengths(seq, [5, 6], 8) == [(1, 2)]       # position 4 (the tail itself) has no next token
    assert match_lengths(seq, [9, 5, 6], 8) == [(1, 2)]    # position 1: nothing before 5 to compare
    assert match_lengths(seq, [5, 6], 8, end=3) == [(1, 2)]
    assert match_lengths(seq, [5, 6], 8, end=2) == []


# this = 1 2 3 4 9 | 1 2 3 5 9 | 1 2 6 9 | 1 2: the tail [9, 1, 2] has three earlier matches of [1, 2]
BRANCHY = [1, 2, 3, 4, 9, 1, 2, 3, 5, 9, 1, 2, 6, 9, 1, 2]


def test_a_branching_draft_counts_and_orders_its_candidates():
    # m = 1 or 2: the continuations of [2] / [1, 2]: 3 twice (then 4 or 5), 6 once. factor 1 lets m = 2 draft 2 deep
    d = speculate([TokenSeq(BRANCHY)], BRANCHY, max_tokens=5, factor=1.0, min_prob=0.0, max_depth=3)
    # max_depth 3: m = 3 may draft 0 deep, m = 2 may draft 1, m = 1 may draft 1 (factor): the best is m = 2
    assert d.match_len == 2 and d.tokens == [3, 6] and d.parents == [-1, -1]
    assert d.probs == pytest.approx([2 / 3, 1 / 3]) and d.score == pytest.approx(1.0)
    # the factor caps the nodes in all (ArcticInference's node budget): factor 1 lets m = 3 ([9, 1, 2], twice:
    # then 3 5 9 / 6 9 1) draft 3 nodes of probability 1/2 (score 1.5), m = 2 two (3, then 6: 2/3 + 1/3)
    d = speculate([TokenSeq(BRANCHY)], BRANCHY, max_tokens=4, factor=1.0, min_prob=0.0, max_depth=24)
    assert d.match_len == 3 and len(d.tokens) == 3 and d.score == pytest.approx(1.5)
    d = speculate([TokenSeq(BRANCHY)], BRANCHY, max_tokens=4, factor=2.0, min_prob=0.0, max_depth=24)
    # factor 2: m = 3 drafts 4 nodes (k), score 4 x 1/2 = 2; m = 2 drafts 3 (2/3), then 6, 4, 5 (1/3 each):
    # score 5/3. m = 3 wins
    assert d.match_len == 3 and len(d.tokens) == 4 and d.score == pytest.approx(2.0)
    assert d.tokens[:2] == [3, 6] and d.parents[:2] == [-1, -1]
    assert all(p < i for i, p in enumerate(d.parents))                 # parents before children
    assert sorted(d.probs, reverse=True) == d.probs                   # best first


def test_min_prob_prunes_rare_continuations_and_the_factor_caps_depth():
    d = speculate([TokenSeq(BRANCHY)], BRANCHY, max_tokens=8, factor=1.0, min_prob=0.5, max_depth=24)
    assert all(p >= 0.5 for p in d.probs) and 6 not in d.tokens[:1]
    # a long copy: the tail matches 6 tokens once; factor 0.5 drafts 3 deep, factor 1 drafts 6
    src = [10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]
    tail = [10, 11, 12, 13, 14, 15]
    for factor, depth in ((0.5, 3), (1.0, 5), (2.0, 5)):           # 5 tokens follow 15 in the source
        d = speculate([TokenSeq(src)], tail, max_tokens=24, factor=factor, min_prob=0.1)
        assert d.tokens == src[6: 6 + depth] and d.match_len == 6
    # max_depth bounds match + draft: depth 8 leaves 2 after a 6-token match (or more after a shorter one)
    d = speculate([TokenSeq(src)], tail, max_tokens=24, factor=1.0, min_prob=0.1, max_depth=8)
    assert d.tokens == [16, 17, 18, 19] and d.match_len == 4           # m = 4 drafts min(4, 8 - 4) = 4
    assert speculate([TokenSeq(src)], [99, 10], max_tokens=4).tokens == [11]  # m = 1 drafts 1 token


def test_no_match_no_draft_and_the_token_budget():
    assert speculate([TokenSeq([1, 2, 3])], [7], max_tokens=4).tokens == []
    assert speculate([TokenSeq([1, 2, 3])], [1], max_tokens=0).tokens == []
    d = speculate([TokenSeq(list(range(30)))], list(range(12)), max_tokens=3)
    assert d.tokens == [12, 13, 14]


def test_seen_in_names_this_prompt_this_output_and_earlier_requests():
    cache = SessionCache()
    cache.add([40, 41, 42, 43, 44], prompt_len=2)                      # request 1: output 42 43 44
    this = TokenSeq([50, 41, 42, 51], name="this", prompt_len=3)       # 41 42 in this prompt, 51 its output
    this.extend([52, 41, 42])
    d = speculate([this, *cache.seqs], this.tokens, max_tokens=4, factor=2.0, min_prob=0.0)
    assert d.match_len == 2
    by_token = dict(zip(d.tokens, d.seen_in))
    assert by_token[51] == "this output" and by_token[43] == "request 1 output"
    this2 = TokenSeq([41, 42, 60, 41, 42], name="this", prompt_len=5)
    d = speculate([this2, *cache.seqs], this2.tokens, max_tokens=1, factor=1.0, min_prob=0.0)
    assert d.tokens and d.seen_in[0] in ("this prompt", "request 1 output")


def test_session_cache_evicts_oldest_first_by_requests_and_tokens():
    c = SessionCache(max_requests=2, max_tokens=10)
    for i in range(3):
        c.add([i] * 4)
    assert [s.name for s in c.seqs] == ["request 2", "request 3"] and c.n_tokens == 8
    c.add([7] * 7)                                                      # 11 tokens > 10: request 3 goes too
    assert [s.name for s in c.seqs] == ["request 4"]
    c.add(list(range(25)), prompt_len=20)                               # longer than the cache: its last 10
    assert c.seqs[-1].tokens == list(range(15, 25)) and c.seqs[-1].prompt_len == 5 and c.n_tokens == 10
    off = SessionCache(max_requests=0)
    off.add([1, 2, 3])
    assert len(off) == 0
    assert c.nbytes() > 0
    with pytest.raises(InputError, match="size"):
        SessionCache(max_requests=-1)


def ctx(ids):
    return Context(ids=torch.tensor(ids), hidden=None, sampling=SamplingConfig(), generator=None)


def test_suffix_proposer_drafts_a_tree_and_remembers_only_when_told():
    p = SuffixProposer(min_prob=0.0)
    p.reset(torch.tensor(BRANCHY[:14]))
    d = p.propose(ctx(BRANCHY), k=4)                                   # the two tokens since reset are indexed
    assert d.parents is not None and d.q is None and len(d.tokens) <= 4 and d.tokens[0] == 3
    assert len(d.seen_in) == len(d.tokens)
    # a second request: nothing from the first is known until remember()
    p.reset(torch.tensor([70, 9, 1, 2]))
    assert p.propose(ctx([70, 9, 1, 2]), k=4).tokens.tolist() == []
    p.reset(torch.tensor(BRANCHY))
    p.remember(include_prompt=True)
    p.reset(torch.tensor([70, 9, 1, 2]))
    d = p.propose(ctx([70, 9, 1, 2]), k=4)
    assert d.tokens.numel() > 0 and all(o.startswith("request 1") for o in d.seen_in)
    for bad in (dict(max_depth=1), dict(factor=0), dict(min_prob=1.5), dict(min_match=0)):
        with pytest.raises(InputError):
            SuffixProposer(**bad)


# -- the match-length lookup rule ---------------------------------------------------------------
def test_longest_match_and_its_occurrence_rule():
    ids = [7, 8, 9, 1, 8, 9, 2, 3, 7, 8, 9]
    assert longest_match(ids, 24) == (3, 2)                            # [7, 8, 9] at the start beats [8, 9]
    assert longest_match(ids, 2) == (2, 5)                             # capped at 2: the most recent [8, 9]
    assert longest_match(ids, 2, rule="earliest") == (2, 2)
    assert longest_match([1, 2, 3], 24) == (0, -1)


def test_match_rule_drafts_as_far_as_the_match_goes():
    src = list(range(10, 40))
    ids = src + [99] + src[:6]                                         # a copy in progress, 6 tokens matched
    assert match_lookup(ids, 2, 24, k=24, factor=1.0) == (src[6:12], 6)
    assert match_lookup(ids, 2, 24, k=4, factor=1.0) == (src[6:10], 6)   # k caps it
    assert match_lookup(ids, 2, 24, k=24, factor=0.5) == (src[6:9], 6)
    assert match_lookup(ids, 2, 4, k=24, factor=1.0) == (src[6:10], 4)   # the match counted up to n_max
    assert match_lookup(ids, 7, 24, k=24, factor=1.0) == ([], 6)        # too short a match: no draft
    short = [5, 1, 2, 3, 6, 7, 3]
    assert match_lookup(short, 1, 24, k=8, factor=1.0) == ([6], 1)      # one token matched: one drafted
    assert match_lookup(short, 1, 24, k=8, factor=3.0) == ([6, 7, 3], 1)  # runs into the tail, no further


def test_match_rule_with_a_large_factor_is_the_fixed_rule():
    """With factor large enough the match rule drafts exactly fixed lookup's k tokens, from the same
    occurrence (widest n in [n_min, n_max], then the recent/earliest rule)."""
    rng = random.Random(2)
    for _ in range(300):
        ids = [rng.randrange(5) for _ in range(rng.randrange(1, 50))]
        n_min, n_max, k = rng.randrange(1, 4), rng.randrange(3, 7), rng.randrange(1, 9)
        for rule in ("recent", "earliest"):
            want, n = lookup(ids, n_min, n_max, k, rule)
            got, m = match_lookup(ids, n_min, n_max, k, factor=100.0, rule=rule)
            assert got == want and (m if got else 0) == n


def test_lookup_proposer_rules_and_bad_settings():
    src = list(range(10, 40))
    ids = src + [99] + src[:6]
    p = PromptLookup(k_rule="match", factor=1.5)                       # n_min = n = 3, n_max = 24
    assert p.propose(ctx(ids), k=24).tokens.tolist() == src[6:15] and p.last_n == 6   # 1.5 x 6 = 9 tokens
    default = PromptLookup(k_rule="match").propose(ctx(ids), k=24).tokens.tolist()   # the default factor
    assert default == src[6:6 + min(24, int(MATCH_FACTOR * 6))]
    assert PromptLookup(n=3).propose(ctx(ids), k=24).tokens.tolist() == src[6:30]  # fixed: k tokens
    for bad in (dict(k_rule="longest"), dict(k_rule="match", factor=0.0), dict(n_min=5, n_max=4, k_rule="match"),
                dict(n=0, k_rule="match")):
        with pytest.raises(InputError):
            PromptLookup(**bad)
