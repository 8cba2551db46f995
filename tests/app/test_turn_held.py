"""The turn on the shared model is taken by the measuring path itself (issue 34 §4): engine.measure times every
run and every v(k) round inside the session's turn once the app is loaded, so no page can forget it. The pages
are run with the measuring path patched to record, at each clock read, whether this session held the turn."""
from contextlib import nullcontext

import pytest
from apptools import ok, page

from specviz.engine import measure
from specviz.engine.decode import DecodeConfig
from specviz.engine.models import tiny_llama
from specviz.ui.turns import TURNS


@pytest.fixture
def clock_reads(monkeypatch):
    seen, real = [], measure.sync

    def sync(device):
        seen.append(TURNS.held_here())
        return real(device)
    monkeypatch.setattr(measure, "sync", sync)
    return seen


def test_a_timed_run_holds_the_turn_and_a_held_turn_is_kept(clock_reads):
    t = tiny_llama(vocab_size=64, layers=1, hidden=16, seed=0)
    before = TURNS.turns_served
    measure.run(t, None, [1, 2, 3], DecodeConfig(k=1, max_new_tokens=3, stop_at_eos=False))
    assert clock_reads == [True, True] and TURNS.turns_served == before + 1 and TURNS.waiting() == 0
    with TURNS.measurement():                          # inside a measurement: re-entrant, no second ticket
        measure.run(t, None, [1, 2, 3], DecodeConfig(k=1, max_new_tokens=3, stop_at_eos=False))
    assert all(clock_reads) and TURNS.turns_served == before + 2


def test_negative_control_without_the_hook_nothing_is_held(clock_reads):
    t = tiny_llama(vocab_size=64, layers=1, hidden=16, seed=0)
    measure.hold_turns(nullcontext)
    try:
        measure.run(t, None, [1, 2, 3], DecodeConfig(k=1, max_new_tokens=3, stop_at_eos=False))
    finally:
        measure.hold_turns(TURNS.hold)
    assert clock_reads == [False, False]


def test_pages_that_run_the_model_hold_the_turn(clock_reads):
    at = page("compare")
    at.multiselect(key="cmp_methods").set_value(["lookup"])
    ok(at.button(key="cmp_run").click().run())
    at.switch_page("pages/walkthrough.py").run()
    at.button(key="wt_next").click().run()
    at.button(key="wt_next").click().run()                     # stop 3: the k sweep (lookup vs plain)
    at.number_input(key="stop:lookup_sweep_guess").set_value(3)
    ok(at.button(key="wt_run").click().run())
    at.switch_page("pages/trees.py").run()
    assert len(clock_reads) >= 8 and all(clock_reads), clock_reads


def test_untimed_model_calls_hold_the_turn_too(clock_reads):
    """A page's model call that times nothing (Is it lossless?'s real p and q, the layer agreement on Tokenizers &
    checkpoints) still goes through the measuring path, so it holds the turn like every timed run."""
    at = page("lossless")
    at.selectbox(key="lab_real_method").set_value("draft")
    at.select_slider(key="lab_real_trials").set_value(500)
    ok(at.button(key="lab_real_run").click().run())
    assert "lab_real" in at.session_state and clock_reads and all(clock_reads), clock_reads
    n = len(clock_reads)
    at.switch_page("pages/pitfalls.py").run()
    at.number_input(key="pit_ls_guess").set_value(50.0)
    ok(at.button(key="pit_ls_run").click().run())
    assert "pit_ls" in at.session_state and len(clock_reads) > n and all(clock_reads), clock_reads

