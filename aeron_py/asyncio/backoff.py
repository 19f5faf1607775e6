"""How an idle asyncio poller waits on the event loop: a short spin, then timers.

Aeron gives no file descriptor to wait on, so something must look again.  After a poll
that found nothing, the waiting coroutine (or the loop-timer waker) first re-runs at the
next loop iteration for ``spin`` seconds (``loop.call_soon``: other coroutines run in
between, nothing sleeps), then sleeps on loop timers of ``min_delay`` until it has been
idle for ``hold`` seconds, then from ``min_delay`` doubling to ``max_delay``.  Work resets the back-off.

Why ``min_delay`` is 1 ms: loop timers have millisecond resolution.  asyncio's selector
rounds a 50 µs timeout *up* to 1 ms, and uvloop (libuv) rounds it *down* to 0, which
would busy-spin.  Sub-millisecond waiting is what the poller-thread waker is for
(:mod:`aeron_py.asyncio.wakers`).
"""
from __future__ import annotations

import asyncio as _asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ..errors import AeronTimeoutError

T = TypeVar("T")

__all__ = ["Backoff", "BackoffState", "poll_until", "sleep_idle"]


@dataclass(frozen=True)
class Backoff:
    """Spin for ``spin`` seconds of idle polls, wait ``min_delay`` until ``hold`` seconds of
    idleness, then ``min_delay`` doubling to ``max_delay``."""

    spin: float = 100e-6
    min_delay: float = 1e-3
    hold: float = 10e-3
    max_delay: float = 4e-3

    def __post_init__(self) -> None:
        if not (self.spin >= 0 and self.hold >= 0 and 0 < self.min_delay <= self.max_delay <= 1.0):
            raise ValueError(f"Backoff needs spin, hold >= 0 and 0 < min_delay <= max_delay <= 1 s, got "
                             f"spin={self.spin!r}, hold={self.hold!r}, min_delay={self.min_delay!r}, "
                             f"max_delay={self.max_delay!r}")

    def state(self) -> "BackoffState":
        return BackoffState(self)


class BackoffState:
    """One waiter's position in a :class:`Backoff` sequence."""

    __slots__ = ("_backoff", "_idle_since", "_delay")

    def __init__(self, backoff: Backoff) -> None:
        self._backoff = backoff
        self._idle_since: float | None = None
        self._delay = 0.0

    def reset(self) -> None:
        self._idle_since = None
        self._delay = 0.0

    def next_delay(self, work: int) -> float:
        """Seconds to wait before the next poll after one that did ``work`` (0 = at the next
        loop iteration)."""
        if work > 0:
            self.reset()
            return 0.0
        now = time.monotonic()
        if self._idle_since is None:
            self._idle_since = now
        idle_for, b = now - self._idle_since, self._backoff
        if idle_for < b.spin:
            return 0.0
        if self._delay == 0.0 or idle_for < b.hold:
            self._delay = b.min_delay
        else:
            self._delay = min(self._delay * 2, b.max_delay)
        return self._delay


async def sleep_idle(state: BackoffState, work: int = 0) -> None:
    """Wait as ``state`` says after a poll that did ``work``: yield to the loop, or sleep."""
    await _asyncio.sleep(state.next_delay(work))


async def poll_until(poll: Callable[[], T | None], timeout: float | None, what: str,
                     backoff: Backoff = Backoff()) -> T:
    """Await ``poll()`` returning something other than None/False, looking again as
    :class:`Backoff` says; :class:`~aeron_py.errors.AeronTimeoutError` naming ``what``
    after ``timeout`` seconds (None: no bound).  The loop is never blocked."""
    state = backoff.state()
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        result = poll()
        if result is not None and result is not False:
            return result
        if deadline is not None and time.monotonic() >= deadline:
            raise AeronTimeoutError(f"{what}: not done within {timeout} s")
        await sleep_idle(state)
