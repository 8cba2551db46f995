"""The one measuring path (engine/measure.py): the speedup rule, the spread, the refusal to quote."""
from dataclasses import replace

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


def test_interleaved_shares_one_plain_run_per_repeat_and_rotates_the_order(target):
    g = torch.Generator().manual_seed(0)
    ids = (torch.randint(2, V, (12,), generator=g).tolist() * 4)[:40]
    cfg = DecodeConfig(k=3, max_new_tokens=10, stop_at_eos=False, record=False)
    look = PromptLookup(n_min=2, n_max=2)
    said = []
    got, plains = measure.interleaved(target, ids, {"k3": (lambda: look, cfg),
                                                    "k1": (lambda: look, DecodeConfig(k=1, max_new_tokens=10,
                                                                                      stop_at_eos=False,
                                                                                      record=False))},
                                      measure.plain_config(cfg), repeats=3, progress=lambda f, t: said.append(t))
    # each repeat runs plain once and each method once, starting one place later each time
    assert said == ["repeat 1/3: plain", "repeat 1/3: k3", "repeat 1/3: k1",
                    "repeat 2/3: k3", "repeat 2/3: k1", "repeat 2/3: plain",
                    "repeat 3/3: k1", "repeat 3/3: plain", "repeat 3/3: k3"]
    assert len(plains) == 3
    for m in got.values():
        assert all(r.plain is p for r, (p, _) in zip(m.repeats, plains))     # the same plain runs for both
        assert m.compared and m.identical                                     # greedy, float32
        for r in m.repeats:  # end to end: the outside wall time covers the prefill and every pass
            assert r.summary.wall_s >= r.summary.prefill_s + r.summary.verify_s


def _repeats(plain, method_tps: list[float]) -> list:
    """Repeats of a method against a plain run of 10 tokens/s, at the given method tokens/s."""
    base = replace(plain, tokens_per_s=10.0)
    return [measure.Repeat(replace(plain, tokens_per_s=x), [], base, []) for x in method_tps]


def test_the_speedup_is_the_median_of_the_repeats_ratios_and_is_what_is_handed_on(target):
    from specviz.core import costmodel
    plain, steps = measure.run(target, None, list(range(5, 20)), DecodeConfig(k=1, max_new_tokens=4))
    three = measure.Measured("m", _repeats(plain, [10.0, 30.0, 15.0]), None, compared=False)
    assert three.ratios == pytest.approx([1.0, 3.0, 1.5])
    assert three.speedup == pytest.approx(1.5) and three.spread == pytest.approx(2.0)
    assert three.too_noisy and measure.TOO_NOISY in three.quote()        # spread 2.0 > its 0.5 from 1
    two = measure.Measured("m", _repeats(plain, [10.0, 30.0]), None, compared=False)
    assert two.speedup == pytest.approx(2.0)             # the middle of two: neither repeat's own ratio
    # the break-even calculator is handed the figure shown, not the typical repeat's own ratio
    ch = costmodel.run_checks("m", two.summary, steps, two.plain, measured_speedup=two.speedup)
    assert ch.measured == pytest.approx(2.0) and two.typical.ratio != pytest.approx(2.0)


def test_one_repeat_runs_each_entry_once_starting_one_later_each_repeat():
    for r, first in [(0, "plain"), (1, "a"), (2, "b"), (3, "plain")]:
        ran = []
        got = measure.one_repeat(["plain", "a", "b"], r, lambda x: ran.append(x) or x.upper())
        assert ran[0] == first and sorted(ran) == ["a", "b", "plain"] and got == {"plain": "PLAIN", "a": "A", "b": "B"}


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
