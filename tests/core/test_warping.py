"""Mismatched warping (core/warping.py): the matched case follows the target's warped p; each mismatch drifts
(the negative controls), vanishes where the two warps coincide, and counting through core/verify.py agrees."""
import pytest
import torch

from specviz.core import warping as W
from specviz.core.errors import InputError
from specviz.core.sampling import SamplingConfig, logits_to_probs

ZP = torch.tensor([2.0, 1.0, 0.5, 0.0, -1.0])
ZQ = torch.tensor([1.0, 2.0, 0.0, 0.5, -1.0])


@pytest.mark.parametrize("t", [0.3, 0.7, 1.0, 1.5])
@pytest.mark.parametrize("top_p", [1.0, 0.8])
def test_matched_warping_follows_the_targets_warped_distribution(t, top_p):
    w = W.setup(ZP, ZQ, t, top_p, W.MATCHED)
    assert W.tv(W.output(w), w.target) < 1e-6
    assert torch.allclose(w.target, logits_to_probs(ZP, SamplingConfig(temperature=t, top_p=top_p)))


def test_each_mismatch_drifts_and_vanishes_where_the_warps_coincide():
    assert W.tv(W.output(W.setup(ZP, ZQ, 0.5, 1.0, W.Q_RAW)), logits_to_probs(ZP, SamplingConfig(0.5))) > 0.05
    assert W.tv(W.output(W.setup(ZP, ZQ, 1.0, 1.0, W.Q_RAW)), logits_to_probs(ZP, SamplingConfig(1.0))) < 1e-6
    w = W.setup(ZP, ZQ, 0.5, 1.0, W.P_RAW)                  # exact for the p it is given: raw p, not p at T
    assert W.tv(W.output(w), logits_to_probs(ZP, SamplingConfig(1.0))) < 1e-6 and W.tv(W.output(w), w.target) > 0.1
    assert W.tv(W.output(W.setup(ZP, ZQ, 1.0, 0.7, W.TOPP_DRAFT)), W.setup(ZP, ZQ, 1.0, 0.7, W.MATCHED).target) > 0.02
    assert W.tv(W.output(W.setup(ZP, ZQ, 1.0, 1.0, W.TOPP_DRAFT)), W.setup(ZP, ZQ, 1.0, 1.0, W.MATCHED).target) < 1e-6


@pytest.mark.parametrize("case", list(W.CASES))
def test_counting_through_the_verifier_matches_the_closed_form(case):
    w = W.setup(ZP, ZQ, 1.0, 0.7, case)
    trials = 6000
    freq = W.simulate(w, trials, seed=3) / trials
    assert W.tv(freq, W.output(w)) < 0.03
    if case == W.MATCHED:
        assert W.tv(freq, w.target) < 0.03
    else:
        assert W.tv(freq, w.target) > 0.04                   # the drift is seen by counting, not only on paper


def test_bad_settings_are_one_line_errors():
    with pytest.raises(InputError, match="temperature"):
        W.setup(ZP, ZQ, 0.0, 1.0, W.MATCHED)
    with pytest.raises(InputError, match="top-p"):
        W.setup(ZP, ZQ, 1.0, 0.0, W.MATCHED)
