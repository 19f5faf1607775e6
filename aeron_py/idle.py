"""Idle strategies: what a duty-cycle loop does when a cycle did no work.

They are Aeron's own C strategies (``aeron_idle_strategy_load``), and every one that
waits releases the GIL while it waits.  On small machines (2 cores) prefer
:class:`BackoffIdleStrategy` or :class:`SleepingIdleStrategy`; busy-spinning starves
the driver and the other side of a ping-pong.

Usage::

    idle = BackoffIdleStrategy()
    while running:
        idle.idle(subscription.poll(handler, 10))
"""
from __future__ import annotations

from typing import Any, Protocol

from . import _aeron


class IdleStrategy(Protocol):
    """Anything with ``idle(work_count)``; ``work_count > 0`` resets any back-off."""

    def idle(self, work_count: int = 0) -> None: ...


class _CIdleStrategy(_aeron.IdleStrategy):
    """One of Aeron's C strategies. ``idle(work_count=0)`` is the extension's own method (a raw
    fast call: no Python frame in the loop); the GIL is released while it may wait."""

    __slots__ = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _aeron._adopt_fast_methods(cls)  # each strategy class its own idle(): specialised calls

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class BusySpinIdleStrategy(_CIdleStrategy):
    """Aeron's "spin": a CPU pause instruction. Lowest latency; burns a core."""

    def __init__(self) -> None:
        super().__init__("spin")


class YieldingIdleStrategy(_CIdleStrategy):
    """Aeron's "yield": ``sched_yield`` when idle."""

    def __init__(self) -> None:
        super().__init__("yield")


class SleepingIdleStrategy(_CIdleStrategy):
    """Aeron's "sleeping": sleep ``period_ns`` when idle."""

    def __init__(self, period_ns: int = 1_000_000) -> None:
        if period_ns <= 0:
            raise ValueError(f"period_ns must be positive, got {period_ns}")
        super().__init__("sleeping", f"{int(period_ns)}ns")


class BackoffIdleStrategy(_CIdleStrategy):
    """Aeron's "backoff": spin, then yield, then park from ``min_park_ns`` doubling to ``max_park_ns``."""

    def __init__(self, max_spins: int = 10, max_yields: int = 20, min_park_ns: int = 1_000,
                 max_park_ns: int = 1_000_000) -> None:
        if not (0 <= max_spins and 0 <= max_yields and 0 < min_park_ns <= max_park_ns):
            raise ValueError(
                f"backoff needs spins, yields >= 0 and 0 < min_park_ns <= max_park_ns, got "
                f"{max_spins}, {max_yields}, {min_park_ns}, {max_park_ns}")
        super().__init__("backoff", f"{max_spins}-{max_yields}-{min_park_ns}-{max_park_ns}")


class NoOpIdleStrategy(_CIdleStrategy):
    """Aeron's "noop": return at once."""

    def __init__(self) -> None:
        super().__init__("noop")
