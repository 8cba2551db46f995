"""Torch's CPU threads: fast on a quiet machine, and still fair beside other work.

Imported first thing by `specviz/__init__.py`. It sets no OpenMP variable: the wait policy is OpenMP's own.

Measured on the 2-core CPU (plain decoding through the CLI, issue 23 §0): OpenMP's waiting threads
are one lever. Spinning for ever (OMP_WAIT_POLICY=ACTIVE) decodes fast alone but ~0.6 tokens/s beside
a second decoding process; never spinning (PASSIVE) holds its speed under load but costs a third of it
alone. specviz leaves the wait policy at OpenMP's default (libgomp spins 300,000 times before a waiting
thread sleeps; transformers' `generate()` runs the same way) and **follows the load**: every half second
of decoding it reads how much CPU the rest of the machine used (/proc/stat minus this process's own
time) and uses one thread per core left free, at least one. Alone it runs a thread per core; beside
another busy process it drops to one thread, where no thread waits for another, so spinning costs
nothing. Measured with `scripts/threads_under_load.py --repeats 3 --spin 300000` (2026-12-02, 64
tokens of summarise-passage, medians; the load a second specviz process decoding): OpenMP's default
spin 18.23 tokens/s quiet (0.99x transformers' generate() at 18.39) and 11.34 loaded (0.62x quiet); the
previous default, a short spin of 10,000, 16.87 (0.92x) and 12.47 (0.74x); transformers' generate()
1.72 loaded. A short spin paid before the attention kept its cache in float64 (25.7 against 25.5 quiet
on 2026-12-01); with the float64 cache the longer spin is what keeps up with transformers.

- use_threads(n): torch's intra-op thread count = n, else $SPECVIZ_THREADS, else
  $OMP_NUM_THREADS (torch already honours it), else one per core up to MAX_DEFAULT. A count the
  user asked for (any of the three) is pinned: the load is not followed.
- follow_load(): called by the decode loop before the prefill and once per step; cheap (one file read every
  half second). The prefill counts: on 2 threads beside a busy process it took 1.0-2.5 s instead of 0.13 s.
  With that and the weights packed at load (engine/packed.py), the same script on 2026-12-05 (AMX Xeon,
  bfloat16, 64 tokens, 3 repeats): 27.57 tokens/s quiet, 20.79 loaded (0.75x; 0.48x before),
  docs/troubleshooting.md.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass

THREADS_ENV = "SPECVIZ_THREADS"
MAX_DEFAULT = 8  # a 135M model's matmuls are small; measured only up to 2 cores here

FOLLOW_EVERY_S = 0.5  # how often the decode loop re-reads the load


def default_threads() -> int:
    """One thread per CPU this process may use, at most MAX_DEFAULT."""
    return max(1, min(default_cpus(), MAX_DEFAULT))


def requested_threads(n: int | None = None) -> int | None:
    """The count asked for: n, else $SPECVIZ_THREADS; None when neither says (bad values are an error)."""
    if n:
        if n < 1:
            raise ValueError(f"threads must be >= 1, got {n}")
        return n
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return None
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"{THREADS_ENV} must be a whole number >= 1, got '{raw}'")
    return int(raw)


def use_threads(n: int | None = None) -> int:
    """Set torch's intra-op thread count (see the module docstring) and return it."""
    import torch

    want = requested_threads(n)
    pinned = want is not None or bool(os.environ.get("OMP_NUM_THREADS"))
    if want is None:
        want = torch.get_num_threads() if os.environ.get("OMP_NUM_THREADS") else default_threads()
    if torch.get_num_threads() != want:
        torch.set_num_threads(want)
    _watch.reset(ceiling=want, pinned=pinned)
    _watch.start()                                                    # the first step already knows the load
    return want


@dataclass
class CpuSample:
    busy: int      # jiffies every CPU spent busy (/proc/stat, first line)
    total: int     # jiffies every CPU spent, busy or idle
    own: int       # jiffies this process spent (utime + stime of all its threads)


def read_sample(stat: str, self_stat: str) -> CpuSample:
    """Parse /proc/stat and /proc/self/stat text."""
    f = [int(x) for x in stat.split("\n", 1)[0].split()[1:]]
    idle = f[3] + (f[4] if len(f) > 4 else 0)                         # idle + iowait
    total = sum(f[:8])                                                # guest time is inside user time
    own_f = self_stat.rsplit(")", 1)[1].split()                       # fields after the command name
    return CpuSample(busy=total - idle, total=total, own=int(own_f[11]) + int(own_f[12]))


def others_busy(a: CpuSample, b: CpuSample, cpus: int) -> float:
    """Cores the rest of the machine kept busy between two samples (0 .. cpus)."""
    wall = (b.total - a.total) / cpus                                 # jiffies per CPU that passed
    if wall <= 0:
        return 0.0
    return min(float(cpus), max(0.0, ((b.busy - a.busy) - (b.own - a.own)) / wall))


def threads_for(free_cores: float, ceiling: int) -> int:
    """One thread per core left free (a core counts when at least 0.7 of it is free), at least one."""
    return max(1, min(ceiling, int(free_cores + 0.3)))


class LoadWatch:
    """Follows the machine's load (module docstring). Inactive when the count is pinned or on
    systems without /proc."""

    def __init__(self) -> None:
        self.reset(default_threads(), pinned=False)

    def reset(self, ceiling: int, pinned: bool) -> None:
        self.ceiling, self.pinned = ceiling, pinned
        self.last: CpuSample | None = None
        self.last_t = 0.0
        self.changes = 0                                               # thread-count changes so far

    def start(self) -> None:
        """Take the first sample now, so that the first decoding step can already follow the load."""
        if not self.pinned:
            self.last, self.last_t = self.sample(), time.monotonic()

    def sample(self) -> CpuSample | None:
        try:
            with open("/proc/stat") as f, open("/proc/self/stat") as g:
                return read_sample(f.read(), g.read())
        except (OSError, ValueError, IndexError):
            return None

    def follow(self) -> int | None:
        """Re-read the load if FOLLOW_EVERY_S passed; set and return the thread count (None: unchanged)."""
        if self.pinned or self.ceiling <= 1:
            return None
        now = time.monotonic()
        if self.last is not None and now - self.last_t < FOLLOW_EVERY_S:
            return None
        cur = self.sample()
        if cur is None:
            self.pinned = True                                         # no /proc: keep the count
            return None
        prev, self.last, self.last_t = self.last, cur, now
        if prev is None:
            return None
        import torch
        want = threads_for(default_cpus() - others_busy(prev, cur, default_cpus()), self.ceiling)
        if want != torch.get_num_threads():
            torch.set_num_threads(want)
            self.changes += 1
        return want


def default_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


_watch = LoadWatch()


def follow_load() -> int | None:
    """The decode loop's per-step call: follow the load (see the module docstring)."""
    return _watch.follow()


def threads_ceiling() -> int:
    """The thread count this process was set to use (following the load moves below it, never above)."""
    return _watch.ceiling


def thread_changes() -> int:
    """How many times following the load changed the thread count in this process so far."""
    return _watch.changes


def describe() -> str:
    """One line for logs and pages: the thread count and how it is chosen."""
    import torch
    how = "pinned" if _watch.pinned else f"following the load, up to {_watch.ceiling}"
    policy = os.environ.get("OMP_WAIT_POLICY") or "OpenMP default"
    return f"{torch.get_num_threads()} torch threads ({how}), wait policy {policy}"
