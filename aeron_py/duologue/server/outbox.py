"""Bounded queues of replies waiting for one publication, each with its own deadline.

The glue never blocks on an offer: a reply that the publication does not take yet
waits here and is retried every loop iteration until its deadline.  An outbox holds
at most ``cap`` replies: pushing onto a full one first drops the oldest.  When the
head misses its deadline, every reply whose deadline has passed is dropped in one
go (the replies share one send timeout, so they are a prefix of the queue).
:attr:`Outbox.dropped` counts every drop.
"""
from __future__ import annotations

from collections import deque

from ...errors import RESULT_NAMES, OfferError
from ...publication import Publication

__all__ = ["DEFAULT_BROADCAST_CAP", "DEFAULT_DUOLOGUE_CAP", "Outbox"]

DEFAULT_BROADCAST_CAP = 4096
DEFAULT_DUOLOGUE_CAP = 256


class Outbox:
    """Messages waiting for one publication (FIFO, bounded)."""

    def __init__(self, cap: int) -> None:
        if cap < 1:
            raise ValueError(f"Outbox cap must be >= 1, got {cap}")
        self.cap = cap
        self._items: deque[tuple[bytes, float]] = deque()
        self.dropped = 0

    def __len__(self) -> int:
        return len(self._items)

    @property
    def full(self) -> bool:
        return len(self._items) >= self.cap

    def push(self, data: bytes, deadline: float) -> bool:
        """Queue ``data``; False when the oldest reply had to be dropped to make room."""
        dropped = False
        if len(self._items) >= self.cap:
            self._items.popleft()
            self.dropped += 1
            dropped = True
        self._items.append((data, deadline))
        return not dropped

    def flush(self, pub: Publication, now: float) -> tuple[int, str | None]:
        """Offer in order; returns (messages sent, failure or None).  Never blocks.

        On a failure (terminal offer error, or the head past its deadline) the head and
        every other expired reply are dropped and counted.
        """
        sent = 0
        while self._items:
            data, deadline = self._items[0]
            try:
                result = pub.offer(data)
            except OfferError as exc:
                self._drop_expired(now, at_least_one=True)
                return sent, str(exc)
            if result > 0:
                self._items.popleft()
                sent += 1
                continue
            if now >= deadline:
                self._drop_expired(now, at_least_one=True)
                return sent, f"offer still {RESULT_NAMES.get(result, result)} at its deadline"
            break
        return sent, None

    def _drop_expired(self, now: float, at_least_one: bool) -> int:
        count = 0
        while self._items and ((at_least_one and count == 0) or self._items[0][1] <= now):
            self._items.popleft()
            count += 1
        self.dropped += count
        return count

    def clear(self) -> int:
        """Drop everything (counted); the number dropped."""
        count = len(self._items)
        self._items.clear()
        self.dropped += count
        return count
