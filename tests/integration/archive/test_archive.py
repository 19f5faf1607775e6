"""Record, list, replay, truncate and purge through aeron_py.archive, on the real Java Archive
attached to our embedded C media driver (UDP loopback for the control session, IPC and UDP
for the recorded streams)."""
from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from aeron_py import Aeron, AeronError, MediaDriver
from aeron_py.archive import (FOLLOW, AeronArchive, RecordingEvent, RecordingEvents, RecordingProgress,
                              RecordingSignal, RecordingSignalEvent, RecordingStarted, RecordingStopped,
                              SourceLocation, UnknownRecordingError, UnknownSubscriptionError)

from archive_harness import JavaArchive, connect, running_archive
from conftest import free_udp_port, wait_until

pytestmark = [pytest.mark.integration, pytest.mark.java, pytest.mark.timeout(240)]
_streams = itertools.count(4101)
#: Small terms: the Archive's segment files (1 MiB here) hold whole terms.
IPC = "aeron:ipc?term-length=65536"
#: Where this module's Archive publishes its recording events.
RECORDING_EVENTS = ("aeron:ipc", 31)


@pytest.fixture(scope="module")
def driver() -> Iterator[MediaDriver]:
    with MediaDriver(publication_linger_timeout_ns=0) as d:
        yield d


@pytest.fixture(scope="module")
def java_archive(driver: MediaDriver, tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaArchive]:
    with running_archive(driver.dir, tmp_path_factory.mktemp("archive"), recording_events=RECORDING_EVENTS) as archive:
        yield archive


@pytest.fixture(scope="module")
def aeron(driver: MediaDriver) -> Iterator[Aeron]:
    with Aeron(driver=driver) as client:
        yield client


@pytest.fixture(scope="module")
def signals() -> list[RecordingSignalEvent]:
    return []


@pytest.fixture(scope="module")
def archive(aeron: Aeron, java_archive: JavaArchive, signals: list[RecordingSignalEvent]) -> Iterator[AeronArchive]:
    connection = connect(aeron, java_archive, on_recording_signal=signals.append)
    assert isinstance(connection, AeronArchive)
    with connection:
        yield connection


def publish(pub: Any, count: int, prefix: bytes = b"msg") -> list[int]:
    """Offer ``count`` messages ``prefix-i``; the stream position after each."""
    return [pub.offer_until(b"%s-%d" % (prefix, i), timeout=10.0) for i in range(count)]


def drain(sub: Any, count: int, timeout: float = 10.0) -> list[bytes]:
    got: list[bytes] = []
    deadline = time.monotonic() + timeout
    while len(got) < count and time.monotonic() < deadline:
        if sub.poll(lambda data, header: got.append(bytes(data)), 10) == 0:
            time.sleep(0.001)
    return got


def recording_of(archive: AeronArchive, fragment: str, stream_id: int, session_id: int) -> int:
    """The id of the recording of that stream and session, once the Archive lists it (ids start at 0)."""
    found: list[int] = []

    def listed() -> bool:
        recording_id = archive.find_last_matching_recording(fragment, stream_id, session_id)
        found[:] = [] if recording_id is None else [recording_id]
        return bool(found)

    wait_until(listed, what=f"a recording of {fragment!r} stream {stream_id}")
    return found[0]


def recorded(archive: AeronArchive, aeron: Aeron, stream_id: int, count: int,
             channel: str = IPC) -> tuple[int, list[int]]:
    """Record ``count`` messages on ``channel``/``stream_id``, stop; (recording id, positions)."""
    subscription_id = archive.start_recording(channel, stream_id)
    pub = aeron.add_exclusive_publication(channel, stream_id)
    positions = publish(pub, count)
    found = wait_until(lambda: archive.list_recordings(channel_fragment="aeron:", stream_id=stream_id),
                  what="the recording in the catalog")
    recording_id = found[-1].recording_id
    wait_until(lambda: archive.recording_position(recording_id) == positions[-1], what="the recording to catch up")
    archive.stop_recording(subscription_id)
    pub.close()
    return recording_id, positions


