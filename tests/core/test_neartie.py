from specviz.core.neartie import bf16_ulp, first_divergence
from specviz.core.records import StepRecord


def rec(emitted, top1, gap):
    return StepRecord(index=0, k=0, context_len=0, drafted=[], decisions=[], draws=[], ratios=[],
                      n_accepted=0, next_token=emitted[-1], next_origin="bonus", emitted=emitted,
                      draft_s=0, verify_s=0, logit_top1=top1, logit_gap=gap)


def test_ulp():
    assert bf16_ulp(30.0) == 0.125 and bf16_ulp(1.0) == 2 ** -7 and bf16_ulp(-3.0) == 2 ** -6


def test_first_divergence():
    steps = [rec([5], [30.0], [1.0]), rec([6], [30.0], [0.25]), rec([7], [30.0], [0.0])]
    assert first_divergence([5, 6, 7], steps, [5, 6, 7]) is None
    d = first_divergence([5, 6, 7], steps, [5, 9, 1])
    assert (d.position, d.near_tie, d.gap) == (1, True, 0.25)  # 0.25 = 2 ulps at 30
    d = first_divergence([5, 6, 7], steps, [4, 6, 7])
    assert d.position == 0 and not d.near_tie  # gap 1.0 is a real difference: a bug
