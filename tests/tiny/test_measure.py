"""The one measuring path (engine/measure.py): the speedup rule, the spread, the refusal to quote."""
import statistics

import pytest
import torch

from specviz.core.sampling import SamplingConfig
from specviz.engine import measure
from specviz.engine.decode import DecodeConfig
from specviz.engine.models import tiny_llama
from specviz.proposers.lookup import PromptLookup

V = 96


def test_spread_is_iqr_range_or_unknown():
    assert measure.spread([1.2]) is None
    assert measure.spread([1.0, 1.3, 1.1]) == pytest.approx(0.3)             # range for 2-3 repeats
    assert measure.spread([1.0, 1.1, 1.2, 1.3, 5.0]) == pytest.approx(0.2)   # IQR ignores one outlier


def test_a_figure_noisier_than_its_effect_is_refused():
    assert measure.too_noisy(1.05, 0.2) and measure.TOO_NOISY in measure.quote(1.05, 0.2, 3)
    assert not measure.too_noisy(1.5, 0.2) and measure.quote(1.5, 0.2, 3).startswith("1.50×")
    assert not measure.too_noisy(1.05, None) and "one repeat" in measure.quote(1.05, None, 1)
    assert measure.too_noisy(0.97, 0.05)                                     # a slowdown is an effect too


@pytest.fixture(scope="module")
def target():
    return tiny_llama(vocab_size=V, layers=2, hidden=64, seed=0)


def test_interleaved_shares_one_plain_run_per_repeat(target):
    g = torch.Generator().manual_seed(0)
    ids = (torch.randint(2, V, (12,), generator=g).tolist() * 4)[:40]
    cfg = DecodeConfig(k=3, max_new_tokens=10, stop_at_eos=False, record=False)
    look = PromptLookup(n_min=2, n_max=2)
    got, plains = measure.interleaved(target, ids, {"k3": (lambda: look, cfg),
                                                    "k1": (lambda: look, DecodeConfig(k=1, max_new_tokens=10,
                                                                                      stop_at_eos=False, record=False))},
                                      measure.plain_config(cfg), repeats=3)
    assert len(plains) == 3
    for m in got.values():
        assert [r.plain for r in m.repeats] == [p for p, _ in plains]         # the same plain runs for both
        assert m.ratios == [r.summary.tokens_per_s / r.plain.tokens_per_s for r in m.repeats]
        assert m.speedup == pytest.approx(statistics.median(m.ratios))
        assert m.typical.ratio == pytest.approx(m.speedup)
        assert m.compared and m.identical                                     # greedy, float32
        for r in m.repeats:  # end to end: tokens over the outside wall time, which covers the prefill
            assert r.summary.tokens_per_s == pytest.approx(len(r.summary.token_ids) / r.summary.wall_s)
            assert r.summary.wall_s >= r.summary.prefill_s + r.summary.verify_s


def test_sampled_runs_are_not_compared_token_by_token(target):
    cfg = DecodeConfig(k=2, max_new_tokens=6, sampling=SamplingConfig(temperature=1.0), stop_at_eos=False)
    m = measure.against_plain(target, lambda: PromptLookup(n=1), list(range(5, 30)), cfg, repeats=1)
    assert not m.compared and m.divergence is None and not m.identical and m.spread is None


def test_v_table_carries_its_spread_and_refuses_noisy_quotes(target):
    from specviz.engine.passcost import VTable, measure_v
    v = measure_v(target, ks=(1, 4), context=20, repeats=4)
    assert set(v) == {1, 4} and set(v.spread) == {1, 4} and v.rounds == 4
    assert all(s is not None and s >= 0 for s in v.spread.values())
    fake = VTable({1: 1.02, 8: 1.30}, {1: 0.10, 8: 0.05}, 7)
    assert fake.too_noisy(1) and measure.TOO_NOISY in fake.quote(1)        # 0.10 spread > 0.02 effect
    assert not fake.too_noisy(8) and fake.quote(8).startswith("1.30")
