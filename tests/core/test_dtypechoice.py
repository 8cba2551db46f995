"""--dtype auto's rule (core/dtypechoice.py) on injected pass times: no clock is read here."""
import pytest

from specviz.core import dtypechoice as DC
from specviz.core.dtypechoice import ShapeTimes, choose

# Seconds per shape, in the proportions issue 33 measured: a CPU with AVX2 only (no native bfloat16), where a
# bfloat16 pass of 25 rows costs ~12 one-row steps and its prefill 7x float32's; and one with AMX, where
# bfloat16 is faster at every shape.
AVX2 = {"bfloat16": ShapeTimes(step=0.040, chain=0.20, tree=0.50, prefill=2.7),
        "float32": ShapeTimes(step=0.068, chain=0.12, tree=0.177, prefill=0.4)}
AMX = {"bfloat16": ShapeTimes(step=0.030, chain=0.033, tree=0.040, prefill=0.30),
       "float32": ShapeTimes(step=0.050, chain=0.060, tree=0.080, prefill=0.50)}


def test_without_native_bfloat16_speculation_runs_in_float32_and_says_why():
    c = choose(AVX2, "speculative")
    assert c.dtype == "float32"
    assert "bfloat16 verify of 25 rows costs 12.5× one row here (float32 2.6×): float32" in c.reason
    assert c.estimates["float32"] < c.estimates["bfloat16"]


def test_plain_decoding_keeps_the_faster_step_there():
    """Plain decoding pays no verify pass: bfloat16's faster one-token step outweighs its slower prefill."""
    c = choose(AVX2, "plain")
    assert c.dtype == "bfloat16"
    assert "float32 one-token step 68 ms, prefill 0.40 s (bfloat16 40 ms, 2.70 s): bfloat16" in c.reason


@pytest.mark.parametrize("purpose", DC.PURPOSES)
def test_with_native_bfloat16_both_run_in_bfloat16(purpose):
    assert choose(AMX, purpose).dtype == "bfloat16"


def test_the_choice_follows_the_verify_pass_alone():
    """Negative control: the same machine with a cheap bfloat16 verify pass (AMX's v) flips the choice."""
    cheap = {**AVX2, "bfloat16": ShapeTimes(step=0.040, chain=0.045, tree=0.055, prefill=0.45)}
    assert choose(cheap, "speculative").dtype == "bfloat16"


def test_a_near_tie_keeps_float32():
    f32 = ShapeTimes(step=0.05, chain=0.06, tree=0.08, prefill=0.5)
    a_bit_faster = ShapeTimes(step=0.049, chain=0.059, tree=0.079, prefill=0.49)        # < 3% faster
    assert choose({"float32": f32, "bfloat16": a_bit_faster}).dtype == "float32"
    faster = ShapeTimes(step=0.04, chain=0.05, tree=0.07, prefill=0.4)                  # ~20% faster
    assert choose({"float32": f32, "bfloat16": faster}).dtype == "bfloat16"


def test_the_estimates_follow_the_stated_rule():
    t = AVX2["float32"]
    assert t.estimate("plain") == pytest.approx(0.4 + 128 * 0.068)
    assert t.estimate("speculative") == pytest.approx(0.4 + 128 / 2.5 * (0.068 + 0.12 + 0.177) / 3)
    assert t.v("tree") == pytest.approx(0.177 / 0.068)
    with pytest.raises(ValueError):
        t.estimate("sampled")


def test_one_dtype_and_none():
    only = {"float32": AVX2["float32"]}
    assert choose(only).dtype == "float32" and "only dtype" in choose(only).reason
    with pytest.raises(ValueError):
        choose({})
    assert ShapeTimes.from_dict(AVX2["float32"].as_dict()) == AVX2["float32"]


def test_a_timing_is_settled_when_quiet_or_after_its_last_try():
    from specviz.core import dtypechoice as DC
    assert DC.settled(None, 1) and DC.settled(0.1, 1) and DC.settled(DC.QUIET_CORES, 1)
    assert not DC.settled(0.6, 1) and not DC.settled(0.6, DC.MAX_TRIES - 1) and DC.settled(0.6, DC.MAX_TRIES)
    assert DC.conditions(None, 2, 1) == ""
    assert DC.conditions(0.1, 2, 1) == "other work kept 0.1 of 2 cores busy"
    assert "provisional" in DC.conditions(1.2, 2, 1) and "kept" in DC.conditions(1.2, 2, DC.MAX_TRIES)
