"""aeron_py.asyncio.archive on the real Java Archive: requests on worker threads keep the loop
running; a replay arrives as an aio Subscription; a persistent subscription replays, goes
live, fails and closes without hanging (asyncio and uvloop)."""
from __future__ import annotations

import asyncio
import itertools
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import aeron_py.asyncio as aio
from aeron_py import ClientClosedError, MediaDriver
from aeron_py.archive import (ArchiveClosedError, ArchiveTimeoutError, PersistentState, RecordingEvent,
                              UnknownReplicationError, UnknownSubscriptionError,
                              RecordingSignal, RecordingSignalEvent, RecordingStarted, RecordingStopped)
from aeron_py.asyncio.archive import (AeronArchive, PersistentSubscription, PersistentSubscriptionFailedError,
                                      RecordingEvents)
from aio_helpers import wait_for_condition
from conftest import free_udp_port

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "archive"))
from archive_harness import START_TIMEOUT_S, JavaArchive, running_archive  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.java, pytest.mark.timeout(240)]
RECORDING_EVENTS = ("aeron:ipc", 31)
#: Live stream ids of the persistent subscription tests (their replays: + 100).
_persistent_streams = itertools.count(4911)


@pytest.fixture(scope="module")
def java_archive(driver: MediaDriver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaArchive]:
    with running_archive(driver.dir, tmp_path_factory.mktemp("archive"), recording_events=RECORDING_EVENTS) as archive:
        yield archive


async def connect(aeron: aio.Aeron, java: JavaArchive, **options: object) -> AeronArchive:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        try:
            return await AeronArchive.connect(aeron, control_channel=java.control_channel,
                                              response_channel="aeron:udp?endpoint=127.0.0.1:0",
                                              message_timeout=2.0, **options)
        except ArchiveTimeoutError:
            if time.monotonic() > deadline:
                raise


async def test_record_list_and_replay_as_an_aio_subscription(driver: MediaDriver, java_archive: JavaArchive) -> None:
    signals: list[RecordingSignalEvent] = []
    async with aio.Aeron(driver=driver) as aeron:
        async with await connect(aeron, java_archive, on_recording_signal=signals.append) as archive:
            stream = 4901
            events = await RecordingEvents.open(aeron, *RECORDING_EVENTS)
            await events.subscription.wait_connected(10.0)
            subscription_id = await archive.start_recording("aeron:ipc", stream)
            pub = aeron.sync.add_exclusive_publication("aeron:ipc", stream)
            last = [pub.offer_until(b"aio-%d" % i, timeout=10.0) for i in range(20)][-1]
            recording_id = None
            while recording_id is None:
                recording_id = await archive.find_last_matching_recording("ipc", stream, pub.session_id)
            while await archive.recording_position(recording_id) < last:
                await asyncio.sleep(0.005)
            await archive.stop_recording(subscription_id)
            assert [d.recording_id for d in await archive.list_recordings()][-1] == recording_id
            replay = await archive.replay(recording_id, "aeron:ipc", stream + 1)
            got = [bytes((await asyncio.wait_for(replay.receive(), 10.0)).data) for _ in range(20)]
            assert got == [b"aio-%d" % i for i in range(20)]
            replay.close()
            pub.close()
            seen: list[RecordingEvent] = []
            async with asyncio.timeout(10.0), events:
                async for event in events:
                    if event.recording_id == recording_id:
                        seen.append(event)
                        if isinstance(event, RecordingStopped):
                            break
            assert isinstance(seen[0], RecordingStarted) and seen[0].stream_id == stream, seen
            assert seen[-1] == RecordingStopped(recording_id, 0, last)
            assert events.subscription.is_closed
            deadline = time.monotonic() + 10.0
            while not {s.signal for s in signals} >= {RecordingSignal.START, RecordingSignal.STOP}:
                assert time.monotonic() < deadline, signals
                await archive.poll_recording_signals()
                await asyncio.sleep(0.01)


async def test_replication_and_recorded_publication_calls_from_asyncio(driver: MediaDriver,
                                                                       java_archive: JavaArchive) -> None:
    async with aio.Aeron(driver=driver) as aeron:
        async with await connect(aeron, java_archive) as archive:
            with pytest.raises(UnknownReplicationError):
                await archive.stop_replication(987654)
            assert await archive.try_stop_replication(987654) is False
            await archive.replicate(424242, java_archive.control_channel)  # from itself: no such recording
            deadline = time.monotonic() + 30.0
            while (message := await archive.poll_error_response()) is None:
                assert time.monotonic() < deadline, "no error response for the failed replication"
                await asyncio.sleep(0.01)
            assert "424242" in message or "unknown" in message.lower(), message
            await archive.check_error_response()  # nothing more waits
            stream = 4951
            pub = await aeron.add_exclusive_publication("aeron:ipc", stream)
            await archive.start_recording(f"aeron:ipc?session-id={pub.session_id}", stream)
            while await archive.find_last_matching_recording("ipc", stream, pub.session_id) is None:
                assert time.monotonic() < deadline, "no recording of the publication"
                await asyncio.sleep(0.01)
            await archive.stop_recording_publication(pub)  # the asyncio publication itself
            with pytest.raises(UnknownSubscriptionError):
                await archive.stop_recording_publication(pub.sync)
            pub.close()


