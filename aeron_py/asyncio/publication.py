"""Awaitable publications: ``await pub.offer(buffer, timeout=...)``.

``offer`` tries the C offer at once; the retryable outcomes (NOT_CONNECTED,
BACK_PRESSURED, ADMIN_ACTION) are waited out on the event loop — ADMIN_ACTION is
retried at the next loop iteration, the others as :class:`~aeron_py.asyncio.Backoff`
says (a short spin of loop iterations, then 1 ms loop timers backing off to 4 ms) — so other
coroutines keep running.  Terminal outcomes raise exactly what the sync
:meth:`aeron_py.Publication.offer` raises.  Cancelling a pending ``offer`` is clean:
each attempt either appended the whole message or nothing, and a cancelled offer made
no successful attempt.
"""
from __future__ import annotations

import time

from ..errors import RESULT_NAMES, AeronTimeoutError
from ..publication import ADMIN_ACTION, Buffer, ExclusivePublication
from ..publication import Publication as SyncPublication
from .backoff import Backoff, poll_until, sleep_idle

__all__ = ["Publication"]


class Publication:
    """An asyncio view of a :class:`aeron_py.Publication` or
    :class:`aeron_py.ExclusivePublication`; made by ``await aio.Aeron.add_publication`` /
    ``add_exclusive_publication``.  ``sync`` is the underlying publication."""

    def __init__(self, pub: SyncPublication, backoff: Backoff) -> None:
        self.sync = pub
        self._backoff = backoff

    @property
    def channel(self) -> str:
        return self.sync.channel

    @property
    def stream_id(self) -> int:
        return self.sync.stream_id

    @property
    def session_id(self) -> int:
        return self.sync.session_id

    @property
    def is_connected(self) -> bool:
        return self.sync.is_connected

    @property
    def is_closed(self) -> bool:
        return self.sync.is_closed

    @property
    def max_payload_length(self) -> int:
        return self.sync.max_payload_length

    async def offer(self, buffer: Buffer, *, timeout: float | None = None) -> int:
        """Offer ``buffer`` (``aeron_publication_offer`` / ``aeron_exclusive_publication_offer``),
        waiting out the retryable outcomes; returns the new stream position.

        ``timeout``: seconds before :class:`~aeron_py.errors.AeronTimeoutError` (naming the
        last outcome); None waits until the offer succeeds, fails or is cancelled.
        """
        result = self.sync.offer(buffer)
        if result > 0:
            return result
        state = self._backoff.state()
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if deadline is not None and time.monotonic() >= deadline:
                raise AeronTimeoutError(
                    f"offer on {self.channel} still {RESULT_NAMES.get(result, result)} after {timeout} s")
            await sleep_idle(state, 1 if result == ADMIN_ACTION else 0)
            result = self.sync.offer(buffer)
            if result > 0:
                return result

    async def wait_connected(self, timeout: float | None = 5.0) -> None:
        """Wait until a subscriber is connected (``aeron_publication_is_connected``)."""
        await poll_until(lambda: self.is_connected, timeout,
                         f"publication {self.channel} stream {self.stream_id} to connect", self._backoff)

    async def add_destination(self, uri: object, *, timeout: float = 5.0) -> int:
        """Add an MDC destination (``aeron_exclusive_publication_async_add_destination``) and
        await the driver's confirmation; returns its registration id (for
        :meth:`remove_destination_by_id`)."""
        if not isinstance(self.sync, ExclusivePublication):
            raise TypeError("add_destination needs an exclusive publication (add_exclusive_publication)")
        pending = self.sync.async_add_destination(str(uri))
        await poll_until(pending.poll, timeout, f"add_destination({uri})", self._backoff)
        return pending.registration_id

    async def remove_destination_by_id(self, destination_id: int, *, timeout: float = 5.0) -> None:
        """Remove the MDC destination :meth:`add_destination` registered as ``destination_id``
        (``aeron_exclusive_publication_async_remove_destination_by_id``) and await the driver."""
        if not isinstance(self.sync, ExclusivePublication):
            raise TypeError("remove_destination_by_id needs an exclusive publication (add_exclusive_publication)")
        pending = self.sync.async_remove_destination_by_id(destination_id)
        await poll_until(pending.poll, timeout, f"remove_destination_by_id({destination_id})", self._backoff)

    def close(self) -> None:
        """Close the publication (``aeron_publication_close``); a pending offer then raises
        :class:`~aeron_py.errors.PublicationClosedError`.  Idempotent."""
        self.sync.close()

    def __repr__(self) -> str:
        return f"<aio.Publication {self.channel} stream={self.stream_id} session={self.session_id}>"