def test_connect_reports_the_archive_and_session(archive: AeronArchive, java_archive: JavaArchive) -> None:
    assert archive.archive_id == java_archive.archive_id
    assert archive.control_session_id != 0
    assert not archive.is_closed


def test_a_recorded_ipc_stream_replays_every_message_in_order(archive: AeronArchive, aeron: Aeron) -> None:
    stream_id = next(_streams)
    recording_id, positions = recorded(archive, aeron, stream_id, 200)
    descriptor = archive.recording(recording_id)
    assert descriptor is not None
    assert (descriptor.stream_id, descriptor.start_position, descriptor.stop_position) == (stream_id, 0, positions[-1])
    assert not descriptor.is_active and descriptor.original_channel == IPC
    assert archive.stop_position(recording_id) == positions[-1]
    assert archive.recording_position(recording_id) == -1  # no longer recording
    replay = archive.replay(recording_id, IPC, next(_streams))
    assert drain(replay, 200) == [b"msg-%d" % i for i in range(200)]
    replay.close()


def test_a_bounded_replay_gives_exactly_the_window_asked_for(archive: AeronArchive, aeron: Aeron) -> None:
    recording_id, positions = recorded(archive, aeron, next(_streams), 50)
    start, end = positions[9], positions[19]  # after message 9 .. after message 19: messages 10-19
    replay = archive.replay(recording_id, IPC, next(_streams), position=start, length=end - start)
    assert drain(replay, 11, timeout=3.0) == [b"msg-%d" % i for i in range(10, 20)]
    replay.close()


def test_a_udp_stream_recorded_remotely_replays_over_udp(archive: AeronArchive, aeron: Aeron,
                                                          java_archive: JavaArchive) -> None:
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|term-length=65536"
    stream_id = next(_streams)
    subscription_id = archive.start_recording(channel, stream_id, source=SourceLocation.REMOTE)
    pub = aeron.add_publication(channel, stream_id)
    positions = publish(pub, 30, b"udp")
    recording_id = recording_of(archive, "127.0.0.1", stream_id, pub.session_id)
    wait_until(lambda: archive.recording_position(recording_id) == positions[-1], what="the UDP recording to catch up")
    archive.stop_recording(subscription_id)
    replay_channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    replay = archive.replay(recording_id, replay_channel, next(_streams))
    assert drain(replay, 30) == [b"udp-%d" % i for i in range(30)]
    replay.close()
    any_port = archive.replay(recording_id, "aeron:udp?endpoint=127.0.0.1:0", next(_streams))  # bound first
    assert drain(any_port, 30) == [b"udp-%d" % i for i in range(30)]
    any_port.close()
    pub.close()


def test_a_replay_that_follows_a_live_recording_gets_what_is_published_after_it_started(
        archive: AeronArchive, aeron: Aeron) -> None:
    stream_id = next(_streams)
    subscription_id = archive.start_recording(IPC, stream_id)
    pub = aeron.add_exclusive_publication(IPC, stream_id)
    publish(pub, 10, b"early")
    recording_id = recording_of(archive, "aeron:ipc", stream_id, pub.session_id)
    replay = archive.replay(recording_id, IPC, next(_streams), length=FOLLOW)
    assert drain(replay, 10) == [b"early-%d" % i for i in range(10)]
    publish(pub, 10, b"late")
    assert drain(replay, 10) == [b"late-%d" % i for i in range(10)]
    assert archive.recording_position(recording_id) > 0  # still recording
    archive.stop_recording(subscription_id)
    replay.close()
    pub.close()


def test_recording_signals_reach_the_callback(archive: AeronArchive, aeron: Aeron,
                                              signals: list[RecordingSignalEvent]) -> None:
    signals.clear()
    recording_id, positions = recorded(archive, aeron, next(_streams), 5)
    wait_until(lambda: archive.poll_recording_signals() == [] and
          {s.signal for s in signals if s.recording_id == recording_id} >= {RecordingSignal.START, RecordingSignal.STOP},
          what="START and STOP signals")
    stop = [s for s in signals if s.recording_id == recording_id and s.signal is RecordingSignal.STOP][0]
    assert stop.position == positions[-1]


