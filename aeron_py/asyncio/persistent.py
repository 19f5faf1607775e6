"""Persistent subscriptions from asyncio: ``aeron_py.asyncio.archive.PersistentSubscription``.

>>> async with aio.Aeron(driver=driver) as aeron:
...     async with await PersistentSubscription.create(
...             aeron, recording_id=recording_id,
...             live_channel="aeron:udp?endpoint=127.0.0.1:40456", live_stream_id=10,
...             replay_channel="aeron:udp?endpoint=127.0.0.1:0", replay_stream_id=11,
...             control_channel="aeron:udp?endpoint=127.0.0.1:8010") as sub:
...         message = await sub.receive()         # Message(data, header): replayed, then live
...         async for message in sub: ...

:class:`aeron_py.archive.PersistentSubscription` waited on as an
:class:`aeron_py.asyncio.Subscription` is: ``receive()`` polls it once inline and, when nothing
is there, the client's waker (``aio.Aeron(waker=...)``, :mod:`aeron_py.asyncio.wakers`) polls
it, backing off as the client's :class:`~aeron_py.asyncio.Backoff` says. Like the synchronous
one it only moves (connects, replays, joins the live stream) while it is polled, here while a
``receive()`` waits. A cancelled ``receive()`` loses no message.

A persistent subscription that fails (``has_failed``; an unknown recording, a position the
recording does not hold, ...) ends every pending and later ``receive()``, and ``async for``,
with :class:`PersistentSubscriptionFailedError` carrying :meth:`~PersistentSubscription.failure`'s
reason (messages already taken from Aeron are handed out first). Closing it ends pending
receives with :class:`~aeron_py.asyncio.SubscriptionClosedError` (the client's close: with
:class:`~aeron_py.errors.ClientClosedError`); ``async for`` then simply stops.
"""
from __future__ import annotations

import asyncio as _asyncio
import functools
from collections.abc import AsyncIterator, Callable
from typing import Any, cast

from ..archive.errors import ARCHIVE_CODE_OFFSET, ArchiveError
from ..archive.persistent import PersistentCounters, PersistentState, _log_error
from ..archive.persistent import PersistentSubscription as SyncPersistent
from ..archive.settings import channel_text
from ..errors import AeronError, ClientClosedError
from ..subscription import Subscription as SyncSubscription
from .client import Aeron
from .subscription import ImageEvents, Message, Subscription, SubscriptionClosedError

__all__ = ["PersistentSubscription", "PersistentSubscriptionFailedError"]


class PersistentSubscriptionFailedError(ArchiveError):
    """The persistent subscription stopped for good (``has_failed``). ``errcode`` and
    ``reason`` are those of its ``failure()``; ``archive_code`` is set when the Archive refused
    a request; ``recording_id`` is the recording it followed."""

    reason: str = ""
    recording_id: int = -1


def _failed_error(recording_id: int, failure: tuple[int, str] | None) -> PersistentSubscriptionFailedError:
    errcode, reason = failure if failure is not None else (0, "no reason given")
    error = PersistentSubscriptionFailedError(
        f"persistent subscription of recording {recording_id} failed: {reason} (errcode {errcode})")
    error.errcode, error.reason, error.recording_id = errcode, reason, recording_id
    if errcode <= -ARCHIVE_CODE_OFFSET:
        error.archive_code = -errcode - ARCHIVE_CODE_OFFSET
    return error


