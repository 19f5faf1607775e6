"""How a waiting ``receive()`` learns that Aeron has a message: Aeron offers no file
descriptor to wait on, so someone must poll.  Two wakers, chosen per client
(``aio.Aeron(waker=...)``):

``"thread"`` (:class:`ThreadWaker`, the default): a poller thread polls the registered
subscriptions and hands messages to the loop with ``call_soon_threadsafe`` (which wakes
the loop's selector through its self-pipe).  Between empty polls it parks in Aeron's
backoff idle strategy with the GIL released (spin, yield, then park 1 µs doubling to
``max_delay``), so it reacts in microseconds where loop timers cannot (1 ms resolution).
The thread sleeps on an event while no receive is pending.  A subscription is never
polled by the loop and the thread at once (they are not thread-safe): ``receive()`` polls
inline first only when the thread is not polling it (a non-blocking lock).  Cost: one thread per client,
and while a receive is pending the thread takes the GIL for each poll.

``"timer"`` (:class:`TimerWaker`): the loop polls.  With both, ``receive()`` first polls
inline (a message already there costs no wake-up at all).  A receiver that has to wait
registers its subscription, and one loop callback polls every registered subscription,
re-running at the next loop iteration for ``Backoff.spin`` seconds, then on 1 ms loop
timers until idle for ``Backoff.hold``, then doubling to ``max_delay`` (4 ms).  No thread,
no lock, no GIL hand-over; idle cost is one poll every ``max_delay`` while a receive is
pending, nothing when none is; but a message arriving after the spin waits for a timer.

Measured (``benchmarks/async_bench.py``, ``results/async.json``): the thread waker's UDP
round trip is several times shorter than the timer waker's and its idle CPU lower, so it
is the default.

Neither ever runs on, or blocks, one of Aeron's threads.
"""
from __future__ import annotations

import asyncio as _asyncio
import logging
import threading
import weakref
from asyncio import Handle, TimerHandle

from ..idle import BackoffIdleStrategy
from .backoff import Backoff
from .subscription import Message, Subscription, Waker

logger = logging.getLogger(__name__)

__all__ = ["WAKERS", "ThreadWaker", "TimerWaker", "Waker"]

#: Bound on how long closing waits for the poller thread (it is at most one poll plus one park away).
THREAD_JOIN_TIMEOUT_S = 2.0


class TimerWaker:
    """Polls on the event loop: ``call_soon`` while recently busy, then loop timers."""

    def __init__(self, loop: _asyncio.AbstractEventLoop, backoff: Backoff) -> None:
        self._loop = loop
        self._state = backoff.state()
        self._wanted: dict[Subscription, None] = {}  # insertion-ordered set
        self._handle: Handle | TimerHandle | None = None
        self._closed = False

    def want(self, sub: "Subscription") -> None:
        if self._closed:
            return
        self._wanted[sub] = None
        if self._handle is None:
            self._state.reset()
            self._handle = self._loop.call_soon(self._tick)

    def unwant(self, sub: "Subscription") -> None:
        self._wanted.pop(sub, None)
        if not self._wanted and self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _tick(self) -> None:
        self._handle = None
        work = 0
        for sub in list(self._wanted):
            work += sub._poll_here()
        if not self._wanted or self._closed or self._handle is not None:
            return
        delay = self._state.next_delay(work)
        self._handle = self._loop.call_soon(self._tick) if delay == 0.0 else self._loop.call_later(delay, self._tick)

    def close(self) -> None:
        self._closed = True
        self._wanted.clear()
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


class ThreadWaker:
    """Polls on a thread of its own, parking with the GIL released; hands over with
    ``loop.call_soon_threadsafe``."""

    def __init__(self, loop: _asyncio.AbstractEventLoop, backoff: Backoff, name: str = "aeron-py-asyncio-poller") -> None:
        self._loop = loop
        self._lock = threading.Lock()
        self._wanted: dict[Subscription, None] = {}
        self._wake = threading.Event()
        self._stop = False
        self._idle = BackoffIdleStrategy(max_park_ns=max(1_000, int(backoff.max_delay * 1e9)))
        self._thread = threading.Thread(target=_run_poller, args=(weakref.ref(self), self._wake, self._idle),
                                        name=name, daemon=True)
        self._thread.start()

    def want(self, sub: "Subscription") -> None:
        with self._lock:
            if self._stop:
                return
            self._wanted[sub] = None
        self._wake.set()

    def unwant(self, sub: "Subscription") -> None:
        with self._lock:
            self._wanted.pop(sub, None)

    def _cycle(self) -> bool:
        """One duty cycle of the poller thread; False when it must stop."""
        self._wake.clear()
        with self._lock:
            if self._stop:
                return False
            wanted = list(self._wanted)
        if not wanted:
            return True  # _run_poller sleeps on the event, holding no reference to this waker
        work = 0
        for sub in wanted:
            work += self._poll(sub)
        self._idle.idle(work)
        return True

    def _poll(self, sub: "Subscription") -> int:
        try:
            with sub._poll_lock:
                taken: list[Message] = sub._take()
        except Exception as exc:
            self.unwant(sub)
            self._loop.call_soon_threadsafe(sub._fail, exc)
            return 0
        if not taken:
            return 0
        self.unwant(sub)  # the loop asks again if receivers are still waiting after this batch
        self._loop.call_soon_threadsafe(sub._deliver, taken)
        return len(taken)

    def __del__(self) -> None:  # dropped without close(): let the thread end (never joins here)
        self._stop = True
        self._wake.set()

    def close(self) -> None:
        with self._lock:
            self._stop = True
            self._wanted.clear()
        self._wake.set()
        if self._thread is not threading.current_thread():
            self._thread.join(THREAD_JOIN_TIMEOUT_S)
            if self._thread.is_alive():
                logger.warning("asyncio poller thread did not stop within %s s", THREAD_JOIN_TIMEOUT_S)


def _run_poller(ref: "weakref.ref[ThreadWaker]", wake: threading.Event, idle: BackoffIdleStrategy) -> None:
    """Body of the poller thread.  It holds its waker only during a cycle, so a waker dropped
    without ``close()`` is collected and the thread ends."""
    try:
        while True:
            waker = ref()
            if waker is None or not waker._cycle():
                return
            sleeping = not waker._wanted
            del waker
            if sleeping:
                wake.wait()  # no receive pending: sleep (GIL released) until want(), close() or collection
                idle.idle(1)  # a new receive: start the back-off again from spinning
    except RuntimeError as exc:  # the loop closed under us: nobody is waiting any more
        logger.debug("asyncio poller thread stops: %s", exc)


WAKERS = {"timer": TimerWaker, "thread": ThreadWaker}
