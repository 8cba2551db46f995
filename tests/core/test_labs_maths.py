"""Pure maths of the §6 labs: lossy rules drift from p (and the exact settings do not), break-even per family from
the one cost model, wasted positions per pass."""
import pytest
import torch

from specviz.core import costmodel as be
from specviz.teach import families as F, lab as L, lossy as Y, reality as R

P, Q = L.pair(*L.PRESETS["q far from p"])


@pytest.mark.parametrize("rule", list(Y.RULES))
def test_a_lossy_rule_drifts_from_p_at_its_defaults(rule):
    # would fail if the rule were lossless: the output is measurably not p
    assert Y.summary(P, Q, rule, Y.DEFAULTS[rule])["drift"] > 0.02
    out = Y.output(P, Q, rule, Y.DEFAULTS[rule])
    assert float(out.sum()) == pytest.approx(1.0, abs=1e-6)


def test_medusa_typical_acceptance_by_hand():
    p = torch.tensor([0.7, 0.2, 0.1])
    h = -float((p * p.log()).sum())
    thr = Y.typical_threshold(p, 0.09, 0.3)
    assert thr == pytest.approx(min(0.09, 0.3 * torch.exp(torch.tensor(-h)).item()))
    assert Y.keep_chance(p, Y.TYPICAL, {"eps": 0.09, "delta": 0.3}).tolist() == [1.0, 1.0, 1.0 if 0.1 > thr else 0.0]
    # q puts everything on the third token, below a high threshold: rejected, the argmax is emitted
    q = torch.tensor([0.0, 0.0, 1.0])
    out = Y.output(p, q, Y.TYPICAL, {"eps": 0.5, "delta": 1.0})
    assert out.tolist() == pytest.approx([1.0, 0.0, 0.0])


def test_sglang_thresholds_at_one_are_exact_and_below_one_are_not():
    # t_single = t_acc = 1 (SGLang's defaults): keep x with p(x), else p without x -> exactly p, whatever q
    for preset in L.PRESETS.values():
        p, q = L.pair(*preset)
        out = Y.output(p, q, Y.THRESHOLD, {"single": 1.0, "acc": 1.0})
        assert torch.allclose(out, p, atol=1e-6)
    lossy = Y.summary(P, Q, Y.THRESHOLD, {"single": 1.0, "acc": 0.5})
    assert lossy["drift"] > 0.02 and lossy["kept"] > float((Q * P).sum())   # keeps more, drifts


def test_draws_follow_the_closed_form_not_p():
    for rule in Y.RULES:
        counts, kept = Y.simulate(P, Q, rule, Y.DEFAULTS[rule], 40000, seed=1)
        freq = counts / counts.sum()
        out = Y.output(P, Q, rule, Y.DEFAULTS[rule])
        assert 0.5 * float((freq - out).abs().sum()) < 0.02
        assert 0.5 * float((freq - P).abs().sum()) > 0.02
        assert kept / 40000 == pytest.approx(Y.summary(P, Q, rule, Y.DEFAULTS[rule])["kept"], abs=0.015)


def test_lossy_summary_buys_tau_through_the_cost_models_law():
    s = Y.summary(P, Q, Y.TYPICAL, Y.DEFAULTS[Y.TYPICAL], k=4)
    assert s["tau"] == pytest.approx(be.expected_tokens_per_pass(s["kept"], 4))
    assert s["kept"] > s["kept_exact"] and s["tau"] > s["tau_exact"]


# SmolLM2-135M's shapes (its config.json: 30 layers, hidden 576, MLP 1536, 9 query and 3 key/value heads of 64,
# a tied 49,152-token output layer): inputs of the pricing, not its result.
_LAYER = 576 * (576 + 192 + 192 + 576) + 3 * 576 * 1536 + 2 * 576
SMOL = be.LayerParams(layers=(_LAYER,) * 30, head=49152 * 576 + 576)


def test_truncation_is_priced_with_its_output_layer():
    c = be.truncation_cost(SMOL, 16)
    assert c == pytest.approx(0.63, abs=0.005)                    # the output layer is ~21% of a pass
    assert be.breakeven_alpha(4, c, 1.0) == pytest.approx(0.82, abs=0.01)
    assert abs(c - 16 / 30) > 0.09                                # would pass if the head were left out: it must not
    assert be.truncation_cost(SMOL, 30) == 1.0 and be.truncation_cost(SMOL, 0) > 0.2   # the head alone costs
    with pytest.raises(ValueError):
        be.truncation_cost(SMOL, 31)


def test_break_even_per_family_orders_by_cost():
    fams = F.families({"draft": 0.1, "medusa": 0.02}, F.truncation(SMOL, 16))
    a = F.breakevens(fams, 4, 1.0)
    assert a[F.LOOKUP] == 0.0                                     # c = 0, v = 1: pays at any alpha
    assert a["medusa"] < a["draft"] < a[F.TRUNCATION]
    assert a[F.TRUNCATION] == pytest.approx(be.breakeven_alpha(4, be.truncation_cost(SMOL, 16), 1.0))
    assert be.speedup(a["draft"], 4, 0.1, 1.0) == pytest.approx(1.0, abs=1e-6)
    assert F.breakevens([F.truncation(SMOL, 16)], 1, 2.0)[F.TRUNCATION] is None    # v(1) + c > 2: never pays


def test_wasted_positions_per_pass():
    assert R.wasted_per_pass(1.0, 4) == pytest.approx(0.0)
    assert R.wasted_per_pass(0.0, 4) == pytest.approx(4.0)
    assert R.wasted_per_pass(0.8, 4) == pytest.approx(5 - be.expected_tokens_per_pass(0.8, 4))
