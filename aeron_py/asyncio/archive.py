"""The Aeron Archive from asyncio: ``aeron_py.asyncio.archive.AeronArchive``.

>>> async with aio.Aeron(driver=driver) as aeron:
...     async with await AeronArchive.connect(aeron, control_channel=control) as archive:
...         subscription_id = await archive.start_recording("aeron:ipc", 10)
...         recordings = await archive.list_recordings()
...         replay = await archive.replay(recordings[-1].recording_id, "aeron:ipc", 20)
...         message = await replay.receive()      # an aio.Subscription

Every request of :class:`aeron_py.archive.AeronArchive` waits for the Archive's answer with
the GIL released; here it waits on a worker thread (``asyncio.to_thread``), so the loop keeps
running. Requests take turns on the connection. A cancelled request still completes on its
thread, bounded by the message timeout; the cancellation is what the awaiting task sees.
Recording signals are handed to the loop (``on_recording_signal`` runs there).

:class:`PersistentSubscription` (from :mod:`aeron_py.asyncio.persistent`) is the asyncio face
of :class:`aeron_py.archive.PersistentSubscription`: ``await sub.receive()``, ``async for``.
"""
from __future__ import annotations

import asyncio as _asyncio
from collections.abc import Callable
from typing import Any, TypeVar

from ..archive import AeronArchive as SyncArchive
from ..archive import RecordingDescriptor, RecordingSignalEvent, RecordingSubscription
from ..archive.settings import DEFAULT_RECORDING_EVENTS_CHANNEL, DEFAULT_RECORDING_EVENTS_STREAM_ID
from ..archive.recording_events import RecordingEvent, decode_recording_event
from ..errors import ClientClosedError
from ..publication import Publication as SyncPublication
from .client import Aeron
from .publication import Publication
from .persistent import PersistentSubscription, PersistentSubscriptionFailedError
from .subscription import ImageEvents, Subscription

__all__ = ["AeronArchive", "PersistentSubscription", "PersistentSubscriptionFailedError", "RecordingEvents"]
T = TypeVar("T")


