"""Torch's CPU threads, chosen on purpose before torch starts its thread pool.

Imported first thing by `specviz/__init__.py`, so it runs before anything imports torch.

Why: torch's OpenMP threads spin-wait between operations by default. Two processes (or two app
sessions) with spinning threads on a 2-core machine starve each other: plain decoding measured
~14 tokens/s alone and 0.82 tokens/s beside one other decoding process. Passive waiting keeps it
within 2x (README, "Troubleshooting: slow under load").

- OMP_WAIT_POLICY=PASSIVE unless the user set OMP_WAIT_POLICY (read by OpenMP when torch loads),
  for the app, the CLI and training: they share the machine (sessions, a browser, other work).
- ACTIVE for `python -m specviz bench` alone: the bench wants the machine to itself (it records the
  load average of every phase), and spinning threads decode about 1.4x faster on a quiet machine
  (README, "Troubleshooting"); its report records the policy it ran under.
- use_threads(n): torch's intra-op thread count = n, else $SPECVIZ_THREADS, else
  $OMP_NUM_THREADS (torch already honours it), else one per core up to MAX_DEFAULT.
"""
from __future__ import annotations

import os
import sys

THREADS_ENV = "SPECVIZ_THREADS"
MAX_DEFAULT = 8  # a 135M model's matmuls are small; measured only up to 2 cores here

SPINNING_COMMANDS = ("bench",)  # `python -m specviz <command>`: runs meant to have the machine alone


def wait_policy(argv: list[str]) -> str:
    """The OpenMP wait policy for this process, chosen from its command line (see the docstring).

    While `python -m specviz ...` locates its module, argv[0] is "-m" and argv[1] the command."""
    ours = bool(argv) and (argv[0] == "-m" or argv[0].endswith(os.path.join("specviz", "__main__.py")))
    command = argv[1] if ours and len(argv) > 1 else None
    return "ACTIVE" if command in SPINNING_COMMANDS else "PASSIVE"


os.environ.setdefault("OMP_WAIT_POLICY", wait_policy(sys.argv))


def default_threads() -> int:
    """One thread per CPU this process may use, at most MAX_DEFAULT."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_DEFAULT))


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
    if want is None:
        want = torch.get_num_threads() if os.environ.get("OMP_NUM_THREADS") else default_threads()
    if torch.get_num_threads() != want:
        torch.set_num_threads(want)
    return want


def describe() -> str:
    """One line for logs and pages: the thread count and wait policy in force."""
    import torch
    return f"{torch.get_num_threads()} torch threads, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY')}"
