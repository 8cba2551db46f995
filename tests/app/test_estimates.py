"""Compare and the k/n sweep say how long a job will take before it starts (from a step timed on this
machine), offer Cancel while it runs, and Step through's Play takes turns on the shared model.
Test-sized mode (SPECVIZ_TINY=1)."""
import re

import pytest

from apptools import page
from specviz.ui.turns import TURNS


def captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


@pytest.mark.parametrize("name,runs_key,run_key,cancel_key,word", [
    ("compare", "cmp_ks", "cmp_run", "cmp_cancelled", "Comparison cancelled"),
    ("experiments", "exp_k", "exp_run", "exp_cancelled", "Sweep cancelled")])
def test_estimate_before_start_and_cancel_message(name, runs_key, run_key, cancel_key, word):
    at = page(name)
    m = re.search(r"(\d+) runs of up to (\d+) new tokens: about (\d+) s here \(a plain step measured (\d+) ms",
                  captions(at))
    assert m, captions(at)
    runs_before = int(m.group(1))
    if name == "compare":
        at.multiselect(key="cmp_ks").set_value([1, 2, 3]).run()
    else:
        at.slider(key="exp_k").set_value((1, 4)).run()
    runs_after = int(re.search(r"(\d+) runs of up to", captions(at)).group(1))
    assert runs_after > runs_before  # the estimate follows the settings
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
    at.button(key="exp_run").click().run()
    assert not at.exception
    assert not [b for b in at.button if b.key == "exp_cancel"]  # nothing left to cancel
