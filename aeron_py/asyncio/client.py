"""The asyncio Aeron client: awaitable adds over a :class:`aeron_py.Aeron`.

>>> async with aio.Aeron(driver=driver) as aeron:
...     sub = await aeron.add_subscription("aeron:udp?endpoint=127.0.0.1:40123", 10)
...     pub = await aeron.add_publication("aeron:udp?endpoint=127.0.0.1:40123", 10)
...     await pub.offer(b"hello", timeout=5)
...     message = await sub.receive()

The client belongs to the event loop it is first used on.  Adds wait for the driver
without blocking the loop (``aeron_async_add_*`` polled as :class:`Backoff` says).
"""
from __future__ import annotations

import asyncio as _asyncio
import os
from typing import Any, Literal

from ..client import Aeron as SyncAeron
from ..client import PendingAdd
from ..driver import MediaDriver
from ..errors import AeronError, ClientClosedError
from .backoff import Backoff, poll_until
from .publication import Publication
from .subscription import MAX_IMAGE_EVENTS, ImageEvents, Subscription
from .wakers import WAKERS, Waker

__all__ = ["Aeron"]

WakerName = Literal["timer", "thread"]


class Aeron:
    """An asyncio Aeron client.

    Either makes its own :class:`aeron_py.Aeron` (``dir``, ``driver`` and
    ``client_options`` as there; closed by :meth:`close`) or wraps ``client`` (left open).
    The wrapped client must run its own conductor thread (not
    ``use_conductor_agent_invoker``).  ``waker``: ``"thread"`` (default) or ``"timer"``,
    see :mod:`aeron_py.asyncio.wakers`.  ``backoff``: how idle waits look again.
    """

    def __init__(self, dir: str | os.PathLike[str] | None = None, *, driver: MediaDriver | None = None,
                 client: SyncAeron | None = None, waker: WakerName = "thread", backoff: Backoff | None = None,
                 **client_options: Any) -> None:
        if waker not in WAKERS:
            raise ValueError(f"waker must be one of {sorted(WAKERS)}, got {waker!r}")
        if client is not None and (dir is not None or driver is not None or client_options):
            raise ValueError("pass either client= or the options to make one (dir, driver, ...), not both")
        if client_options.get("use_conductor_agent_invoker") or (client is not None and client._invoker):
            raise ValueError("aeron_py.asyncio needs a client with its own conductor thread "
                             "(use_conductor_agent_invoker=False)")
        self._owned = client is None
        self.sync: SyncAeron = client if client is not None else SyncAeron(dir, driver=driver, **client_options)
        self._waker_name: WakerName = waker
        self.backoff = backoff if backoff is not None else Backoff()
        self._loop: _asyncio.AbstractEventLoop | None = None
        self._waker: Waker | None = None
        self._subscriptions: dict[Subscription, None] = {}
        self._closed = False

    @property
    def is_closed(self) -> bool:
        return self._closed or self.sync.is_closed

    @property
    def waker(self) -> str:
        return self._waker_name

    def _bind(self) -> tuple[_asyncio.AbstractEventLoop, Waker]:
        if self._closed:
            raise ClientClosedError(f"the asyncio Aeron client for {self.sync.dir!r} is closed")
        loop = _asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif self._loop is not loop:
            raise RuntimeError("this aio.Aeron belongs to another event loop")
        if self._waker is None:
            self._waker = WAKERS[self._waker_name](loop, self.backoff)
        return loop, self._waker

    async def _await_add(self, pending: PendingAdd[Any], timeout: float | None) -> Any:
        bound = self.sync.resource_timeout if timeout is None else timeout
        return await poll_until(pending.poll, bound, pending.description, self.backoff)

    async def add_publication(self, channel: object, stream_id: int, *,
                              timeout: float | None = None) -> Publication:
        """A concurrent publication (``aeron_async_add_publication``), awaited."""
        self._bind()
        return Publication(await self._await_add(self.sync.async_add_publication(channel, stream_id), timeout),
                           self.backoff)

    async def add_exclusive_publication(self, channel: object, stream_id: int, *,
                                        timeout: float | None = None) -> Publication:
        """A single-writer publication (``aeron_async_add_exclusive_publication``), awaited."""
        self._bind()
        pending = self.sync.async_add_exclusive_publication(channel, stream_id)
        return Publication(await self._await_add(pending, timeout), self.backoff)

    async def add_subscription(self, channel: object, stream_id: int, *, with_header: bool = True,
                               fragment_limit: int = 10, max_image_events: int = MAX_IMAGE_EVENTS,
                               timeout: float | None = None) -> Subscription:
        """A subscription (``aeron_async_add_subscription``), awaited.

        ``with_header=False`` gives messages without a header (``poll_batch``: cheaper);
        ``fragment_limit``: fragments taken per poll; ``max_image_events``: unread image
        events kept (older ones are dropped and counted).
        """
        if fragment_limit < 1:
            raise ValueError(f"fragment_limit must be >= 1, got {fragment_limit}")
        loop, waker = self._bind()
        events = ImageEvents(loop, max_image_events)
        pending = self.sync.async_add_subscription(channel, stream_id, on_available_image=events.on_available,
                                                   on_unavailable_image=events.on_unavailable)
        try:
            raw = await self._await_add(pending, timeout)
        except BaseException:
            # a late answer must not leave an orphan: close it when it comes (bounded, best effort)
            _asyncio.ensure_future(_close_late(pending, self.sync.resource_timeout, self.backoff))
            raise
        sub = Subscription(raw, loop, waker, events, with_header=with_header, fragment_limit=fragment_limit,
                           backoff=self.backoff)
        if self._closed:
            raw.close()
            raise ClientClosedError("the asyncio Aeron client was closed while the subscription was added")
        self._subscriptions[sub] = None
        return sub

    def close(self) -> None:
        """Stop the waker, end pending receives with :class:`~aeron_py.errors.ClientClosedError`,
        and close the underlying client if this object made it.  Idempotent."""
        if self._closed:
            return
        self._closed = True
        error = ClientClosedError(f"the asyncio Aeron client for {self.sync.dir!r} was closed")
        for sub in list(self._subscriptions):
            sub._client_closed(error)
        self._subscriptions.clear()
        if self._waker is not None:
            self._waker.close()
        if self._owned:
            self.sync.close()

    async def __aenter__(self) -> "Aeron":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<aio.Aeron dir={self.sync.dir!r} waker={self._waker_name}{' closed' if self.is_closed else ''}>"


async def _close_late(pending: PendingAdd[Any], timeout: float, backoff: Backoff) -> None:
    try:
        handle = await poll_until(pending.poll, timeout, pending.description, backoff)
    except (AeronError, _asyncio.CancelledError):
        return
    handle.close()
