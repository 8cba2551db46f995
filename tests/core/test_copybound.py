"""The copying ceiling (core/copybound.py): hand-made texts, and no real rule beating it on random ones."""
import random

import torch

from specviz.core import copybound as cb
from specviz.core.costmodel import passes_speedup
from specviz.core.suffix import SessionCache
from specviz.proposers.base import draft_on
from specviz.proposers.lookup import PromptLookup, find_continuation, match_lookup
from specviz.proposers.suffix import SuffixProposer


def test_supported_run_needs_the_evidence():
    ctx = [1, 2, 3, 4, 9]                    # 3, 4 follow "2"; the tail is 9, seen nowhere before
    assert cb.supported_run(ctx, [3, 4], min_match=1) == 0
    assert cb.supported_run(ctx, [3, 4], min_match=0) == 2      # without evidence: copied from anywhere
    assert cb.supported_run([1, 2, 3, 4, 2], [3, 4, 7], min_match=1) == 2
    assert cb.supported_run([1, 2, 3, 4, 2], [3, 4, 7], min_match=2) == 0   # "4 2" never occurred before


def test_supported_run_copies_only_what_is_already_there():
    # the tail "5" occurred at position 0; what followed it (6) is there, the future is not
    assert cb.supported_run([5, 6, 5], [6, 5, 6, 5, 6], min_match=1) == 2
    assert cb.supported_run([5, 6, 5], [6, 5, 6], sources=[[5, 6, 5, 6, 5, 6]], min_match=1) == 3


def test_ceiling_on_a_text_that_repeats_its_prompt():
    prompt = list(range(10, 40))               # 30 distinct tokens
    text = [10] + list(range(11, 40))          # the prompt again
    lengths = cb.ceiling(prompt, text, min_match=1, cap=8)
    # pass 1: the tail 39 never occurred before, so nothing to draft; then 8-token runs plus the bonus token
    assert lengths == [0, 8, 8, 8, 2]
    assert cb.tokens_per_pass(text, lengths) == 30 / 5


def test_replays_count_what_greedy_acceptance_keeps():
    text = [1, 2, 3, 9]
    assert cb.replay([0], text, lambda ctx: ([1, 2, 7, 7], None)) == [4, 4]          # keeps 1 2, then 3; then 9
    tree = ([1, 2, 5, 3], [-1, 0, -1, 1])                                      # 1→2→3 and 5
    assert cb.replay([0], text, lambda ctx: tree) == [4]                 # 1 2 3 kept, 9 the bonus
    v = {1: 1.1, 2: 1.2, 4: 1.5}
    assert abs(passes_speedup(len(text), [4], v) - 4 / 1.5) < 1e-9      # the pricing is core/costmodel's
    assert passes_speedup(len(text), [0, 0, 0, 0], v) == 1.0
    assert passes_speedup(len(text), [4], v, c=0.1) == 4 / (1.5 + 0.4) and passes_speedup(0, [], v) is None


def _random_case(rng: random.Random, alphabet: int):
    prompt = [rng.randrange(alphabet) for _ in range(rng.randint(5, 40))]
    text = []
    while len(text) < 40:                      # copies of the prompt and of itself, with edits
        src = prompt + text
        if rng.random() < 0.6:
            i = rng.randrange(len(src))
            text += src[i:i + rng.randint(1, 12)]
        else:
            text.append(rng.randrange(alphabet))
    return prompt, text[:40]


def _draft(prop):
    return lambda ctx: draft_on(prop, ctx, cb.CAP)


def test_no_copying_rule_needs_fewer_passes_than_the_ceiling():
    rng = random.Random(0)
    for case in range(120):
        prompt, text = _random_case(rng, alphabet=rng.choice([3, 5, 12]))
        c1 = len(cb.ceiling(prompt, text, min_match=1))
        c2 = len(cb.ceiling(prompt, text, min_match=2))
        assert c1 <= c2
        for m in (1, 2):
            rules = [lambda ctx, m=m: (match_lookup(ctx, m, 24, 24)[0], None),
                     lambda ctx, m=m: (match_lookup(ctx, m, 24, 24, sole=True)[0], None),
                     lambda ctx, m=m: (find_continuation(ctx, m, 10), None),
                     lambda ctx, m=m: (find_continuation(ctx, m, 3, rule="earliest"), None)]
            follow = PromptLookup(n_min=m, k_rule="match", sole=True, follow=True)   # the default's options
            follow.reset(torch.tensor(prompt))
            for rule in rules + [_draft(follow)]:
                assert len(cb.replay(prompt, text, rule)) >= (c1 if m == 1 else c2), case
        prop = SuffixProposer()
        prop.reset(torch.tensor(prompt))
        assert len(cb.replay(prompt, text, _draft(prop))) >= c1, case


def test_the_ceiling_holds_across_requests():
    rng = random.Random(1)
    for case in range(40):
        prompt, text = _random_case(rng, alphabet=6)
        earlier = [_random_case(rng, alphabet=6)[1] for _ in range(2)]
        cache = SessionCache()
        for e in earlier:
            cache.add(e)
        prop = SuffixProposer(cache=cache)
        prop.reset(torch.tensor(prompt))
        assert len(cb.replay(prompt, text, _draft(prop))) >= len(cb.ceiling(prompt, text, earlier)), case


def test_negative_control_a_rule_with_less_evidence_can_beat_the_ceiling():
    # the ceiling is only a ceiling for rules that wait for min_match matched tokens: one that drafts
    # after a single matched token beats the two-token ceiling on some of these texts
    rng = random.Random(0)
    beaten = 0
    for _ in range(120):
        prompt, text = _random_case(rng, alphabet=rng.choice([3, 5, 12]))
        one = cb.replay(prompt, text, lambda ctx: (match_lookup(ctx, 1, 24, 24)[0], None))
        beaten += len(one) < len(cb.ceiling(prompt, text, min_match=2))
    assert beaten > 0
