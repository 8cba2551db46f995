"""Sampled siblings (core/siblings.py): the closed forms against hand values and against counting through the
tree verifier; the unadjusted draw is the negative control that must be seen to drift."""
import pytest
import torch

from specviz.core import siblings as S
from specviz.core.errors import InputError
from specviz.core.verify import acceptance_probability

P, Q = torch.tensor([0.1, 0.6, 0.3]), torch.tensor([0.6, 0.2, 0.2])


def tv(a, b):
    return 0.5 * float((a.double() - b.double()).abs().sum())


def test_the_issues_example_drifts_to_its_hand_value():
    out, kept = S.output_distribution(P, Q, 2, S.UNADJUSTED)
    assert out.tolist() == pytest.approx([0.1, 0.45, 0.45], abs=1e-6) and kept == pytest.approx(1.0, abs=1e-6)
    # by hand: A drawn (0.6), kept with 1/6 -> 0.1; rejected (0.5) -> r = (0, .8, .2); then B or C, each kept
    out_r, kept_r = S.output_distribution(P, Q, 2, S.RENORM)
    assert out_r.tolist() == pytest.approx([0.1, 0.6, 0.3], abs=1e-6) and kept_r == pytest.approx(0.85, abs=1e-6)
    out_i, kept_i = S.output_distribution(P, Q, 2, S.IID)
    assert out_i.tolist() == pytest.approx([0.1, 0.6, 0.3], abs=1e-6) and kept_i == pytest.approx(0.70, abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [1, 2, 3])
def test_iid_and_renormalised_draws_are_lossless_for_any_p_and_q(seed, n):
    g = torch.Generator().manual_seed(seed)
    p, q = torch.rand(5, generator=g) ** 2, torch.rand(5, generator=g) ** 2
    p, q = p / p.sum(), q / q.sum()
    for mode in (S.IID, S.RENORM):
        out, kept = S.output_distribution(p, q, n, mode)
        assert tv(out, p) < 1e-6, mode
        assert 0.0 <= kept <= 1.0 + 1e-9
    one = [S.output_distribution(p, q, 1, m)[1] for m in S.MODES]       # one sibling: the plain rule, Σ min(p, q)
    assert one == pytest.approx([float(acceptance_probability(p, q))] * 3, abs=1e-6)


def test_unadjusted_drifts_on_random_p_and_q():
    drifts = []
    for seed in range(6):
        g = torch.Generator().manual_seed(100 + seed)
        p, q = torch.rand(5, generator=g) ** 2, torch.rand(5, generator=g) ** 2
        drifts.append(tv(S.output_distribution(p / p.sum(), q / q.sum(), 2, S.UNADJUSTED)[0], p / p.sum()))
    assert max(drifts) > 0.03                     # would be 0 if testing with the unadjusted q were lossless


@pytest.mark.parametrize("mode", list(S.MODES))
def test_counting_through_the_tree_verifier_matches_the_closed_form(mode):
    trials = 4000
    counts, kept = S.simulate(P, Q, 2, mode, trials, seed=1)
    out, kept_cf = S.output_distribution(P, Q, 2, mode)
    assert tv(counts / trials, out) < 0.03                        # sampling noise ~ 0.01 at 4000 draws
    assert kept / trials == pytest.approx(kept_cf, abs=0.03)
    if mode == S.UNADJUSTED:
        assert tv(counts / trials, P) > 0.1                       # the drift is seen by counting too
    else:
        assert tv(counts / trials, P) < 0.03


def test_bad_inputs_are_one_line_errors():
    with pytest.raises(InputError, match="without replacement"):
        S.output_distribution(P, torch.tensor([0.5, 0.5, 0.0]), 3, S.RENORM)
    with pytest.raises(InputError, match="between 1 and 4"):
        S.simulate(P, Q, 0, S.IID, 10)
    with pytest.raises(InputError, match="unknown draw mode"):
        S.output_distribution(P, Q, 2, "with a wink")