def test_truncate_then_purge_remove_what_they_say(archive: AeronArchive, aeron: Aeron) -> None:
    recording_id, positions = recorded(archive, aeron, next(_streams), 40)
    archive.truncate_recording(recording_id, positions[19])
    assert archive.stop_position(recording_id) == positions[19]
    replay = archive.replay(recording_id, IPC, next(_streams))
    assert drain(replay, 21, timeout=3.0) == [b"msg-%d" % i for i in range(20)]
    replay.close()
    archive.purge_recording(recording_id)
    assert archive.recording(recording_id) is None
    with pytest.raises(UnknownRecordingError):
        archive.stop_position(recording_id)


def test_refusals_are_typed_and_leave_the_session_usable(archive: AeronArchive) -> None:
    with pytest.raises(UnknownRecordingError) as caught:
        archive.stop_position(987_654)
    assert caught.value.archive_code == 5 and "987654" in str(caught.value)
    with pytest.raises(UnknownSubscriptionError):
        archive.stop_recording(987_654)
    assert archive.try_stop_recording(987_654) is False
    assert archive.recording(987_654) is None
    assert archive.list_recordings(from_recording_id=987_654) == []
    assert archive.archive_id == 7  # the session still answers


def test_listing_by_channel_fragment_and_stream_finds_only_that_stream(archive: AeronArchive, aeron: Aeron) -> None:
    stream_a, stream_b = next(_streams), next(_streams)
    id_a, _ = recorded(archive, aeron, stream_a, 3)
    id_b, _ = recorded(archive, aeron, stream_b, 3)
    assert [d.recording_id for d in archive.list_recordings(channel_fragment="ipc", stream_id=stream_a)] == [id_a]
    assert [d.recording_id for d in archive.list_recordings(channel_fragment="ipc", stream_id=stream_b)] == [id_b]
    assert archive.list_recordings(channel_fragment="udp?nothing", stream_id=stream_a) == []
    everything = archive.list_recordings(count=1000)
    assert {id_a, id_b} <= {d.recording_id for d in everything}
    with pytest.raises(ValueError, match="both"):
        archive.list_recordings(channel_fragment="ipc")


def test_recording_subscriptions_are_listed_while_active(archive: AeronArchive) -> None:
    stream_id = next(_streams)
    subscription_id = archive.start_recording(IPC, stream_id)
    listed = archive.list_recording_subscriptions("ipc", stream_id)
    assert [s.subscription_id for s in listed] == [subscription_id]
    archive.stop_recording_channel(IPC, stream_id)
    assert archive.list_recording_subscriptions("ipc", stream_id) == []
    assert archive.try_stop_recording_channel(IPC, stream_id) is False  # nothing left to stop
    archive.start_recording(IPC, stream_id)
    assert archive.try_stop_recording_channel(IPC, stream_id) is True
    assert archive.list_recording_subscriptions("ipc", stream_id) == []


def test_a_recorded_publication_is_recorded_and_its_live_recording_has_a_position_counter(
        archive: AeronArchive, aeron: Aeron) -> None:
    stream_id = next(_streams)
    pub = archive.add_recorded_publication(IPC, stream_id, exclusive=True)
    positions = publish(pub, 25, b"rec")
    recording_id = recording_of(archive, "ipc", stream_id, pub.session_id)
    counter_id = wait_until(lambda: archive.recording_counter_id(recording_id=recording_id),
                            what="the recording position counter")
    assert archive.recording_counter_id(session_id=pub.session_id) == counter_id
    assert archive.recording_of_counter(counter_id) == recording_id
    assert archive.counter_source_identity(counter_id) == "aeron:ipc"
    assert archive.counter_is_active(counter_id, recording_id)
    assert not archive.counter_is_active(counter_id, recording_id + 1)
    for not_a_recording in (-1, 0, 1 << 30):  # a counter of another kind, none, far past the last
        if not_a_recording != counter_id:
            assert archive.recording_of_counter(not_a_recording) is None
            assert archive.counter_source_identity(not_a_recording) is None
            assert not archive.counter_is_active(not_a_recording, recording_id)
    wait_until(lambda: aeron.counters_reader().value(counter_id) == positions[-1],
               what="the counter at the last position")
    # a replay bounded by the live counter delivers what is recorded, and stays open for more
    replay = archive.replay(recording_id, IPC, next(_streams), length=FOLLOW, bounding_counter_id=counter_id)
    assert drain(replay, 25) == [b"rec-%d" % i for i in range(25)]
    replay.close()
    assert archive.try_stop_recording_by_identity(recording_id) is True  # its channel names its session
    pub.close()
    wait_until(lambda: not archive.counter_is_active(counter_id, recording_id), what="the counter to be freed")
    assert archive.recording_counter_id(recording_id=987_654) is None
    with pytest.raises(ValueError, match="recording_id or session_id"):
        archive.recording_counter_id()