async def test_a_request_to_no_archive_times_out_while_the_loop_keeps_running(driver: MediaDriver) -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    async with aio.Aeron(driver=driver) as aeron:
        task = asyncio.ensure_future(ticker())
        with pytest.raises(ArchiveTimeoutError):
            await AeronArchive.connect(aeron, control_channel="aeron:udp?endpoint=127.0.0.1:9", message_timeout=1.0)
        task.cancel()
    assert ticks >= 20  # about 100 in the second the connect waited


async def recorded_live(aeron: aio.Aeron, archive: AeronArchive) -> tuple[aio.Publication, str, int, int]:
    """A recorded live UDP publication (the Archive's spy lets it publish before anyone else
    subscribes): (publication, live channel, stream id, recording id)."""
    stream = next(_persistent_streams)
    live = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|term-length=65536"
    await archive.start_recording(live, stream)
    pub = await aeron.add_exclusive_publication(live + "|ssc=true", stream)
    deadline = time.monotonic() + 10.0
    while (recording_id := await archive.find_last_matching_recording("127.0.0.1", stream, pub.session_id)) is None:
        assert time.monotonic() < deadline, f"no recording of {live} stream {stream}"
        await asyncio.sleep(0.01)
    return pub, live, stream, recording_id


async def persistent(aeron: aio.Aeron, java: JavaArchive, recording_id: int, live: str, stream: int,
                     **options: Any) -> PersistentSubscription:
    options.setdefault("control_channel", java.control_channel)
    return await PersistentSubscription.create(
        aeron, recording_id=recording_id, live_channel=live, live_stream_id=stream,
        replay_channel="aeron:udp?endpoint=127.0.0.1:0", replay_stream_id=stream + 100,
        response_channel="aeron:udp?endpoint=127.0.0.1:0", **options)


async def test_a_persistent_subscription_replays_then_goes_live_every_message_once_in_order(
        driver: MediaDriver, java_archive: JavaArchive, waker: str) -> None:
    joined = asyncio.Event()
    joined_on: list[int] = []

    def on_live_joined() -> None:
        joined_on.append(threading.get_ident())
        joined.set()

    async with aio.Aeron(driver=driver, waker=waker) as aeron:  # type: ignore[arg-type]
        async with await connect(aeron, java_archive) as archive:
            pub, live, stream, recording_id = await recorded_live(aeron, archive)
            for i in range(50):
                await pub.offer(b"m-%d" % i, timeout=10.0)
            sub = await persistent(aeron, java_archive, recording_id, live, stream, on_live_joined=on_live_joined)
            async with sub:
                assert sub.counters().state is PersistentState.AWAIT_ARCHIVE_CONNECTION  # nothing sent before polls
                got: list[bytes] = []
                sent = 50
                positions: list[int] = []
                async with asyncio.timeout(60.0):  # publish while it replays, until it is live and has them all
                    while not (sub.is_live and len(got) == sent and sent >= 150):
                        if sent < 150 or not sub.is_live:
                            await pub.offer(b"m-%d" % sent, timeout=10.0)
                            sent += 1
                        if len(got) < sent:
                            for message in await sub.receive_batch(100):
                                assert message.header is not None
                                positions.append(message.header.position)
                                got.append(bytes(message.data))
                assert got == [b"m-%d" % i for i in range(sent)]  # every message once, in order, across the join
                assert positions == sorted(positions)
                for i in range(3):
                    await pub.offer(b"after-%d" % i, timeout=10.0)
                got += [bytes((await asyncio.wait_for(sub.receive(), 10.0)).data) for _ in range(3)]
                assert got[sent:] == [b"after-%d" % i for i in range(3)] and sub.queued == 0
                await asyncio.wait_for(joined.wait(), 10.0)
                assert joined_on == [threading.get_ident()]  # once, on the loop
                assert sub.is_live and not sub.is_replaying and not sub.has_failed and sub.failure() is None
                counters = sub.counters()
                assert counters.state is PersistentState.LIVE and (counters.live_joined, counters.live_left) == (1, 0)
                assert "LIVE" in repr(sub)
            assert sub.is_closed and "closed" in repr(sub)
            with pytest.raises(aio.SubscriptionClosedError):
                await sub.receive()


