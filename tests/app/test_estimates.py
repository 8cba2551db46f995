"""Compare and the k/n sweep say how long a job will take before it starts (from a step timed on this
machine), offer Cancel while it runs, and Step through's Play takes turns on the shared model.
Test-sized mode (SPECVIZ_TINY=1)."""
import re

import pytest
from apptools import ok, page

from specviz.ui.turns import TURNS


def captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


ESTIMATE = re.compile(r"(\d+) runs of up to (\d+) new tokens: about (\d+) s here, with the (\d+) warm-up runs? "
                      r"of (\d+) tokens \(a plain step measured (\d+) ms")


def estimated(at) -> tuple[int, int, int]:
    """(timed runs, their max new tokens, warm-up runs) as the page's estimate states them."""
    m = ESTIMATE.search(captions(at))
    assert m, captions(at)
    return int(m.group(1)), int(m.group(2)), int(m.group(4))


@pytest.mark.parametrize("name,settle,run_key,cancel_key,word", [
    ("compare", lambda at: at.multiselect(key="cmp_ks").set_value([1, 2, 3]), "cmp_run", "cmp_cancelled",
     "Comparison cancelled"),
    ("experiments", lambda at: at.number_input(key="exp_guess").set_value(0) and at.slider(key="exp_k").set_value(
        (1, 4)), "exp_run", "exp_cancelled",
     "Sweep cancelled")])
def test_the_estimate_counts_the_runs_the_job_makes_and_cancel_says_so(name, settle, run_key, cancel_key, word,
                                                                        monkeypatch):
    from specviz.engine import measure

    at = page(name)
    before = estimated(at)[0]
    settle(at).run()
    timed, max_new, warm_ups = estimated(at)
    assert timed > before  # the estimate follows the settings
    made = []  # every decoding run the job makes goes through measure.run: count them, by length
    real = measure.run
    monkeypatch.setattr(measure, "run", lambda *a, **kw: made.append(a[3].max_new_tokens) or real(*a, **kw))
    ok(at.button(key=run_key).click().run())
    assert not at.error, [e.value for e in at.error]
    assert made.count(max_new) == timed and len(made) == timed + warm_ups, (made, timed, warm_ups)
    print(f"{name}: estimated {timed} timed + {warm_ups} warm-up runs; made {made.count(max_new)} + "
          f"{len(made) - made.count(max_new)}")
    at.session_state[cancel_key] = True  # what the Cancel button's callback sets
    at.run()
    assert any(word in i.value for i in at.info)
    at.run()
    assert not any(word in i.value for i in at.info)  # said once


def test_play_takes_one_turn_per_step():
    at = page("step_through")
    before = TURNS.turns_served
    at.button(key="stp_play").click().run()
    assert not at.exception
    steps = at.session_state["stp"]["dec"].steps
    assert len(steps) > 0 and TURNS.turns_served - before >= len(steps)
    assert TURNS.waiting() == 0


def test_the_cancel_button_goes_when_the_run_ends():
    at = page("experiments")
    at.slider(key="exp_k").set_value((1, 2)).run()
    at.number_input(key="exp_guess").set_value(1)
    at.button(key="exp_run").click().run()
    assert not at.exception
    assert not [b for b in at.button if b.key == "exp_cancel"]  # nothing left to cancel