class AeronArchive:
    """An archive connection for asyncio code (make it with :meth:`connect`)."""

    def __init__(self, sync: SyncArchive, aeron: Aeron, loop: _asyncio.AbstractEventLoop) -> None:
        self.sync = sync
        self._aeron = aeron
        self._loop = loop

    @classmethod
    async def connect(cls, aeron: Aeron, *, on_recording_signal: Callable[[RecordingSignalEvent], Any] | None = None,
                      **options: Any) -> "AeronArchive":
        """:meth:`aeron_py.archive.AeronArchive.connect` on a worker thread; ``options`` as there."""
        if aeron.is_closed:
            raise ClientClosedError("the asyncio Aeron client is closed")
        loop = _asyncio.get_running_loop()
        on_signal = None
        if on_recording_signal is not None:
            def on_signal(event: RecordingSignalEvent) -> None:  # runs on the worker thread
                loop.call_soon_threadsafe(on_recording_signal, event)
        sync = await _asyncio.to_thread(SyncArchive.connect, aeron.sync, on_recording_signal=on_signal, **options)
        return cls(sync, aeron, loop)

    async def _run(self, call: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await _asyncio.to_thread(call, *args, **kwargs)

    @property
    def is_closed(self) -> bool:
        return self.sync.is_closed

    async def archive_id(self) -> int:
        return await self._run(lambda: self.sync.archive_id)

    async def start_recording(self, channel: object, stream_id: int, **options: Any) -> int:
        return await self._run(self.sync.start_recording, channel, stream_id, **options)

    async def stop_recording(self, subscription_id: int) -> None:
        await self._run(self.sync.stop_recording, subscription_id)

    async def stop_recording_channel(self, channel: object, stream_id: int) -> None:
        await self._run(self.sync.stop_recording_channel, channel, stream_id)

    async def try_stop_recording_channel(self, channel: object, stream_id: int) -> bool:
        return await self._run(self.sync.try_stop_recording_channel, channel, stream_id)

    async def list_recordings(self, from_recording_id: int = 0, count: int = 100,
                              **options: Any) -> list[RecordingDescriptor]:
        return await self._run(self.sync.list_recordings, from_recording_id, count, **options)

    async def recording(self, recording_id: int) -> RecordingDescriptor | None:
        return await self._run(self.sync.recording, recording_id)

    async def find_last_matching_recording(self, channel_fragment: str, stream_id: int, session_id: int,
                                           **options: Any) -> int | None:
        return await self._run(self.sync.find_last_matching_recording, channel_fragment, stream_id, session_id,
                               **options)

    async def list_recording_subscriptions(self, *args: Any, **options: Any) -> list[RecordingSubscription]:
        return await self._run(self.sync.list_recording_subscriptions, *args, **options)

    async def recording_position(self, recording_id: int) -> int:
        return await self._run(self.sync.recording_position, recording_id)

    async def stop_position(self, recording_id: int) -> int:
        return await self._run(self.sync.stop_position, recording_id)

    async def max_recorded_position(self, recording_id: int) -> int:
        return await self._run(self.sync.max_recorded_position, recording_id)

    async def start_replay(self, recording_id: int, channel: object, stream_id: int, **options: Any) -> int:
        return await self._run(self.sync.start_replay, recording_id, channel, stream_id, **options)

    async def replay(self, recording_id: int, channel: object, stream_id: int, *, fragment_limit: int = 10,
                     **options: Any) -> Subscription:
        """:meth:`aeron_py.archive.AeronArchive.replay`, as an :class:`aeron_py.asyncio.Subscription`
        (``receive()``, ``async for``). Its ``image_events`` stay empty: the Archive's C client
        adds the subscription without image callbacks."""
        loop, waker = self._aeron._bind()
        raw = await self._run(self.sync.replay, recording_id, channel, stream_id, **options)
        sub = Subscription(raw, loop, waker, ImageEvents(loop), with_header=True, fragment_limit=fragment_limit,
                           backoff=self._aeron.backoff)
        self._aeron._subscriptions[sub] = None  # ended with the client, as its own subscriptions are
        return sub

    async def stop_replay(self, replay_session_id: int) -> None:
        await self._run(self.sync.stop_replay, replay_session_id)

    async def truncate_recording(self, recording_id: int, position: int) -> int:
        return await self._run(self.sync.truncate_recording, recording_id, position)

    async def purge_recording(self, recording_id: int) -> int:
        return await self._run(self.sync.purge_recording, recording_id)

    async def detach_segments(self, recording_id: int, new_start_position: int) -> None:
        await self._run(self.sync.detach_segments, recording_id, new_start_position)

    async def delete_detached_segments(self, recording_id: int) -> int:
        return await self._run(self.sync.delete_detached_segments, recording_id)

    async def purge_segments(self, recording_id: int, new_start_position: int) -> int:
        return await self._run(self.sync.purge_segments, recording_id, new_start_position)

    async def attach_segments(self, recording_id: int) -> int:
        return await self._run(self.sync.attach_segments, recording_id)

    async def migrate_segments(self, src_recording_id: int, dst_recording_id: int) -> int:
        return await self._run(self.sync.migrate_segments, src_recording_id, dst_recording_id)

    async def update_channel(self, recording_id: int, channel: object) -> None:
        await self._run(self.sync.update_channel, recording_id, channel)

    async def poll_recording_signals(self) -> list[RecordingSignalEvent]:
        return await self._run(self.sync.poll_recording_signals)

    async def stop_recording_publication(self, publication: Publication | SyncPublication) -> None:
        """See :meth:`aeron_py.archive.AeronArchive.stop_recording_publication` (an asyncio or a sync publication)."""
        sync = publication.sync if isinstance(publication, Publication) else publication
        await self._run(self.sync.stop_recording_publication, sync)

    async def replicate(self, src_recording_id: int, src_control_channel: object, src_control_stream_id: int = 10,
                        **options: Any) -> int:
        """See :meth:`aeron_py.archive.AeronArchive.replicate` (the same options)."""
        return await self._run(self.sync.replicate, src_recording_id, src_control_channel, src_control_stream_id,
                               **options)

    async def stop_replication(self, replication_id: int) -> None:
        await self._run(self.sync.stop_replication, replication_id)

    async def try_stop_replication(self, replication_id: int) -> bool:
        return await self._run(self.sync.try_stop_replication, replication_id)

    async def poll_error_response(self) -> str | None:
        return await self._run(self.sync.poll_error_response)

    async def check_error_response(self) -> None:
        await self._run(self.sync.check_error_response)

    def close(self) -> None:
        """Close the connection (waits for a request in progress, bounded by the message timeout)."""
        self.sync.close()

    async def aclose(self) -> None:
        await self._run(self.sync.close)

    async def __aenter__(self) -> "AeronArchive":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


class RecordingEvents:
    """The Archive's recording events for asyncio code (:mod:`aeron_py.archive.recording_events`):
    ``await events.receive()`` or ``async for event in events``; made by :meth:`open`.

    A message that is not a recording event raises
    :class:`~aeron_py.archive.recording_events.RecordingEventError` from the ``receive`` that
    read it; iteration ends when the subscription or the client is closed."""

    def __init__(self, subscription: Subscription) -> None:
        self.subscription = subscription

    @classmethod
    async def open(cls, aeron: Aeron, channel: object | None = None, stream_id: int | None = None, *,
                   timeout: float | None = None) -> "RecordingEvents":
        """Subscribe to ``channel`` / ``stream_id`` (the Archive's recording events channel;
        default :data:`~aeron_py.archive.settings.DEFAULT_RECORDING_EVENTS_CHANNEL`, stream 30)."""
        sub = await aeron.add_subscription(DEFAULT_RECORDING_EVENTS_CHANNEL if channel is None else channel,
                                           DEFAULT_RECORDING_EVENTS_STREAM_ID if stream_id is None else stream_id,
                                           with_header=False, timeout=timeout)
        return cls(sub)

    async def receive(self) -> RecordingEvent:
        """The next event; waits without blocking the loop."""
        return decode_recording_event((await self.subscription.receive()).data)

    def __aiter__(self) -> "RecordingEvents":
        return self

    async def __anext__(self) -> RecordingEvent:
        async for message in self.subscription:
            return decode_recording_event(message.data)
        raise StopAsyncIteration

    def close(self) -> None:
        self.subscription.close()

    async def __aenter__(self) -> "RecordingEvents":
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.close()