def test_a_stopped_recording_is_extended_by_a_publication_that_continues_it(archive: AeronArchive,
                                                                            aeron: Aeron) -> None:
    stream_id = next(_streams)
    recording_id, positions = recorded(archive, aeron, stream_id, 5)
    d = archive.recording(recording_id)
    assert d is not None
    term_id = d.initial_term_id + d.stop_position // d.term_buffer_length
    continuing = (f"{IPC}|init-term-id={d.initial_term_id}|term-id={term_id}"
                  f"|term-offset={d.stop_position % d.term_buffer_length}|session-id={d.session_id}")
    subscription_id = archive.extend_recording(recording_id, continuing, stream_id)

    def continuing_publication() -> Any:
        try:  # the first publication of that session may still be closing in the driver
            return aeron.add_exclusive_publication(continuing, stream_id)
        except AeronError as exc:
            if "clashing sessionId" not in str(exc):
                raise
            return None

    pub = wait_until(continuing_publication, what="the continuing publication")
    more = [pub.offer_until(b"more-%d" % i, timeout=10.0) for i in range(5)]
    wait_until(lambda: archive.recording_position(recording_id) == more[-1], what="the extension")
    archive.stop_recording(subscription_id)
    pub.close()
    assert archive.stop_position(recording_id) == more[-1] > positions[-1]
    replay = archive.replay(recording_id, IPC, next(_streams))
    assert drain(replay, 10) == [b"msg-%d" % i for i in range(5)] + [b"more-%d" % i for i in range(5)]
    replay.close()


def events_of(events: RecordingEvents, recording_id: int, timeout: float = 20.0) -> list[RecordingEvent]:
    """The events of one recording, up to and including its RecordingStopped."""
    got: list[RecordingEvent] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        event = events.receive(0.2)
        if event is not None and event.recording_id == recording_id:
            got.append(event)
            if isinstance(event, RecordingStopped):
                return got
    raise AssertionError(f"no RecordingStopped for recording {recording_id} within {timeout} s: {got}")


def test_recording_events_tell_started_progress_and_stopped(archive: AeronArchive, aeron: Aeron) -> None:
    stream_id = next(_streams)
    with RecordingEvents(aeron, *RECORDING_EVENTS) as events:
        wait_until(lambda: events.subscription.is_connected, what="the Archive's recording events publication")
        recording_id, positions = recorded(archive, aeron, stream_id, 50)
        got = events_of(events, recording_id)
    first, *middle, last = got
    assert isinstance(first, RecordingStarted), got
    assert first.stream_id == stream_id and first.start_position == 0
    assert first.channel.startswith("aeron:ipc") and first.source_identity == "aeron:ipc"
    assert first.session_id == archive.recording(recording_id).session_id  # type: ignore[union-attr]
    assert all(isinstance(e, RecordingProgress) for e in middle), middle
    progress = [e.position for e in middle if isinstance(e, RecordingProgress)]
    assert progress == sorted(progress) and all(p <= positions[-1] for p in progress)
    assert last == RecordingStopped(recording_id, 0, positions[-1])
    assert events.subscription.is_closed
    with pytest.raises(AeronError):
        events.take()


SEGMENT = 1 << 20  # the module Archive's segment file length
FRAME = 1024  # each message below fills one 1 KiB frame (32-byte header), so message i starts at i * FRAME


