"""Awaitable subscriptions: ``await sub.receive()``, ``async for message in sub``, image events.

Messages are polled only while someone awaits one (Aeron's log is the buffer; not
polling is Aeron's own back pressure), at most ``fragment_limit`` fragments a poll.
What a poll took from Aeron goes into this object's queue first and a waiting receiver
is only *told* that the queue is not empty: a receiver cancelled after the wake-up
takes nothing, so a cancelled ``receive()`` never loses a message — the next receiver
gets it.

Closing (this subscription, or its :class:`~aeron_py.asyncio.Aeron`) ends every
pending ``receive()`` with :class:`SubscriptionClosedError` /
:class:`~aeron_py.errors.ClientClosedError`; messages already queued are still handed
out first; ``async for`` simply stops.  Not thread-safe: use it from its event loop.
"""
from __future__ import annotations

import asyncio as _asyncio
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator
from typing import NamedTuple, Protocol

from ..errors import AeronError, ClientClosedError
from ..subscription import Header, HeaderView, Image
from ..subscription import Subscription as SyncSubscription
from .backoff import Backoff, poll_until

logger = logging.getLogger(__name__)

__all__ = ["ImageEvent", "ImageEvents", "Message", "Subscription", "SubscriptionClosedError"]

#: Image events kept for a subscription nobody reads events from; older ones are dropped (counted).
MAX_IMAGE_EVENTS = 1024


class SubscriptionClosedError(AeronError):
    """The asyncio subscription was closed (before or while ``receive()`` waited)."""


class Waker(Protocol):
    """Polls subscriptions that have a pending receive and wakes their receivers
    (implementations: :mod:`.wakers`)."""

    def want(self, sub: "Subscription") -> None: ...

    def unwant(self, sub: "Subscription") -> None: ...

    def close(self) -> None: ...


class Message(NamedTuple):
    """One reassembled message: ``data`` and, with ``with_header=True``, a detached :class:`Header`."""

    data: bytes
    header: Header | None


class ImageEvent(NamedTuple):
    """An image (one publisher's stream) became available (``available=True``) or went away.

    ``image`` is the snapshot the client's image callback received (constants only).
    """

    available: bool
    image: Image


class ImageEvents:
    """Image events of one subscription, handed from the client's event thread to the loop.

    The client's event thread (never one of Aeron's threads) calls :meth:`on_available` /
    :meth:`on_unavailable`; they only schedule :meth:`_push` on the loop with
    ``call_soon_threadsafe``.  At most ``maxlen`` unread events are kept (``dropped`` counts the rest).
    """

    def __init__(self, loop: _asyncio.AbstractEventLoop, maxlen: int = MAX_IMAGE_EVENTS) -> None:
        self._loop = loop
        self._events: deque[ImageEvent] = deque(maxlen=maxlen)
        self._waiters: deque[_asyncio.Future[None]] = deque()
        self._closed: BaseException | None = None
        self.dropped = 0

    # ---- called on the client's event thread

    def on_available(self, image: Image) -> None:
        self._hand_over(ImageEvent(True, image))

    def on_unavailable(self, image: Image) -> None:
        self._hand_over(ImageEvent(False, image))

    def _hand_over(self, event: ImageEvent) -> None:
        try:
            self._loop.call_soon_threadsafe(self._push, event)
        except RuntimeError:  # the loop is closed: nobody can await the event any more
            pass

    # ---- on the loop

    def _push(self, event: ImageEvent) -> None:
        if self._closed is not None:
            return
        if len(self._events) == self._events.maxlen:
            self.dropped += 1
        self._events.append(event)
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
                break

    def _close(self, error: BaseException) -> None:
        if self._closed is None:
            self._closed = error
            for waiter in self._waiters:
                if not waiter.done():
                    waiter.set_exception(error)

    async def next(self) -> ImageEvent:
        """The next image event (queued ones first); raises once the subscription is closed."""
        while not self._events:
            if self._closed is not None:
                raise self._closed
            waiter = self._loop.create_future()
            self._waiters.append(waiter)
            try:
                await waiter
            except BaseException:
                if self._events:  # pass a wake-up this cancelled waiter may have taken
                    self._push_wake()
                raise
            finally:
                self._waiters.remove(waiter)
        return self._events.popleft()

    def _push_wake(self) -> None:
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_result(None)
                break

    def __aiter__(self) -> AsyncIterator[ImageEvent]:
        return self

    async def __anext__(self) -> ImageEvent:
        try:
            return await self.next()
        except AeronError:
            if self._closed is not None and not self._events:
                raise StopAsyncIteration from None
            raise


