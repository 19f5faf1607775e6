"""aeron_py.asyncio.archive on the real Java Archive: requests on worker threads keep the loop
running; a replay arrives as an aio Subscription (asyncio and uvloop)."""
from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import aeron_py.asyncio as aio
from aeron_py import MediaDriver
from aeron_py.archive import (ArchiveTimeoutError, RecordingEvent, RecordingSignal, RecordingSignalEvent,
                              RecordingStarted, RecordingStopped)
from aeron_py.asyncio.archive import AeronArchive, RecordingEvents

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "archive"))
from archive_harness import START_TIMEOUT_S, JavaArchive, running_archive  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.java, pytest.mark.timeout(240)]
RECORDING_EVENTS = ("aeron:ipc", 31)


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
