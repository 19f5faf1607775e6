"""Replication (``AeronArchive.replicate``) between two Java Archives, each on its own embedded
C media driver: stopped and live recordings, tagged, bounded by a stop position, stopped
mid-way; every copy replayed from the replica and compared byte for byte. And the error
response the replica's Archive sends when a replication cannot start."""
from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest

from aeron_py import Aeron, MediaDriver
from aeron_py.archive import (AeronArchive, ArchiveError, RecordingSignal, RecordingSignalEvent,
                              UnknownReplicationError)

from archive_harness import JavaArchive, connect, running_archive
from conftest import wait_until

pytestmark = [pytest.mark.integration, pytest.mark.java, pytest.mark.timeout(300)]
IPC = "aeron:ipc?term-length=65536"
_streams = itertools.count(4601)
#: A replication crosses two JVMs and two drivers on two cores: generous deadlines.
REPLICATION_TIMEOUT_S = 30.0


@dataclass
class Side:
    """One Archive, its driver and this test's connection to it (with the signals it got)."""
    driver: MediaDriver
    java: JavaArchive
    aeron: Aeron
    archive: AeronArchive
    signals: list[RecordingSignalEvent] = field(default_factory=list)


@pytest.fixture(scope="module")
def sides(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Side, Side]]:
    made: list[Side] = []
    with MediaDriver(publication_linger_timeout_ns=0) as d1, MediaDriver(publication_linger_timeout_ns=0) as d2:
        with running_archive(d1.dir, tmp_path_factory.mktemp("source"), archive_id=71) as j1, \
                running_archive(d2.dir, tmp_path_factory.mktemp("replica"), archive_id=72) as j2:
            for driver, java in ((d1, j1), (d2, j2)):
                aeron = Aeron(driver=driver)
                signals: list[RecordingSignalEvent] = []
                archive = connect(aeron, java, on_recording_signal=signals.append)
                assert isinstance(archive, AeronArchive)
                made.append(Side(driver, java, aeron, archive, signals))
            try:
                yield made[0], made[1]
            finally:
                for side in made:
                    side.archive.close()
                    side.aeron.close()


def publish(pub: object, count: int, start: int = 0) -> list[int]:
    return [pub.offer_until(b"rep-%d" % i, timeout=10.0) for i in range(start, start + count)]  # type: ignore[attr-defined]


def record(sides: tuple[Side, Side], stream_id: int) -> tuple[int, int, object]:
    """Start recording IPC ``stream_id`` on the source: (subscription id, recording id, publication).
    Both sides' signals of earlier tests are dropped first."""
    for side in sides:
        side.archive.poll_recording_signals()
        side.signals.clear()
    source = sides[0]
    subscription_id = source.archive.start_recording(IPC, stream_id)
    pub = source.aeron.add_exclusive_publication(IPC, stream_id)
    found = wait_until(lambda: source.archive.list_recordings(channel_fragment="aeron:ipc", stream_id=stream_id),
                       timeout=10.0, what="the source's recording")
    return subscription_id, found[-1].recording_id, pub


def signal(side: Side, code: RecordingSignal, what: str) -> RecordingSignalEvent:
    """The first ``code`` signal on ``side``'s connection (taken from its list), waited for."""
    def find() -> RecordingSignalEvent | None:
        side.archive.poll_recording_signals()
        for event in side.signals:
            if event.signal == code:
                side.signals.remove(event)
                return event
        return None

    return wait_until(find, timeout=REPLICATION_TIMEOUT_S, what=what, step=0.01)


def replayed(side: Side, recording_id: int, count: int) -> list[bytes]:
    sub = side.archive.replay(recording_id, IPC, next(_streams))
    got: list[bytes] = []
    deadline = time.monotonic() + REPLICATION_TIMEOUT_S
    while len(got) < count and time.monotonic() < deadline:
        if sub.poll(lambda data, header: got.append(bytes(data)), 64) == 0:
            time.sleep(0.001)
    sub.close()
    return got


def expected(count: int, start: int = 0) -> list[bytes]:
    return [b"rep-%d" % i for i in range(start, start + count)]


def tags(tagged: bool) -> dict[str, int]:
    """A tagged replication's tags (distinct per test: a tag names one replication channel)."""
    if not tagged:
        return {}
    tag = next(_streams)
    return {"channel_tag_id": 10_000 + tag, "subscription_tag_id": 20_000 + tag}


