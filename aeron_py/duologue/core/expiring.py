"""Keys that hold for a while: a bounded table of "until" times (sources out of good
standing, sources penalised for flooding).

Each key holds until its time; holding it again moves its time on.  The table keeps at
most ``capacity`` keys (the oldest make way), so its memory is bounded whatever the
number of sources that land in it, and entries whose time has passed are dropped as
new ones come.  Every key is given the same duration, so the table's order (oldest
first) is also the order of the times.
"""
from __future__ import annotations

from collections import OrderedDict

__all__ = ["ExpiringKeys"]


class ExpiringKeys:
    """``key -> until``: :meth:`hold` for ``duration`` seconds, :meth:`holds` until then."""

    def __init__(self, duration: float, capacity: int) -> None:
        if not duration >= 0:
            raise ValueError(f"duration must be >= 0 seconds, got {duration!r}")
        if capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {capacity!r}")
        self.duration = duration
        self.capacity = capacity
        self._until: OrderedDict[str, float] = OrderedDict()

    def __len__(self) -> int:
        """Keys remembered (some may have run out since the last :meth:`hold`)."""
        return len(self._until)

    def holds(self, key: str, now: float) -> bool:
        until = self._until.get(key)
        return until is not None and until > now

    def hold(self, key: str, now: float) -> float:
        """``key`` holds for ``duration`` from ``now``; returns until when."""
        until = self._until[key] = now + self.duration
        self._until.move_to_end(key)
        table = self._until
        while len(table) > self.capacity or next(iter(table.values())) <= now:
            table.popitem(last=False)
        return until
