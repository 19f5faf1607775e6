"""Publications (``aeron_publication_t``, ``aeron_exclusive_publication_t``).

Offer contract: :meth:`Publication.offer` returns the new stream position (> 0) on
success; the three retryable, cheap outcomes come back as negative ints
(:data:`NOT_CONNECTED`, :data:`BACK_PRESSURED`, :data:`ADMIN_ACTION`) so a hot loop
pays no exception; terminal outcomes raise :class:`~aeron_py.errors.PublicationClosedError`,
:class:`~aeron_py.errors.MaxPositionExceededError` or
:class:`~aeron_py.errors.PublicationError`.

Speed: :class:`Publication` subclasses the extension's type, so ``pub.offer(b)``,
``pub.offer_batch(bs)`` and ``pub.try_claim(n)`` go straight into C (raw fast-call
methods, no Python frame, no pybind11 dispatch). ``bytes`` are offered in place; other
buffers through the buffer protocol and must be C-contiguous.

Claim safety contract (``try_claim``): a :class:`Claim` keeps its publication and client
alive. Its ``data`` memoryview and every slice or cast of it raise ``ValueError`` once the
claim is committed or aborted, and when its publication or client closes (a claim still
pending then is aborted first, while the log is mapped; ``commit()`` afterwards raises
:class:`~aeron_py.errors.PublicationClosedError` / :class:`~aeron_py.errors.ClientClosedError`).
Committing twice raises ``RuntimeError``. A claim garbage-collected without commit or abort
is aborted, so the stream never stalls on it. Not protected: raw pointers taken through the
buffer protocol (``numpy.frombuffer(claim.data)``, ``ctypes.c_char.from_buffer``, a C
extension holding a ``Py_buffer``) — do not keep such objects past the claim.

Thread-safety: a :class:`Publication` may be offered to from several threads; an
:class:`ExclusivePublication` has a single writer.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Self, Union

from . import _aeron
from .errors import RESULT_NAMES, AeronTimeoutError, ClientClosedError, offer_error
from .idle import BackoffIdleStrategy, IdleStrategy
from .waiting import wait_for

NOT_CONNECTED: int = _aeron.NOT_CONNECTED
BACK_PRESSURED: int = _aeron.BACK_PRESSURED
ADMIN_ACTION: int = _aeron.ADMIN_ACTION
CLOSED: int = _aeron.PUBLICATION_CLOSED
MAX_POSITION_EXCEEDED: int = _aeron.MAX_POSITION_EXCEEDED
ERROR: int = _aeron.PUBLICATION_ERROR

#: What offer() accepts: any object exporting a C-contiguous buffer.
Buffer = Union[bytes, bytearray, memoryview]




class Claim(_aeron.BufferClaim):
    """A claimed region of the log (``aeron_buffer_claim_t``), made by :meth:`Publication.try_claim`.

    ``with pub.try_claim(n) as buf: buf[:] = data`` commits on a clean exit and aborts
    when the block raises. ``buf`` (``claim.data``) is a writable memoryview valid only
    until the claim ends (see the module's safety contract). Inherited from C:
    ``data``, ``commit()`` (``aeron_buffer_claim_commit``), ``abort()``
    (``aeron_buffer_claim_abort``), ``position``, ``length``, ``done``, ``state``.
    """

    __slots__ = ()

    def __enter__(self) -> memoryview:
        return self.data

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is not None:
            if not self.done:
                self.abort()
        elif self.state not in ("committed", "aborted"):
            self.commit()  # raises when a close ended the claim inside the block: nothing was sent

    def __repr__(self) -> str:
        return f"<Claim {self.length} B at position {self.position} {self.state}>"


class Publication(_aeron.Publication):
    """A concurrent publication (``aeron_publication_t``); made by ``Aeron.add_publication``.

    ``offer``, ``offer_batch`` and ``try_claim`` are inherited C fast methods:

    - ``offer(buffer) -> int``: the new position, or NOT_CONNECTED / BACK_PRESSURED /
      ADMIN_ACTION (negative) to retry later; raises for CLOSED, MAX_POSITION_EXCEEDED, ERROR.
    - ``offer_batch(buffers) -> int``: offers in order until one is not accepted; returns
      how many were offered; raises for the terminal results.
    - ``try_claim(length) -> Claim``: raises the typed :class:`~aeron_py.errors.OfferError`
      for every non-success result (``.retryable`` tells which to retry).
    """

    __slots__ = ()

    def __new__(cls, handle: _aeron.Publication, work: Callable[[], int] | None = None) -> Self:
        # The extension makes the instance (already of this class); this only adopts it.
        if not isinstance(handle, cls):
            raise TypeError(f"{cls.__name__} objects are made by Aeron.add_*publication, not directly "
                            f"(got {type(handle).__name__})")
        handle._work = work
        return handle

    def __init__(self, handle: _aeron.Publication, work: Callable[[], int] | None = None) -> None:
        pass

    if TYPE_CHECKING:  # the extension makes claims as this module's Claim (registered below)
        def try_claim(self, length: int, /) -> Claim: ...

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
                    f"offer on {self.channel} still {RESULT_NAMES[result]} after {timeout} s")
            idle.idle(0)

    def local_addresses(self) -> list[str]:
        """``aeron_publication_local_sockaddrs``: the bound local socket addresses."""
        return self.local_sockaddrs()

    def __enter__(self) -> "Publication":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<{type(self).__name__} {self.channel} stream={self.stream_id} "
                f"session={self.session_id}{' closed' if self.is_closed else ''}>")


class ExclusivePublication(Publication):
    """A single-writer publication (``aeron_exclusive_publication_t``), with MDC destinations."""

    __slots__ = ()

    def add_destination(self, uri: object, *, timeout: float = 5.0) -> int:
        """Add an MDC destination (manual control mode) and wait for the driver to confirm;
        returns its registration id (for :meth:`remove_destination_by_id`)."""
        pending = self.async_add_destination(str(uri))
        wait_for(pending.poll, timeout, f"add_destination({uri})", self._work)
        return pending.registration_id

    def remove_destination_by_id(self, destination_id: int, *, timeout: float = 5.0) -> None:
        """Remove the MDC destination :meth:`add_destination` registered as ``destination_id``
        and wait for the driver to confirm (``aeron_*_async_remove_destination_by_id``)."""
        wait_for(self.async_remove_destination_by_id(destination_id).poll, timeout,
                 f"remove_destination_by_id({destination_id})", self._work)

    def remove_destination(self, uri: object, *, timeout: float = 5.0) -> None:
        """Remove an MDC destination and wait for the driver to confirm."""
        wait_for(self.async_remove_destination(str(uri)).poll, timeout, f"remove_destination({uri})",
                  self._work)


for _cls in (Claim, Publication, ExclusivePublication):
    _aeron._adopt_fast_methods(_cls)
_aeron._register_publication(offer_error=offer_error, client_closed=ClientClosedError,
                             publication=Publication, exclusive=ExclusivePublication, claim=Claim)
