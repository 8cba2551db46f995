"""Acceptance as servers report it: vLLM's numbers from step records, and the geometric law beside them."""
import pytest

from specviz.core.records import StepRecord
from specviz.teach import acceptance as A


def step(k, n):
    """A chain step that drafted k and kept n (a rejection tested unless all were kept)."""
    dec = [True] * n + ([False] if n < k else [])
    return StepRecord(index=0, k=k, context_len=10, drafted=list(range(k)), decisions=dec, draws=[None] * len(dec),
                      ratios=[1.0] * len(dec), n_accepted=n, next_token=0,
                      next_origin="bonus" if n == k else "correction",
                      emitted=[0] * (n + 1), draft_s=0.0, verify_s=0.0, logit_top1=[], logit_gap=[],
                      parents=list(range(-1, k - 1)), tested=list(range(len(dec))), path=list(range(n)))


def test_the_server_numbers_of_a_hand_made_run():
    steps = [step(4, 0), step(4, 2), step(4, 4), step(4, 1), step(0, 0)]     # the last pass drafted nothing
    v = A.server_view(steps)
    assert v.num_drafts == 4 and v.draft_tokens == 16 and v.accepted == 7
    assert v.draft_acceptance_rate == pytest.approx(7 / 16)
    assert v.mean_acceptance_length == pytest.approx(1 + 7 / 4)            # vLLM: 1 + accepted / num_drafts
    assert v.per_position == pytest.approx([3 / 4, 2 / 4, 1 / 4, 1 / 4])   # unconditional, ÷ every draft
    assert v.histogram == [1, 1, 1, 0, 1] and v.zero_share == pytest.approx(0.25)
    # the histogram is the per-position rates differenced: P(exactly i) = rate_i − rate_(i+1)
    rates = [1.0] + v.per_position + [0.0]
    assert [h / v.num_drafts for h in v.histogram] == pytest.approx([rates[i] - rates[i + 1] for i in range(5)])
    assert v.alpha == pytest.approx(7 / 10)                                # 7 kept of 10 tested
    assert sum(v.expected) == pytest.approx(4) and "Mean acceptance length: 2.75" in A.log_line(v)


def test_the_geometric_law_sums_to_one_and_matches_e_tau():
    for a in (0.0, 0.3, 0.9, 1.0):
        g = A.geometric(a, 4)
        assert sum(g) == pytest.approx(1.0)
        assert 1 + sum(i * p for i, p in enumerate(g)) == pytest.approx(sum(a ** i for i in range(5)))
