"""Fair turns on the shared model (specviz.ui.turns), lean records and idle eviction (specviz.ui.memory),
and the thread settings (specviz.runtime). Pure Python and threads: no model, no timing assertions."""
import threading
import time
import weakref

import pytest
import torch

from specviz import runtime
from specviz.core.records import StepRecord
from specviz.ui import memory
from specviz.ui.turns import Turns


def _until(cond, what: str, limit_s: float = 10.0) -> None:
    """Wait for a state of the queue (not for a time): fail loudly if it never comes."""
    end = time.monotonic() + limit_s
    while not cond():
        assert time.monotonic() < end, f"never happened: {what}"
        time.sleep(0.001)


def _round_robin(turns: Turns, names: str, steps: int) -> list[str]:
    """Sessions queued in the order of `names` behind a held turn, each taking `steps` turns. Inside a
    turn a session waits until every other session with steps left is queued again, so what the order
    shows is the queue's rule, whatever the thread scheduler does."""
    order, left = [], {n: steps for n in names}
    queued = {n: threading.Event() for n in names}

    def worker(name):
        for _ in range(steps):
            with turns.turn(on_wait=lambda ahead: queued[name].set()):
                others = sum(1 for n, k in left.items() if n != name and k > 0)
                _until(lambda: turns.waiting() >= others, f"the {others} other sessions queue behind {name}")
                order.append(name)
                left[name] -= 1

    held = turns.acquire()                      # nobody runs until all have queued, in this order
    threads = []
    for n in names:
        t = threading.Thread(target=worker, args=(n,))
        t.start()
        assert queued[n].wait(10), f"{n} never queued"
        threads.append(t)
    turns.release(held)
    for t in threads:
        t.join(10)
    return order


def test_sessions_alternate_step_by_step():
    # first come first served, and a session that wants another step goes to the back of the queue
    assert _round_robin(Turns(), "abc", 4) == list("abc" * 4)


def test_without_turns_a_session_runs_ahead():
    # negative control: a plain lock is not fair, the releasing thread usually re-takes it
    lock, order = threading.Lock(), []

    def worker(name):
        for _ in range(20):
            with lock:
                order.append(name)
    ts = [threading.Thread(target=worker, args=(n,)) for n in "ab"]
    [t.start() for t in ts]
    [t.join(10) for t in ts]
    assert any(x == y for x, y in zip(order, order[1:]))


def test_waiting_callback_counts_sessions_ahead_and_a_raise_leaves_the_queue():
    turns, seen = Turns(), []
    held = turns.acquire()

    def on_wait(ahead):
        seen.append(ahead)
        raise RuntimeError("page stopped")
    with pytest.raises(RuntimeError):
        turns.acquire(on_wait)
    assert seen == [1] and turns.waiting() == 0
    turns.release(held)
    with turns.turn():  # free again
        assert turns.waiting() == 0


def test_measurement_hands_over_between_runs():
    turns, order = Turns(), []
    with turns.measurement() as between:
        def other():
            with turns.turn():
                order.append("other")
        t = threading.Thread(target=other)
        t.start()
        while turns.waiting() == 0:
            time.sleep(0.001)
        order.append("run 1")
        between()  # the queued session goes first
        order.append("run 2")
    t.join(5)
    assert order == ["run 1", "other", "run 2"]


def _rec(rejected: bool) -> StepRecord:
    v = torch.rand(100) if rejected else None
    return StepRecord(index=0, k=1, context_len=1, drafted=[1], decisions=[False], draws=[], ratios=[],
                      n_accepted=0, next_token=2, next_origin="correction", emitted=[2], draft_s=0.0,
                      verify_s=0.0, logit_top1=[], logit_gap=[], greedy=True, q_deterministic=True,
                      p_rejected=v, q_rejected=v)


def test_lean_drops_full_vectors_on_copies_only():
    steps = [_rec(True), _rec(False)]
    lean = memory.lean(steps)
    assert lean[0].p_rejected is None and lean[0].q_rejected is None and lean[0].emitted == [2]
    assert steps[0].p_rejected is not None  # the run on screen keeps its vectors


def test_idle_sessions_lose_heavy_state_only():
    class State(dict):
        pass
    idle, busy = State(stp="run", measured_runs={}, stp_k=4), State(stp="run")
    memory._SESSIONS.clear()
    memory._SESSIONS["idle"] = {"state": weakref.ref(idle), "seen": 0.0}
    memory._SESSIONS["busy"] = {"state": weakref.ref(busy), "seen": 1000.0}
    assert memory.sweep(now=1000.0 + 1, idle_s=500) == ["idle"]
    assert "stp" not in idle and "measured_runs" not in idle and idle["stp_k"] == 4
    assert memory.EVICTED_KEY in idle and busy["stp"] == "run"
    memory._SESSIONS.clear()


def test_threads_from_flag_env_or_default(monkeypatch):
    monkeypatch.delenv(runtime.THREADS_ENV, raising=False)
    assert runtime.requested_threads(None) is None and runtime.requested_threads(3) == 3
    monkeypatch.setenv(runtime.THREADS_ENV, "2")
    assert runtime.requested_threads(None) == 2
    monkeypatch.setenv(runtime.THREADS_ENV, "two")
    with pytest.raises(ValueError):
        runtime.requested_threads(None)
    assert 1 <= runtime.default_threads() <= runtime.MAX_DEFAULT
    before = torch.get_num_threads()
    try:
        assert runtime.use_threads(1) == 1 and torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


def test_cli_bad_thread_count_is_one_line_and_exit_2(capsys, monkeypatch):
    from specviz.cli import main
    monkeypatch.delenv(runtime.THREADS_ENV, raising=False)
    assert main(["generate", "--workload", "story", "--threads", "-1"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "threads must be >= 1" in err[0]


def test_measurement_says_when_it_was_shared():
    turns = Turns()
    with turns.measurement() as between:
        between()
    assert between.shared is False  # nobody queued: alone
    with turns.measurement() as between:
        got = []

        def other():
            with turns.turn():
                got.append(1)
        t = threading.Thread(target=other)
        t.start()
        while turns.waiting() == 0:
            time.sleep(0.001)
        between()
    t.join(5)
    assert between.shared is True and got == [1]