class _Poller:
    """What an :class:`aeron_py.asyncio.Subscription` reads of its ``sync`` (``channel``,
    ``stream_id``, ``is_connected``, ``is_closed``, ``poll``, ``poll_batch``, ``close``), over a
    synchronous persistent subscription. Polling a failed one raises
    :class:`PersistentSubscriptionFailedError`, which ends the receivers (a poll that saw the
    failure happen still hands over what it read; the next one raises)."""

    def __init__(self, sync: SyncPersistent, recording_id: int, channel: str, stream_id: int) -> None:
        self.sync = sync
        self.recording_id = recording_id
        self.channel = channel
        self.stream_id = stream_id

    @property
    def is_connected(self) -> bool:
        return not self.sync.is_closed and (self.sync.is_live or self.sync.is_replaying)

    @property
    def is_closed(self) -> bool:
        """Closed, by :meth:`close` or with its client."""
        return self.sync.is_closed

    def _raise_if_failed(self) -> None:
        if not self.sync.is_closed and self.sync.has_failed:
            raise _failed_error(self.recording_id, self.sync.failure())

    def poll(self, handler: Callable[[bytes, Any], Any], fragment_limit: int) -> int:
        self._raise_if_failed()
        try:
            return self.sync.poll(handler, fragment_limit)
        except AeronError as exc:
            if not self.sync.is_closed and self.sync.has_failed:  # the error of a poll as it failed
                raise _failed_error(self.recording_id, self.sync.failure()) from exc
            raise

    def poll_batch(self, fragment_limit: int) -> list[bytes]:
        taken: list[bytes] = []
        self.poll(lambda data, header: taken.append(data), fragment_limit)
        return taken

    def close(self) -> None:
        self.sync.close()


def _on_loop(loop: _asyncio.AbstractEventLoop, listener: Callable[..., Any] | None) -> Callable[..., None] | None:
    """``listener`` run on ``loop`` (the synchronous one calls it on the polling thread, which
    may be the waker's)."""
    if listener is None:
        return None

    def hand_over(*args: Any) -> None:
        try:
            loop.call_soon_threadsafe(listener, *args)
        except RuntimeError:  # the loop is closed: nobody listens any more
            pass

    return hand_over


def _close_late(created: _asyncio.Future[SyncPersistent]) -> None:
    """A create whose caller was cancelled: close what it made (done callback)."""
    if not created.cancelled() and created.exception() is None:
        created.result().close()


