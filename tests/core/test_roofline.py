"""The roofline lab's maths against values worked by hand (core/roofline.py, teach/roofline.py's rows): a made-up
machine of 100 GB/s and 10 TFLOP/s, and a 1B-parameter model in 16-bit (2 GB of weights) or float32 (4 GB)."""
import pytest

from specviz.core import roofline as RL
from specviz.core.errors import InputError
from specviz.engine.passcost import VTable
from specviz.engine.peaks import Peaks
from specviz.teach import roofline as T

M = RL.Machine("made up", bandwidth=100e9, peak=10e12)
BF16 = RL.Step(params=1e9, weight_bytes=2e9)
F32 = RL.Step(params=1e9, weight_bytes=4e9)


def test_ridge_point_is_peak_over_bandwidth():
    assert M.ridge == pytest.approx(100.0)                        # 10e12 / 100e9
    assert T.H100.ridge == pytest.approx(989 / 3.35)              # ≈ 295 FLOP per byte
    assert RL.attainable(10.0, M) == pytest.approx(1e12)          # under the ridge: 10 × 100e9
    assert RL.attainable(1000.0, M) == pytest.approx(10e12)       # over it: the flat peak


def test_intensity_is_batch_times_tokens_for_16_bit_and_half_for_float32():
    assert BF16.intensity(1, 0) == pytest.approx(1.0)             # 2 FLOP per parameter / 2 bytes
    assert BF16.intensity(4, 3) == pytest.approx(16.0)            # B·(k + 1) = 4 × 4
    assert F32.intensity(4, 3) == pytest.approx(8.0)              # half in float32
    assert RL.intensity_per_byte(4, 3, 2) == pytest.approx(16.0) and RL.intensity_per_byte(4, 3, 4) == 8.0
    kv = RL.Step(1e9, 2e9, kv_bytes=1e8)                          # the KV cache adds B × its bytes
    assert kv.bytes(4) == pytest.approx(2.4e9) and kv.intensity(4, 3) == pytest.approx(32e9 / 2.4e9)


def test_predicted_v_is_one_under_the_ridge_and_grows_past_it():
    assert RL.step_time(BF16, 1, 0, M) == pytest.approx(0.02)     # 2e9 bytes / 100e9: memory-bound
    assert RL.predicted_v(BF16, 16, 3, M) == pytest.approx(1.0)   # 1.28e11 FLOP / 1e13 = 12.8 ms < 20 ms
    assert RL.step_time(BF16, 64, 3, M) == pytest.approx(0.0512)  # 5.12e11 FLOP / 1e13
    assert RL.predicted_v(BF16, 64, 3, M) == pytest.approx(2.56)  # ÷ max(20 ms, 12.8 ms)
    assert RL.predicted_v(BF16, 256, 3, M) == pytest.approx(4.0)  # both compute-bound: (k + 1) ÷ 1
    b = RL.compute_bound_batch(3, M, 2)
    assert b == pytest.approx(25.0) and BF16.intensity(b, 3) == pytest.approx(M.ridge)   # 100 × 2 / 8


def test_first_batch_over_and_throughput():
    assert RL.first_batch_over({1: 1.0, 2: 1.1, 4: 1.3, 8: 2.0}, 1.25) == 4
    assert RL.first_batch_over({1: 1.0, 2: 1.1}, 1.25) is None
    assert RL.throughput(4, 2.0, 0.1) == pytest.approx(80.0)       # 4 sequences × 2 tokens per 0.1 s


def _lab(vb) -> T.Lab:
    pk = Peaks(100e9, 10e12, 128, 1536, "bfloat16", "cpu", 5)
    return T.Lab(pk, vb, BF16, k=3, context=32, repeats=3, dtype="bfloat16", bytes_per_weight=2.0)


def test_rows_put_predicted_beside_measured():
    lab = _lab({1: VTable({3: 1.1}, {}, 1, t1=0.05), 64: VTable({3: 3.0}, {}, 1, t1=0.2)})
    r1, r64 = T.rows(lab, alpha=0.0, c=0.0)                       # α = 0: E[τ] = 1, speedup = 1 / v
    assert r1["predicted v"] == pytest.approx(1.0) and r64["predicted v"] == pytest.approx(2.56)
    assert r1["roofline t1"] == pytest.approx(0.02) and r1["measured t1"] == 0.05
    assert r64["speedup"] == pytest.approx(1 / 3.0)
    assert r64["plain tok/s"] == pytest.approx(320.0)             # 64 / 0.2 s
    assert r64["speculating tok/s"] == pytest.approx(320.0 / 3.0)
    assert T.nearly_free_until(lab) == {"measured": "64", "predicted": "64"}
    flat = _lab({1: VTable({3: 1.0}, {}, 1, t1=0.05)})
    assert T.nearly_free_until(flat) == {"measured": "beyond 1", "predicted": "beyond 1"}
    assert "40%" in T.gap_words([r1])                             # 20 ms of the 50 ms measured


def test_sizes_parse_or_refuse_in_one_line():
    assert T.parse_sizes("4, 1,2, 4", 1, 256, "batch sizes") == (1, 2, 4)
    for bad in ("0, 2", "two", "", "1, 300"):
        with pytest.raises(InputError, match="batch sizes"):
            T.parse_sizes(bad, 1, 256, "batch sizes")


def test_plain_share_of_the_memory_limit_by_hand():
    # 2 GB read per token at 100 GB/s: at most 50 tok/s; a plain run at 20 tok/s reaches 0.4 of it
    assert RL.share_of_limit(20.0, 100e9, 2e9) == pytest.approx(0.4)
    assert RL.share_of_limit(50.0, 100e9, 2e9) == pytest.approx(1.0)