class Subscription:
    """An asyncio view of a :class:`aeron_py.Subscription`; made by ``await aio.Aeron.add_subscription``.

    ``receive()`` / ``receive_batch()`` / ``async for``; ``image_events`` (an async
    iterator of :class:`ImageEvent`, also ``await sub.image_events.next()``);
    ``wait_connected()``.  ``sync`` is the underlying subscription (do not poll it while
    this object may).
    """

    def __init__(self, sub: SyncSubscription, loop: _asyncio.AbstractEventLoop, waker: "Waker",
                 events: ImageEvents, *, with_header: bool, fragment_limit: int, backoff: Backoff) -> None:
        self.sync = sub
        self.image_events = events
        self._loop, self._waker, self._backoff = loop, waker, backoff
        self._with_header, self._limit = with_header, fragment_limit
        self._buffer: deque[Message] = deque()
        self._waiters: deque[_asyncio.Future[None]] = deque()
        self._error: BaseException | None = None
        self._poll_lock = threading.Lock()  # the loop and a poller thread never poll at once

    # ---- properties

    @property
    def channel(self) -> str:
        return self.sync.channel

    @property
    def stream_id(self) -> int:
        return self.sync.stream_id

    @property
    def is_connected(self) -> bool:
        return self._error is None and self.sync.is_connected

    @property
    def is_closed(self) -> bool:
        return self._error is not None or self.sync.is_closed

    @property
    def queued(self) -> int:
        """Messages taken from Aeron and not handed out yet."""
        return len(self._buffer)

    # ---- receiving

    async def receive(self) -> Message:
        """The next message; waits without blocking the loop (see the module docstring).

        Polls with ``aeron_subscription_controlled_poll`` (reassembling), through
        :meth:`aeron_py.Subscription.poll` (``with_header``) or ``poll_batch``."""
        await self._ready()
        return self._buffer.popleft()

    async def receive_batch(self, max_messages: int = 100) -> list[Message]:
        """Between 1 and ``max_messages`` messages: whatever is ready once one is."""
        if max_messages < 1:
            raise ValueError(f"max_messages must be >= 1, got {max_messages}")
        await self._ready()
        take = min(max_messages, len(self._buffer))
        return [self._buffer.popleft() for _ in range(take)]

    def __aiter__(self) -> AsyncIterator[Message]:
        return self

    async def __anext__(self) -> Message:
        try:
            return await self.receive()
        except (SubscriptionClosedError, ClientClosedError):
            raise StopAsyncIteration from None

    async def wait_connected(self, timeout: float | None = 5.0) -> None:
        """Wait until at least one image is connected (``aeron_subscription_is_connected``)."""
        await poll_until(lambda: self.is_connected or self._raise_if_closed(), timeout,
                         f"subscription {self.channel} stream {self.stream_id} to connect", self._backoff)

    async def _ready(self) -> None:
        while not self._buffer:
            self._raise_if_closed()
            if self._poll_here():  # a message already there costs no wake-up
                continue
            if self._error is not None:  # that poll failed and ended the subscription: raise, never wait
                continue
            waiter = self._loop.create_future()
            self._waiters.append(waiter)
            self._waker.want(self)
            try:
                await waiter
            except BaseException:
                if self._buffer:  # cancelled after a wake-up: pass it on, the message stays queued
                    self._wake()
                raise
            finally:
                self._waiters.remove(waiter)
                if not self._waiters:
                    self._waker.unwant(self)

    def _raise_if_closed(self) -> bool:
        if self._error is not None:
            raise self._error
        return False

    # ---- used by the wakers

    def _take(self) -> list[Message]:
        """One poll of the underlying subscription; the caller holds ``_poll_lock``."""
        if not self._with_header:
            return [Message(data, None) for data in self.sync.poll_batch(self._limit)]
        taken: list[Message] = []

        def keep(data: bytes, header: HeaderView) -> None:
            taken.append(Message(data, header.copy()))

        self.sync.poll(keep, self._limit)
        return taken

    def _poll_here(self) -> int:
        """Poll on the loop (unless the poller thread is polling this subscription right now);
        queue what came, wake receivers; errors end the receivers."""
        if not self._poll_lock.acquire(blocking=False):
            return 0
        try:
            taken = self._take()
        except Exception as exc:
            self._fail(exc)
            return 0
        finally:
            self._poll_lock.release()
        if taken:
            self._buffer.extend(taken)
            self._wake()
        return len(taken)

    def _deliver(self, taken: list[Message]) -> None:
        """Messages the poller thread took (run on the loop by ``call_soon_threadsafe``)."""
        self._buffer.extend(taken)
        self._wake()
        if any(not w.done() for w in self._waiters):
            self._waker.want(self)

    def _wake(self) -> None:
        ready = len(self._buffer)
        for waiter in self._waiters:
            if ready <= 0:
                break
            if not waiter.done():
                waiter.set_result(None)
                ready -= 1

    def _fail(self, error: BaseException) -> None:
        """End every pending and later receive with ``error`` (the subscription is unusable)."""
        if self._error is not None:
            return
        if not isinstance(error, (SubscriptionClosedError, ClientClosedError)):
            logger.error("polling %s stream %d failed: %s", self.channel, self.stream_id, error)
        self._error = error
        self._waker.unwant(self)
        for waiter in self._waiters:
            if not waiter.done():
                waiter.set_exception(error)
        self.image_events._close(error)

    # ---- closing

    def close(self) -> None:
        """Close the subscription (``aeron_subscription_close``); pending receives raise
        :class:`SubscriptionClosedError`.  Idempotent."""
        self._fail(SubscriptionClosedError(f"subscription {self.channel} stream {self.stream_id} is closed"))
        self.sync.close()

    def _client_closed(self, error: ClientClosedError) -> None:
        self._fail(error)

    def __repr__(self) -> str:
        return f"<aio.Subscription {self.channel} stream={self.stream_id} queued={len(self._buffer)}>"