class PersistentSubscription:
    """A persistent subscription for asyncio code (make it with :meth:`create`): ``receive()``,
    ``receive_batch()``, ``async for``, ``async with``. ``sync`` is the underlying
    :class:`aeron_py.archive.PersistentSubscription` (do not poll it while this object may)."""

    def __init__(self, sync: SyncPersistent, subscription: Subscription, aeron: Aeron, recording_id: int) -> None:
        self.sync = sync
        self.recording_id = recording_id
        self._subscription = subscription
        self._aeron = aeron

    @classmethod
    async def create(cls, aeron: Aeron, *, recording_id: int, live_channel: object, live_stream_id: int,
                     replay_channel: object, replay_stream_id: int, with_header: bool = True,
                     fragment_limit: int = 10, on_live_joined: Callable[[], Any] | None = None,
                     on_live_left: Callable[[], Any] | None = None,
                     on_error: Callable[[int, str], Any] | None = _log_error, **options: Any) -> "PersistentSubscription":
        """:meth:`aeron_py.archive.PersistentSubscription.create` on a worker thread (it waits
        for the media driver to allocate its counters); ``options`` (``start_position``,
        ``control_channel``, ``response_channel``, ``message_timeout``, ...) as there.

        ``with_header=False`` gives messages without a header; ``fragment_limit``: fragments
        taken per poll. ``on_live_joined()``, ``on_live_left()`` and ``on_error(errcode,
        message)`` (default: logged) run on the loop.
        """
        if fragment_limit < 1:
            raise ValueError(f"fragment_limit must be >= 1, got {fragment_limit}")
        loop, waker = aeron._bind()  # ClientClosedError once the client is closed
        make = functools.partial(SyncPersistent.create, aeron.sync, recording_id=recording_id,
                                 live_channel=live_channel, live_stream_id=live_stream_id,
                                 replay_channel=replay_channel, replay_stream_id=replay_stream_id,
                                 on_live_joined=_on_loop(loop, on_live_joined),
                                 on_live_left=_on_loop(loop, on_live_left), on_error=_on_loop(loop, on_error),
                                 **options)
        creating = _asyncio.ensure_future(_asyncio.to_thread(make))
        try:
            sync = await _asyncio.shield(creating)
        except _asyncio.CancelledError:
            creating.add_done_callback(_close_late)
            raise
        if aeron.is_closed:
            sync.close()
            raise ClientClosedError("the asyncio Aeron client was closed while the persistent subscription was made")
        poller = _Poller(sync, recording_id, channel_text(live_channel, "live_channel"), live_stream_id)
        # the asyncio Subscription reads only _Poller's members of its ``sync`` (see _Poller)
        subscription = Subscription(cast(SyncSubscription, poller), loop, waker, ImageEvents(loop),
                                    with_header=with_header, fragment_limit=fragment_limit, backoff=aeron.backoff)
        aeron._subscriptions[subscription] = None  # pending receives end with the client, as its own do
        return cls(sync, subscription, aeron, recording_id)

    # ---- receiving

    async def receive(self) -> Message:
        """The next message, replayed or live (``Message(data, header)``; ``header`` None with
        ``with_header=False``); waits without blocking the loop. Raises
        :class:`PersistentSubscriptionFailedError` once it has failed,
        :class:`~aeron_py.asyncio.SubscriptionClosedError` once closed."""
        return await self._subscription.receive()

    async def receive_batch(self, max_messages: int = 100) -> list[Message]:
        """Between 1 and ``max_messages`` messages: whatever is ready once one is."""
        return await self._subscription.receive_batch(max_messages)

    def __aiter__(self) -> AsyncIterator[Message]:
        return self

    async def __anext__(self) -> Message:
        """Ends when it (or its client) is closed; raises once it has failed."""
        return await self._subscription.__anext__()

    @property
    def queued(self) -> int:
        """Messages taken from Aeron and not handed out yet."""
        return self._subscription.queued

    # ---- where it stands (as the synchronous one says)

    @property
    def is_live(self) -> bool:
        """Reading the live stream (no replay in progress)."""
        return self.sync.is_live

    @property
    def is_replaying(self) -> bool:
        """Replaying from the Archive (or switching to the live stream)."""
        return self.sync.is_replaying

    @property
    def has_failed(self) -> bool:
        """Stopped for good; :meth:`failure` says why (and ``receive()`` raises)."""
        return self.sync.has_failed

    def failure(self) -> tuple[int, str] | None:
        """``(errcode, message)`` of the error that made it fail, None while it has not."""
        return self.sync.failure()

    def counter_ids(self) -> tuple[int, int, int, int]:
        """``(state, join_difference, live_left, live_joined)`` counter ids in the client's counters."""
        return self.sync.counter_ids()

    def counters(self) -> PersistentCounters:
        """Its counters' current values (state, join difference, live joined / left)."""
        return self.sync.counters()

    @property
    def is_closed(self) -> bool:
        """Closed, by :meth:`close` or with its client."""
        return self.sync.is_closed

    # ---- closing

    def close(self) -> None:
        """Stop replaying and following; pending receives raise
        :class:`~aeron_py.asyncio.SubscriptionClosedError`. Idempotent."""
        self._subscription._fail(SubscriptionClosedError(
            f"persistent subscription of recording {self.recording_id} is closed"))
        self._subscription.close()
        self._aeron._subscriptions.pop(self._subscription, None)

    async def __aenter__(self) -> "PersistentSubscription":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        if self.is_closed:
            where = "closed"
        else:
            state = self.sync.counters().state
            where = state.name if isinstance(state, PersistentState) else f"state {state}"
        return (f"<aio.PersistentSubscription recording={self.recording_id} {self._subscription.channel} "
                f"stream={self._subscription.stream_id} {where}>")
