"""The block lesson's toy example (teach/blockverify.py, weights from core/block.py) against the paper's closed
form: Sun et al. 2024 (arXiv 2403.10444) section 2, p = (1/3, 2/3), q = (2/3, 1/3), k = 2: token-wise keeps 10/9
drafts per step, block 11/9. Negative control: stopping with the backed fractions p_i as weights (the residual mass
left out of h_i) does not give 11/9."""
from fractions import Fraction

import pytest

from specviz.core.errors import InputError
from specviz.teach import blockverify as B


def exact(x: float) -> Fraction:
    return Fraction(x).limit_denominator(1000)


def test_toy_example_token_10_9_block_11_9():
    rows = B.toy_rows()
    assert [r["draft"] for r in rows] == ["AA", "AB", "BA", "BB"]
    assert sum(r["q(draft)"] for r in rows) == pytest.approx(1.0, abs=1e-12)
    assert B.expected_kept(rows, "token") == pytest.approx(10 / 9, abs=1e-12)
    assert B.expected_kept(rows, "block") == pytest.approx(11 / 9, abs=1e-12)
    assert B.as_fraction(B.expected_kept(rows, "block")) == "11/9"
    by = {r["draft"]: r for r in rows}          # the gain is draft AB's: token-wise 1, block 2 (both kept)
    assert (by["AB"]["token"], by["AB"]["block"]) == (pytest.approx(1.0), pytest.approx(2.0))
    assert by["AA"]["h_i"] == [0.0, 0.25]       # rho_1 = Σ max(0, ½p − q) = 0, so h_1 = 0; h_2 = p_2 = ¼


def test_negative_control_weights_without_the_residual_mass_miss_11_9():
    rows = B.toy_rows()
    wrong = B.expected_kept(rows, "backed only")
    assert exact(wrong) != Fraction(11, 9)
    assert wrong == pytest.approx(25 / 18, abs=1e-12)


def test_same_q_as_p_keeps_everything_both_ways():
    rows = B.toy_rows(p=(0.3, 0.7), q=(0.3, 0.7), k=3)
    assert B.expected_kept(rows, "token") == pytest.approx(3.0) == B.expected_kept(rows, "block")


def test_unknown_rule_is_refused():
    with pytest.raises(InputError, match="unknown rule"):
        B.expected_kept(B.toy_rows(), "typical")
