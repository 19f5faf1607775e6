"""Publications (``aeron_publication_t``, ``aeron_exclusive_publication_t``).

Offer contract: :meth:`Publication.offer` returns the new stream position (> 0) on
success; the three retryable, cheap outcomes come back as negative ints
(:data:`NOT_CONNECTED`, :data:`BACK_PRESSURED`, :data:`ADMIN_ACTION`) so a hot loop
pays no exception; terminal outcomes raise :class:`~aeron_py.errors.PublicationClosedError`,
:class:`~aeron_py.errors.MaxPositionExceededError` or
:class:`~aeron_py.errors.PublicationError`.

Thread-safety: a :class:`Publication` may be offered to from several threads; an
:class:`ExclusivePublication` has a single writer.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, Union

from . import _aeron
from .errors import RESULT_NAMES, AeronTimeoutError, offer_error
from .idle import BackoffIdleStrategy, IdleStrategy

NOT_CONNECTED: int = _aeron.NOT_CONNECTED
BACK_PRESSURED: int = _aeron.BACK_PRESSURED
ADMIN_ACTION: int = _aeron.ADMIN_ACTION
CLOSED: int = _aeron.PUBLICATION_CLOSED
MAX_POSITION_EXCEEDED: int = _aeron.MAX_POSITION_EXCEEDED
ERROR: int = _aeron.PUBLICATION_ERROR

#: What offer() accepts: any object exporting a contiguous buffer.
Buffer = Union[bytes, bytearray, memoryview]


class Claim:
    """A claimed region of the log (``aeron_buffer_claim_t``) as a context manager.

    ``with pub.try_claim(n) as buf: buf[:] = data`` commits on a clean exit and aborts
    when the block raises. ``buf`` is a writable memoryview valid only inside the block.
    """

    __slots__ = ("_claim", "position")

    def __init__(self, claim: _aeron.BufferClaim, position: int) -> None:
        self._claim = claim
        self.position = position

    @property
    def data(self) -> memoryview:
        return self._claim.data

    def commit(self) -> None:
        """``aeron_buffer_claim_commit``."""
        self._claim.commit()

    def abort(self) -> None:
        """``aeron_buffer_claim_abort``."""
        self._claim.abort()

    def __enter__(self) -> memoryview:
        return self._claim.data

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if self._claim.done:
            return
        if exc_type is None:
            self._claim.commit()
        else:
            self._claim.abort()


class Publication:
    """A concurrent publication (``aeron_publication_t``); made by ``Aeron.add_publication``."""

    __slots__ = ("_pub", "_offer", "_work", "__weakref__")

    def __init__(self, handle: Any, work: Callable[[], int] | None = None) -> None:
        self._pub = handle
        self._offer = handle.offer
        self._work = work  # the client's do_work in conductor-invoker mode

    def offer(self, buffer: Buffer) -> int:
        """Offer one message, zero-copy from any contiguous buffer (``aeron_publication_offer``).

        Returns the new position, or NOT_CONNECTED / BACK_PRESSURED / ADMIN_ACTION
        (negative) to retry later; raises for CLOSED, MAX_POSITION_EXCEEDED, ERROR.
        """
        result = self._offer(buffer)
        if result < ADMIN_ACTION:
            raise offer_error(result, f"offer on {self._pub.channel}")
        return result

    def offer_batch(self, buffers: Sequence[Buffer]) -> int:
        """Offer several messages with one call into C, in order, until one is not accepted.

        Returns how many were offered (the rest can be offered again later: a retryable
        NOT_CONNECTED / BACK_PRESSURED / ADMIN_ACTION stopped the batch); raises for
        CLOSED, MAX_POSITION_EXCEEDED and ERROR. Much cheaper than a Python loop of
        :meth:`offer` for small messages.
        """
        offered, result = self._pub.offer_batch(buffers)
        if result < ADMIN_ACTION:
            raise offer_error(result, f"offer_batch on {self._pub.channel} (after {offered} offered)")
        return offered

    def offer_until(self, buffer: Buffer, *, timeout: float, idle: IdleStrategy | None = None) -> int:
        """Offer, retrying the retryable outcomes until ``timeout`` seconds have passed.

        Raises :class:`~aeron_py.errors.AeronTimeoutError` naming the last result.
        """
        idle = idle or BackoffIdleStrategy()
        deadline = time.monotonic() + timeout
        while True:
            result = self.offer(buffer)
            if result > 0:
                return result
            if time.monotonic() >= deadline:
                raise AeronTimeoutError(
                    f"offer on {self._pub.channel} still {RESULT_NAMES[result]} after {timeout} s")
            idle.idle(0)

    def try_claim(self, length: int) -> Claim:
        """Claim ``length`` bytes to write in place (``aeron_publication_try_claim``).

        Returns a :class:`Claim` context manager; every non-success result raises its
        typed :class:`~aeron_py.errors.OfferError` (``.retryable`` tells which to retry).
        """
        result, claim = self._pub.try_claim(length)
        if claim is None:
            raise offer_error(result, f"try_claim({length}) on {self._pub.channel}")
        return Claim(claim, result)

    @property
    def is_connected(self) -> bool:
        """``aeron_publication_is_connected``."""
        return self._pub.is_connected

    @property
    def is_closed(self) -> bool:
        return self._pub.is_closed

    @property
    def channel(self) -> str:
        return self._pub.channel

    @property
    def stream_id(self) -> int:
        return self._pub.stream_id

    @property
    def session_id(self) -> int:
        return self._pub.session_id

    @property
    def registration_id(self) -> int:
        return self._pub.registration_id

    @property
    def max_payload_length(self) -> int:
        """Largest message that fits in one frame (MTU minus header)."""
        return self._pub.max_payload_length

    @property
    def max_message_length(self) -> int:
        """Largest message (fragmented across frames), term length / 8."""
        return self._pub.max_message_length

    @property
    def term_buffer_length(self) -> int:
        return self._pub.term_buffer_length

    @property
    def position(self) -> int:
        """``aeron_publication_position``."""
        return self._pub.position

    @property
    def position_limit(self) -> int:
        return self._pub.position_limit

    @property
    def channel_status(self) -> int:
        return self._pub.channel_status

    def local_addresses(self) -> list[str]:
        """``aeron_publication_local_sockaddrs``: the bound local socket addresses."""
        return self._pub.local_sockaddrs()

    def close(self) -> None:
        """``aeron_publication_close``. Idempotent."""
        self._pub.close()

    def __enter__(self) -> "Publication":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self._pub.channel} stream={self._pub.stream_id} "
                f"session={self._pub.session_id}{' closed' if self._pub.is_closed else ''}>")


class ExclusivePublication(Publication):
    """A single-writer publication (``aeron_exclusive_publication_t``), with MDC destinations."""

    __slots__ = ()

    def add_destination(self, uri: object, *, timeout: float = 5.0) -> None:
        """Add an MDC destination (manual control mode) and wait for the driver to confirm."""
        from .client import wait_for

        wait_for(self._pub.async_add_destination(str(uri)).poll, timeout, f"add_destination({uri})", self._work)

    def remove_destination(self, uri: object, *, timeout: float = 5.0) -> None:
        """Remove an MDC destination and wait for the driver to confirm."""
        from .client import wait_for

        wait_for(self._pub.async_remove_destination(str(uri)).poll, timeout, f"remove_destination({uri})",
                 self._work)