def recorded_frames(archive: AeronArchive, aeron: Aeron, stream_id: int, count: int,
                    channel: str = IPC, first: int = 0) -> tuple[int, int]:
    """Record messages ``first``..``first + count - 1`` of one frame each, stop; (recording id, stop position)."""
    subscription_id = archive.start_recording(IPC, stream_id)
    pub = aeron.add_exclusive_publication(channel, stream_id)
    last = 0
    for i in range(first, first + count):
        last = pub.offer_until(b"%08d" % i + bytes(FRAME - 32 - 8), timeout=10.0)
    recording_id = recording_of(archive, "aeron:ipc", stream_id, pub.session_id)
    wait_until(lambda: archive.recording_position(recording_id) == last, what="the recording to catch up")
    archive.stop_recording(subscription_id)
    pub.close()
    return recording_id, last


def first_replayed(archive: AeronArchive, recording_id: int) -> int:
    """The number of the first message a replay from the recording's start delivers."""
    replay = archive.replay(recording_id, IPC, next(_streams), length=FRAME)
    try:
        got = drain(replay, 1)
        assert got, f"recording {recording_id}: nothing replayed from {archive.start_position(recording_id)}"
        # the bounded replay ends its session, and with it its image: the segments are free to move
        wait_until(lambda: not replay.is_connected, what="the replay session to end")
        return int(got[0][:8])
    finally:
        replay.close()