async def test_async_for_reads_it_and_close_ends_a_waiting_receive(driver: MediaDriver,
                                                                  java_archive: JavaArchive) -> None:
    async with aio.Aeron(driver=driver) as aeron:
        async with await connect(aeron, java_archive) as archive:
            pub, live, stream, recording_id = await recorded_live(aeron, archive)
            for i in range(10):
                await pub.offer(b"m-%d" % i, timeout=10.0)
            sub = await persistent(aeron, java_archive, recording_id, live, stream, with_header=False)
            got: list[bytes] = []
            async with asyncio.timeout(30.0):
                async for message in sub:
                    assert message.header is None
                    got.append(bytes(message.data))
                    if len(got) == 10:
                        break
            assert got == [b"m-%d" % i for i in range(10)]

            async def iterate() -> list[bytes]:
                return [bytes(message.data) async for message in sub]

            pending = asyncio.ensure_future(sub.receive())
            iterating = asyncio.ensure_future(iterate())
            # they wait for messages nobody sends; their polls take it to the live stream meanwhile
            await wait_for_condition(lambda: sub.is_live, 30.0, "the persistent subscription to go live")
            assert len(sub._subscription._waiters) == 2
            sub.close()
            with pytest.raises(aio.SubscriptionClosedError, match=f"persistent subscription of recording {recording_id}"):
                await asyncio.wait_for(pending, 10.0)
            assert await asyncio.wait_for(iterating, 10.0) == []  # async for just ends
            with pytest.raises(aio.SubscriptionClosedError):
                await sub.receive()
            sub.close()  # idempotent
            assert sub.is_closed and sub._subscription not in aeron._subscriptions  # forgotten by the client
            with pytest.raises(ArchiveClosedError):
                sub.is_live  # as the synchronous one says once closed


async def test_a_failure_ends_receive_and_iteration_with_its_reason(driver: MediaDriver,
                                                                    java_archive: JavaArchive) -> None:
    errors: list[tuple[int, str, int]] = []
    async with aio.Aeron(driver=driver) as aeron:
        live = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
        sub = await persistent(aeron, java_archive, 987_654, live, next(_persistent_streams),
                               on_error=lambda code, message: errors.append((code, message, threading.get_ident())))
        with pytest.raises(PersistentSubscriptionFailedError, match="recording 987654 failed: .*987654") as raised:
            await asyncio.wait_for(sub.receive(), 30.0)
        failure = sub.failure()
        assert failure is not None and (raised.value.errcode, raised.value.reason) == failure
        assert raised.value.recording_id == 987_654
        assert sub.has_failed and not sub.is_live and not sub.is_closed
        assert sub.counters().state is PersistentState.FAILED
        with pytest.raises(PersistentSubscriptionFailedError):
            async with asyncio.timeout(10.0):
                async for _ in sub:
                    pass
        await wait_for_condition(lambda: errors, 10.0, "on_error")
        assert errors[-1] == (*failure, threading.get_ident())  # on the loop
        sub.close()

        # failed before anyone waited: the receive's own first poll finds it and raises, never waits
        other = await persistent(aeron, java_archive, 987_655, live, next(_persistent_streams))
        deadline = time.monotonic() + 30.0
        while not other.sync.has_failed:
            assert time.monotonic() < deadline, "no failure"
            if other.sync.poll(lambda data, header: None, 10) == 0:
                await asyncio.sleep(0.001)
        with pytest.raises(PersistentSubscriptionFailedError, match="987655"):
            await asyncio.wait_for(other.receive(), 5.0)
        other.close()


async def test_closing_the_client_ends_a_waiting_receive_and_bad_arguments_are_refused(
        driver: MediaDriver, waker: str) -> None:
    aeron = aio.Aeron(driver=driver, waker=waker)  # type: ignore[arg-type]
    try:
        nowhere = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"  # no Archive answers: it keeps connecting
        with pytest.raises(ValueError, match="fragment_limit"):
            await PersistentSubscription.create(aeron, recording_id=1, live_channel=nowhere, live_stream_id=1,
                                                replay_channel="aeron:udp?endpoint=127.0.0.1:0", replay_stream_id=2,
                                                fragment_limit=0)
        with pytest.raises(ValueError, match="start_position"):  # raised by the synchronous create, on its thread
            await PersistentSubscription.create(aeron, recording_id=1, live_channel=nowhere, live_stream_id=1,
                                                replay_channel="aeron:udp?endpoint=127.0.0.1:0", replay_stream_id=2,
                                                start_position=-7)
        sub = await PersistentSubscription.create(aeron, recording_id=1, live_channel=nowhere, live_stream_id=1,
                                                  replay_channel="aeron:udp?endpoint=127.0.0.1:0",
                                                  replay_stream_id=2, control_channel=nowhere, message_timeout=30.0)
        pending = asyncio.ensure_future(sub.receive())
        await wait_for_condition(lambda: sub._subscription._waiters, 10.0, "the receiver to wait")
        aeron.close()
        with pytest.raises(ClientClosedError, match="closed"):
            await asyncio.wait_for(pending, 10.0)
        assert sub.is_closed
        with pytest.raises(ClientClosedError):
            await PersistentSubscription.create(aeron, recording_id=1, live_channel=nowhere, live_stream_id=1,
                                                replay_channel="aeron:udp?endpoint=127.0.0.1:0", replay_stream_id=2)
    finally:
        aeron.close()
