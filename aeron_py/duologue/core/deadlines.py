"""Due times in a heap: the work of finding what expired is proportional to what expired.

:class:`Deadlines` maps keys (duologue session ids) to one due time each.  Scheduling
a key again or cancelling it does not search the heap: the old entry stays and is
recognised as stale when it surfaces (its time is no longer the key's due time), so
:meth:`Deadlines.pop_due` costs O(log n) per entry that surfaces, and nothing for the
keys whose time has not come.  The heap holds at most one live entry per key plus the
stale ones scheduled before the last ``pop_due`` past them.
"""
from __future__ import annotations

import heapq
from collections.abc import Hashable
from itertools import count
from typing import Generic, TypeVar

__all__ = ["Deadlines"]

K = TypeVar("K", bound=Hashable)


class Deadlines(Generic[K]):
    """One due time per key; :meth:`pop_due` returns the keys whose time has come, in order."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, K]] = []
        self._due: dict[K, float] = {}
        self._order = count()  # ties and unorderable keys: first scheduled, first due

    def __len__(self) -> int:
        """Keys with a due time (stale heap entries are not counted)."""
        return len(self._due)

    def __contains__(self, key: object) -> bool:
        return key in self._due

    def due(self, key: K) -> float | None:
        """When ``key`` is due, or None."""
        return self._due.get(key)

    def schedule(self, key: K, at: float) -> None:
        """``key`` is due at ``at`` (replaces an earlier due time)."""
        self._due[key] = at
        heapq.heappush(self._heap, (at, next(self._order), key))

    def cancel(self, key: K) -> None:
        """``key`` is no longer due (no-op when it was not)."""
        self._due.pop(key, None)

    def pop_due(self, now: float) -> list[K]:
        """Remove and return every key due at or before ``now``, earliest first."""
        due: list[K] = []
        heap = self._heap
        while heap and heap[0][0] <= now:
            at, _, key = heapq.heappop(heap)
            if self._due.get(key) == at:
                del self._due[key]
                due.append(key)
        return due

    @property
    def heap_size(self) -> int:
        """Entries in the heap, stale ones included (for tests and diagnostics)."""
        return len(self._heap)