def test_segments_detach_attach_delete_and_purge_change_where_a_replay_starts(
        archive: AeronArchive, aeron: Aeron) -> None:
    from aeron_py.archive import segment_file_base_position

    recording_id, stop = recorded_frames(archive, aeron, next(_streams), 3 * SEGMENT // FRAME + 10)
    assert segment_file_base_position(0, SEGMENT + 5 * FRAME, 65536, SEGMENT) == SEGMENT
    assert first_replayed(archive, recording_id) == 0
    archive.detach_segments(recording_id, SEGMENT)
    assert archive.start_position(recording_id) == SEGMENT
    assert first_replayed(archive, recording_id) == SEGMENT // FRAME
    assert archive.attach_segments(recording_id) == 1
    assert archive.start_position(recording_id) == 0 and first_replayed(archive, recording_id) == 0
    archive.detach_segments(recording_id, SEGMENT)
    assert archive.delete_detached_segments(recording_id) == 1
    assert archive.attach_segments(recording_id) == 0  # its file is gone
    assert archive.purge_segments(recording_id, 3 * SEGMENT) == 2
    assert archive.start_position(recording_id) == 3 * SEGMENT and archive.stop_position(recording_id) == stop
    assert first_replayed(archive, recording_id) == 3 * SEGMENT // FRAME
    with pytest.raises(AeronError):  # not a segment boundary: the Archive refuses, the session goes on
        archive.detach_segments(recording_id, 3 * SEGMENT + FRAME)
    assert archive.start_position(recording_id) == 3 * SEGMENT


def test_migrated_segments_join_the_front_of_the_recording_that_continues_them(
        archive: AeronArchive, aeron: Aeron) -> None:
    stream_id = next(_streams)
    src, src_stop = recorded_frames(archive, aeron, stream_id, SEGMENT // FRAME)  # exactly one segment
    assert src_stop == SEGMENT
    source = archive.recording(src)
    assert source is not None
    term_id = source.initial_term_id + SEGMENT // 65536
    continued = f"{IPC}|init-term-id={source.initial_term_id}|term-id={term_id}|term-offset=0"
    dst, dst_stop = recorded_frames(archive, aeron, stream_id, 10, channel=continued, first=SEGMENT // FRAME)
    assert archive.start_position(dst) == SEGMENT and first_replayed(archive, dst) == SEGMENT // FRAME
    assert archive.migrate_segments(src, dst) == 1
    assert archive.start_position(dst) == 0 and archive.stop_position(dst) == dst_stop
    assert first_replayed(archive, dst) == 0
    assert archive.start_position(src) == archive.stop_position(src)  # the source is left empty


def test_update_channel_renames_a_recording_in_the_catalog(archive: AeronArchive, aeron: Aeron) -> None:
    recording_id, _ = recorded(archive, aeron, next(_streams), 3)
    archive.update_channel(recording_id, "aeron:ipc?alias=renamed")
    descriptor = archive.recording(recording_id)
    assert descriptor is not None and descriptor.original_channel == "aeron:ipc?alias=renamed"
    with pytest.raises(ValueError, match="NUL"):
        archive.update_channel(recording_id, "aeron:ipc\0x")
    with pytest.raises(AeronError):  # the C client reads the Archive's RECORDING_UNKNOWN as unexpected
        archive.update_channel(10_000_000, "aeron:ipc")
    again = archive.recording(recording_id)  # the session goes on
    assert again is not None and again.original_channel == "aeron:ipc?alias=renamed"


def test_a_connection_with_its_own_control_stream_settings_works(aeron: Aeron, java_archive: JavaArchive) -> None:
    tuned = connect(aeron, java_archive, control_term_length=1 << 17, control_mtu=4096, control_sparse=False,
                    message_retry_attempts=5)
    assert isinstance(tuned, AeronArchive)
    with tuned:
        assert tuned.archive_id == java_archive.archive_id
        assert tuned.list_recordings(count=1) is not None
    for bad, says in [({"control_term_length": 100_000}, "power of two"),
                      ({"control_term_length": 1 << 31}, "control_term_length must be"),
                      ({"control_mtu": 1000}, "multiple of 32"), ({"control_mtu": 70_000}, "control_mtu must be"),
                      ({"control_sparse": 1}, "control_sparse must be"),
                      ({"message_retry_attempts": 0}, "message_retry_attempts must be")]:
        with pytest.raises(ValueError, match=says):
            AeronArchive.connect(aeron, control_channel=java_archive.control_channel, **bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["concurrent", "exclusive"])
def test_stop_recording_publication_stops_its_recording(archive: AeronArchive, aeron: Aeron, kind: str) -> None:
    stream_id = next(_streams)
    pub = archive.add_recorded_publication(IPC, stream_id, exclusive=kind == "exclusive")
    positions = publish(pub, 10, b"pub")
    recording_id = recording_of(archive, "ipc", stream_id, pub.session_id)
    wait_until(lambda: archive.recording_position(recording_id) == positions[-1], what="the recording to catch up")
    archive.stop_recording_publication(pub)
    wait_until(lambda: archive.recording_position(recording_id) == -1, what="the recording to stop")
    assert archive.stop_position(recording_id) == positions[-1]
    assert not pub.is_closed  # the publication itself lives on
    with pytest.raises(UnknownSubscriptionError):
        archive.stop_recording_publication(pub)  # nothing records it any more
    with pytest.raises(TypeError, match="must be an aeron_py Publication"):
        archive.stop_recording_publication("aeron:ipc")  # type: ignore[arg-type]
    pub.close()


@pytest.mark.parametrize("idle_strategy", ["sleeping:1ms", "yield", "backoff", "noop"])
def test_an_idle_strategy_of_aerons_waits_for_the_answers(aeron: Aeron, java_archive: JavaArchive,
                                                          idle_strategy: str) -> None:
    with connect(aeron, java_archive, idle_strategy=idle_strategy) as tuned:  # type: ignore[attr-defined]
        assert tuned.archive_id == java_archive.archive_id
        assert isinstance(tuned.list_recordings(), list)


def test_idle_strategy_names_and_arguments_are_checked(aeron: Aeron, java_archive: JavaArchive) -> None:
    with pytest.raises(ValueError, match="idle_strategy must be one of sleeping, yield"):
        AeronArchive.connect(aeron, control_channel=java_archive.control_channel, idle_strategy="busy")
    with pytest.raises(TypeError, match="idle_strategy must be a str"):
        AeronArchive.connect(aeron, control_channel=java_archive.control_channel, idle_strategy=3)  # type: ignore[arg-type]
    with pytest.raises(AeronError, match="aeron_archive_context_set"):
        AeronArchive.connect(aeron, control_channel=java_archive.control_channel, idle_strategy="sleeping:never")
