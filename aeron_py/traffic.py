"""Traffic bell and quiet idle: sleep until traffic instead of polling an idle driver.

Aeron's receiver writes incoming data straight into the log buffers and gives a
subscriber nothing to wait on, so an idle application polls, and so does an idle
driver: each duty cycle scans every publication and image.  With thousands of idle
channels both cost a core.  aeron_py's embedded driver carries a *traffic bell*
(``cpp/plugins/traffic_bell/traffic_bell.h``), rung by its endpoint filter after the
driver handled a datagram that carries application traffic: a data frame with a payload or
with end-of-stream, or a SETUP.  Heartbeats, status messages, NAKs and RTT measurements
do not ring it.

- :class:`TrafficBell` (``MediaDriver.traffic``): read :meth:`~TrafficBell.sequence`
  *before* your last polls; when two polls in a row found nothing, :meth:`~TrafficBell.wait`
  on that value sleeps (GIL released) until a datagram rings or the timeout passes.  A
  ring between the poll and the wait is never lost.  Two, because a poll stops at the end
  of a term: one that consumed only the padding closing a term finds no message while
  the next term may already hold one (it rang before you read the sequence).  :meth:`~TrafficBell.fileno` is an
  eventfd for ``selectors``/``asyncio`` users (readable after a ring while a wait is
  armed).
- :class:`QuietIdle` (``MediaDriver(quiet_idle=QuietIdle())``): the driver's SHARED
  idle strategy becomes Aeron's backoff while traffic is recent and, once nothing rang
  or :meth:`~TrafficBell.touch`\\ ed the bell for ``after`` seconds, one duty cycle per
  ``period``.  The cost: the first datagram after a quiet spell waits up to ``period``
  in the driver (and so does data offered while quiet: call :meth:`TrafficBell.touch`
  before offering after a quiet spell, or accept the delay).  A quiet driver sleeps in
  20 ms slices: a touch, or a client's request (an add, a remove, a close, from any client
  of the driver; not its keepalives), ends the sleep within a slice and counts as
  traffic, so a client opening channels on a quiet driver is answered within 20 ms,
  deep quiet or not, and its channels connect at the hot pace.  Heartbeats and status
  messages keep flowing (their timeouts are 100 ms and more).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from . import _aeron

__all__ = ["QuietIdle", "TrafficBell"]


@dataclass(frozen=True)
class QuietIdle:
    """The driver's quiet idle strategy (``aeron_py_quiet_idle``, SHARED threading mode).

    ``after``: seconds without traffic before the driver goes quiet (0: quiet unless a
    ring or touch is newer than the current duty cycle).  ``period``: seconds per duty
    cycle while quiet, in (0, 1].  ``deep_after`` (``None``: never): seconds without
    traffic, at least ``after``, before the driver sleeps ``deep_period`` (in (0, 1])
    between duty cycles instead: a long-idle driver with thousands of channels spends
    most of its remaining time scanning them once per cycle.  Aeron's stall counters
    ("work cycle exceeded threshold") get the longest period added to their
    thresholds, so they still count only cycles slower than intended.  Heartbeats and
    status messages go at most once per cycle; keep the periods well below the
    liveness timeouts (seconds).
    """

    after: float = 1.0
    period: float = 0.02
    deep_after: float | None = None
    deep_period: float = 0.2

    def __post_init__(self) -> None:
        if not _seconds(self.after) or self.after < 0:
            raise ValueError(f"QuietIdle.after must be a number of seconds >= 0, got {self.after!r}")
        for name in ("period", "deep_period"):
            value = getattr(self, name)
            if not _seconds(value) or not 0 < value <= 1:
                raise ValueError(f"QuietIdle.{name} must be in (0, 1] seconds, got {value!r}")
        if self.deep_after is not None and (not _seconds(self.deep_after) or self.deep_after < self.after):
            raise ValueError(f"QuietIdle.deep_after must be None or seconds >= after ({self.after!r}), "
                             f"got {self.deep_after!r}")

    @property
    def after_ns(self) -> int:
        return int(self.after * 1e9)

    @property
    def period_ns(self) -> int:
        return max(1, int(self.period * 1e9))

    @property
    def deep_after_ns(self) -> int:
        """``deep_after`` in ns; 0 when there is no deep quiet."""
        return 0 if self.deep_after is None else max(1, int(self.deep_after * 1e9))

    @property
    def deep_period_ns(self) -> int:
        return max(1, int(self.deep_period * 1e9))


def _seconds(value: object) -> bool:
    """A finite number of seconds (not a bool)."""
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


class TrafficBell:
    """The embedded driver's traffic bell (``aeron_py_traffic_bell_*``); see the module doc.

    One waiter at a time.  Valid for the whole life of its driver object; after the
    driver closed nothing rings it, so :meth:`wait` returns False at its timeout.
    """

    def __init__(self, native: "_aeron.EndpointFilter") -> None:
        self._native = native

    def sequence(self) -> int:
        """Datagrams with application traffic so far (``aeron_py_traffic_bell_sequence``)."""
        return self._native.traffic_sequence()

    def wait(self, seen: int, timeout: float | None) -> bool:
        """Sleep, GIL released, until :meth:`sequence` differs from ``seen`` or ``timeout``
        seconds pass (None: no limit); True when traffic came (``aeron_py_traffic_bell_wait``).
        A signal interrupts it: a raising handler's exception propagates, else False."""
        if timeout is None:
            timeout_ns = -1
        elif not timeout >= 0:
            raise ValueError(f"TrafficBell.wait: timeout must be >= 0 seconds or None, got {timeout!r}")
        else:
            timeout_ns = int(min(timeout, 86_400.0) * 1e9)
        return self._native.wait_for_traffic(seen, timeout_ns)

    def touch(self) -> None:
        """Count now as traffic for :class:`QuietIdle` (wakes no waiter): call it before
        offering data after a quiet spell so the driver sends it without waiting a period
        (``aeron_py_traffic_bell_touch``)."""
        self._native.touch_traffic()

    def last_traffic(self) -> float:
        """:func:`time.monotonic` time of the latest ring or touch (``aeron_py_traffic_bell_last_ns``)."""
        return self._native.last_traffic_ns() / 1e9

    def quiet_for(self) -> float:
        """Seconds since the latest ring or touch."""
        return max(0.0, (time.monotonic_ns() - self._native.last_traffic_ns()) / 1e9)

    def fileno(self) -> int:
        """The eventfd a waiter sleeps on (``aeron_py_traffic_bell_fd``); readable after a
        ring while a :meth:`wait` is armed.  Owned by the driver object: do not close it."""
        return self._native.traffic_fd()
