"""The thread policy (specviz/runtime.py): parsing /proc, the load the rest of the machine makes,
and the thread count that follows it. Pure: hand-made /proc text, no timing."""
from __future__ import annotations

import os
import subprocess
import sys

import torch

from specviz import runtime

STAT = "cpu  {user} 0 {system} {idle} 0 0 0 0 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n"
SELF = "4242 (python -m specviz) R 1 1 1 0 -1 0 0 0 0 0 {utime} {stime} 0 0 20 0 3 0 100 0 0\n"


def sample(user: int, system: int, idle: int, utime: int, stime: int = 0) -> runtime.CpuSample:
    return runtime.read_sample(STAT.format(user=user, system=system, idle=idle),
                               SELF.format(utime=utime, stime=stime))


def test_read_sample_parses_busy_total_and_own_time():
    s = sample(user=100, system=50, idle=850, utime=30, stime=10)
    assert (s.busy, s.total, s.own) == (150, 1000, 40)
    # a command name with spaces and ')' must not shift the fields
    odd = runtime.read_sample(STAT.format(user=1, system=1, idle=1), "7 (a) b) R " + "0 " * 10 + "5 6 0 0\n")
    assert odd.own == 11


def test_others_busy_subtracts_this_process():
    a = sample(user=0, system=0, idle=0, utime=0)
    # 2 CPUs, 100 jiffies each: 150 busy, of which 100 are ours -> the others used half a core
    b = sample(user=150, system=0, idle=50, utime=100)
    assert runtime.others_busy(a, b, cpus=2) == 0.5
    # another process kept a whole core busy while we used the other
    c = sample(user=200, system=0, idle=0, utime=100)
    assert runtime.others_busy(a, c, cpus=2) == 1.0
    # no time passed: nothing to say
    assert runtime.others_busy(a, a, cpus=2) == 0.0


def test_threads_follow_the_free_cores():
    assert runtime.threads_for(2.0, ceiling=2) == 2       # quiet machine: a thread per core
    assert runtime.threads_for(1.8, ceiling=2) == 2       # light noise (a browser tab) does not cost a thread
    assert runtime.threads_for(1.0, ceiling=2) == 1       # one core taken by other work
    assert runtime.threads_for(0.0, ceiling=2) == 1       # never below one
    assert runtime.threads_for(8.0, ceiling=4) == 4       # never above the ceiling


def test_watch_drops_to_one_thread_beside_a_busy_process_and_returns(monkeypatch):
    samples = iter([sample(0, 0, 0, 0),
                    sample(200, 0, 0, 100),     # the others took one core: 1 thread
                    sample(300, 0, 100, 200)])  # the others went quiet: back to 2
    w = runtime.LoadWatch()
    w.reset(ceiling=2, pinned=False)
    monkeypatch.setattr(w, "sample", lambda: next(samples))
    monkeypatch.setattr(runtime, "default_cpus", lambda: 2)
    monkeypatch.setattr(runtime, "FOLLOW_EVERY_S", 0.0)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        assert w.follow() is None                        # the first sample only starts the clock
        assert w.follow() == 1 and torch.get_num_threads() == 1
        assert w.follow() == 2 and torch.get_num_threads() == 2
        assert w.changes == 2
    finally:
        torch.set_num_threads(before)


def test_a_pinned_count_is_kept(monkeypatch):
    w = runtime.LoadWatch()
    w.reset(ceiling=2, pinned=True)
    monkeypatch.setattr(w, "sample", lambda: (_ for _ in ()).throw(AssertionError("read while pinned")))
    assert w.follow() is None


def test_use_threads_pins_what_the_user_asked(monkeypatch):
    monkeypatch.delenv(runtime.THREADS_ENV, raising=False)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    before = torch.get_num_threads()
    try:
        runtime.use_threads(1)
        assert runtime._watch.pinned and torch.get_num_threads() == 1
        runtime.use_threads(None)
        assert not runtime._watch.pinned and runtime._watch.ceiling == runtime.default_threads()
        assert "following the load" in runtime.describe()
    finally:
        torch.set_num_threads(before)


def test_importing_specviz_leaves_openmps_wait_policy_alone():
    # the CLI, the app and the bench decode with OpenMP's default wait (runtime.py's measurement); a
    # variable set on import would change what every user gets without a word
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OMP_", "GOMP_"))}
    out = subprocess.run([sys.executable, "-c", "import os, specviz; print(sorted(k for k in os.environ "
                          "if k.startswith(('OMP_', 'GOMP_'))))"], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