@pytest.mark.parametrize("tagged", [False, True], ids=["plain", "tagged"])
def test_a_stopped_recording_replicates_byte_exact(sides: tuple[Side, Side], tagged: bool) -> None:
    source, replica = sides
    subscription_id, src_id, pub = record(sides, next(_streams))
    positions = publish(pub, 200)
    wait_until(lambda: source.archive.recording_position(src_id) == positions[-1], what="the source to catch up")
    source.archive.stop_recording(subscription_id)
    replication_id = replica.archive.replicate(src_id, source.java.control_channel, **tags(tagged))
    assert replication_id >= 0
    dst_id = signal(replica, RecordingSignal.REPLICATE_END, "the replication's end").recording_id
    descriptor = replica.archive.recording(dst_id)
    assert descriptor is not None and descriptor.stop_position == positions[-1]
    assert replayed(replica, dst_id, 200) == expected(200)


def test_a_replication_with_a_stop_position_copies_up_to_it(sides: tuple[Side, Side]) -> None:
    source, replica = sides
    subscription_id, src_id, pub = record(sides, next(_streams))
    positions = publish(pub, 50)
    wait_until(lambda: source.archive.recording_position(src_id) == positions[-1], what="the source to catch up")
    source.archive.stop_recording(subscription_id)
    replica.archive.replicate(src_id, source.java.control_channel, stop_position=positions[19],
                              channel_tag_id=4711, subscription_tag_id=4712)
    dst_id = signal(replica, RecordingSignal.REPLICATE_END, "the tagged replication's end").recording_id
    descriptor = replica.archive.recording(dst_id)
    assert descriptor is not None and descriptor.stop_position == positions[19]
    assert replayed(replica, dst_id, 20) == expected(20)


@pytest.mark.parametrize("tagged", [False, True], ids=["plain", "tagged"])
def test_a_live_recording_is_followed_and_a_stop_midway_leaves_a_usable_copy(sides: tuple[Side, Side],
                                                                             tagged: bool) -> None:
    source, replica = sides
    subscription_id, src_id, pub = record(sides, next(_streams))
    first = publish(pub, 30)
    replication_id = replica.archive.replicate(src_id, source.java.control_channel, **tags(tagged))
    dst_id = signal(replica, RecordingSignal.EXTEND, "the replica to start following").recording_id
    second = publish(pub, 30, start=30)
    assert first[-1] < second[-1]
    wait_until(lambda: replica.archive.recording_position(dst_id) == second[-1], timeout=REPLICATION_TIMEOUT_S,
               what="the replica to follow the live recording")
    replica.archive.stop_replication(replication_id)
    signal(replica, RecordingSignal.REPLICATE_END, "the stopped replication's end")
    publish(pub, 30, start=60)  # recorded by the source only
    source.archive.stop_recording(subscription_id)
    descriptor = replica.archive.recording(dst_id)
    assert descriptor is not None and descriptor.stop_position == second[-1]
    assert replayed(replica, dst_id, 60) == expected(60)
    assert not replica.archive.try_stop_replication(replication_id)  # already stopped


def test_stopping_an_unknown_replication(sides: tuple[Side, Side]) -> None:
    _, replica = sides
    with pytest.raises(UnknownReplicationError):
        replica.archive.stop_replication(987654)
    assert replica.archive.try_stop_replication(987654) is False


def test_a_replication_that_cannot_start_comes_as_an_error_response(sides: tuple[Side, Side]) -> None:
    source, replica = sides
    replica.archive.replicate(424242, source.java.control_channel)  # no such recording at the source
    message = wait_until(replica.archive.poll_error_response, timeout=REPLICATION_TIMEOUT_S,
                         what="the replica's error response", step=0.01)
    assert "424242" in message or "unknown" in message.lower(), message
    assert replica.archive.poll_error_response() is None  # read once


def test_check_error_response_raises_it(sides: tuple[Side, Side]) -> None:
    source, replica = sides
    replica.archive.replicate(424243, source.java.control_channel)
    deadline = time.monotonic() + REPLICATION_TIMEOUT_S
    with pytest.raises(ArchiveError, match="the Archive reports"):
        while time.monotonic() < deadline:
            replica.archive.check_error_response()
            time.sleep(0.01)


def test_replicate_arguments_checked(sides: tuple[Side, Side]) -> None:
    source, replica = sides
    with pytest.raises(ValueError):
        replica.archive.replicate(-1, source.java.control_channel)
    with pytest.raises(ValueError, match="src_control_channel must not be empty"):
        replica.archive.replicate(0, "")
    with pytest.raises(TypeError, match="credentials must be bytes"):
        replica.archive.replicate(0, source.java.control_channel, credentials="x")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="NUL"):
        replica.archive.replicate(0, source.java.control_channel + "\0")
