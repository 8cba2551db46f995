"""Fair turns on the one shared model: one session's passes at a time, first come first served.

All Streamlit sessions of a server decode in their own script threads against the same cached
model. Run side by side, their passes contend for the same cores (and each measured pass time
then includes the others' work). Here a session takes a turn for each model step (a decode step,
or one run of a measurement), and turns are handed out in arrival order: a session that finishes
a step and wants another goes to the back of the queue, so active sessions alternate step by step.

    with TURNS.turn(on_wait=lambda ahead: box.info(f"{ahead} sessions ahead of you")):
        dec.step()

The time measured inside a turn is the session's own work: no other session runs a pass then.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from contextlib import contextmanager
from typing import Callable

from specviz.engine import measure

WAIT_POLL_S = 0.25  # how often a waiting session re-reads its place in the queue


class Turns:
    def __init__(self) -> None:
        self._cv = threading.Condition()
        self._queue: deque[object] = deque()  # tickets; the head holds the turn
        self.turns_served = 0                   # turns completed, all sessions together
        self.waited_s = 0.0                     # time spent waiting for a turn, all sessions together
        self._owner: int | None = None          # the thread whose ticket heads the queue (holds the turn)

    def held_here(self) -> bool:
        """Whether the calling thread (a session's script run) holds the turn now."""
        with self._cv:
            return bool(self._queue) and self._owner == threading.get_ident()

    @contextmanager
    def hold(self):
        """The turn for one piece of model work, re-entrant: kept if this thread holds it already (inside a
        measurement or a step's turn), else taken for the work. engine.measure's measuring path takes it."""
        if self.held_here():
            yield
            return
        with self.turn():
            yield

    def waiting(self) -> int:
        """Sessions queued behind the one holding the turn."""
        with self._cv:
            return max(0, len(self._queue) - 1)

    def acquire(self, on_wait: Callable[[int], None] | None = None) -> object:
        """Queue, wait for the head of the queue, and return the ticket that holds the turn.

        on_wait(sessions ahead) is called about every WAIT_POLL_S while queued, outside the lock;
        if it raises (Streamlit stops a script that way), the ticket leaves the queue.
        """
        ticket = object()
        t0 = time.perf_counter()
        with self._cv:
            self._queue.append(ticket)
        try:
            while True:
                with self._cv:
                    if self._queue[0] is ticket:
                        self._owner = threading.get_ident()
                        break
                    ahead = self._queue.index(ticket)
                if on_wait is not None:
                    on_wait(ahead)
                with self._cv:
                    if self._queue[0] is not ticket:
                        self._cv.wait(WAIT_POLL_S)
        except BaseException:
            self.release(ticket)
            raise
        self.waited_s += time.perf_counter() - t0
        return ticket

    def release(self, ticket: object) -> None:
        with self._cv:
            if self._queue and self._queue[0] is ticket:
                self._owner = None
            if ticket in self._queue:
                self._queue.remove(ticket)
                self.turns_served += 1
            self._cv.notify_all()

    @contextmanager
    def turn(self, on_wait: Callable[[int], None] | None = None):
        """Hold the model for one step."""
        ticket = self.acquire(on_wait)
        try:
            yield
        finally:
            self.release(ticket)

    @contextmanager
    def measurement(self, on_wait: Callable[[int], None] | None = None):
        """Hold the model for a measurement of several runs; call the yielded `between()` after each
        run: it hands the turn to whoever queued meanwhile and takes it back. Each run is then timed
        alone, and a long measurement does not freeze the other sessions. `between.shared` is True
        afterwards when other sessions took turns in between (the page then says so)."""
        held = [self.acquire(on_wait)]

        def between() -> None:
            if self.waiting():
                between.shared = True  # other sessions ran between these runs (their pages drew beside them)
                self.release(held[0])
                held[0] = None
                held[0] = self.acquire(on_wait)

        between.shared = False

        try:
            yield between
        finally:
            if held[0] is not None:
                self.release(held[0])


TURNS = Turns()  # one per server process, like the cached model it guards
measure.hold_turns(TURNS.hold)  # every model run the app times goes through engine.measure: it holds the turn
