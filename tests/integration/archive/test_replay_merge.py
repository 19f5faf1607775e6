"""Replay-merge on the real Java Archive and our C driver: a late subscriber replays a live
stream's recording and merges into the live stream with no gap and no duplicate."""
from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from aeron_py import Aeron, MediaDriver
from aeron_py.archive import AeronArchive, ArchiveClosedError, ReplayMerge, UnknownRecordingError

from archive_harness import connect, running_archive
from conftest import free_udp_port
from test_archive import publish, recording_of

pytestmark = [pytest.mark.integration, pytest.mark.java, pytest.mark.timeout(240)]
STREAM = 4701


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Aeron, AeronArchive]]:
    with MediaDriver(publication_linger_timeout_ns=0) as driver, Aeron(driver=driver) as aeron, \
            running_archive(driver.dir, tmp_path / "archive") as java:
        archive = connect(aeron, java, message_timeout=5.0)
        assert isinstance(archive, AeronArchive)
        with archive:
            yield aeron, archive


def live_publication(aeron: Aeron, archive: AeronArchive) -> tuple[object, int, int]:
    """A recorded live publication with a dynamic MDC control endpoint: (pub, control port, recording id)."""
    control = free_udp_port()
    # ssc: the Archive's local spy counts as a subscriber, so offers go through before anyone joins
    channel = f"aeron:udp?control=127.0.0.1:{control}|control-mode=dynamic|term-length=65536|ssc=true"
    archive.start_recording(channel, STREAM)
    pub = aeron.add_exclusive_publication(channel, STREAM)
    return pub, control, recording_of(archive, "control=127.0.0.1", STREAM, pub.session_id)  # type: ignore[attr-defined]


def test_a_late_subscriber_gets_the_recorded_past_then_the_live_stream_without_a_gap(
        setup: tuple[Aeron, AeronArchive]) -> None:
    aeron, archive = setup
    pub, control, recording_id = live_publication(aeron, archive)
    publish(pub, 200, b"m")
    got: list[bytes] = []
    with archive.replay_merge(recording_id,
                              live_destination=f"aeron:udp?endpoint=127.0.0.1:0|control=127.0.0.1:{control}",
                              replay_destination="aeron:udp?endpoint=127.0.0.1:0") as merge:
        assert isinstance(merge, ReplayMerge)
        sent = 200
        deadline = time.monotonic() + 30.0
        while not (merge.is_merged and len(got) == sent) and time.monotonic() < deadline:
            if sent < 400:  # the live stream keeps going while the replay catches up
                pub.offer_until(b"m-%d" % sent, timeout=10.0)  # type: ignore[attr-defined]
                sent += 1
            if merge.poll(lambda data, header: got.append(bytes(data)), 10) == 0:
                time.sleep(0.001)
            assert not merge.has_failed
        assert merge.is_merged and merge.is_live_added
        expected = [b"m-%d" % i for i in range(sent)]
        assert got == expected  # every message once, in order, across the merge
        publish(pub, 5, b"after")  # live on the same image after the merge
        deadline = time.monotonic() + 10.0
        while len(got) < len(expected) + 5 and time.monotonic() < deadline:
            merge.poll(lambda data, header: got.append(bytes(data)), 10)
        assert got[len(expected):] == [b"after-%d" % i for i in range(5)]
    assert merge.is_closed
    pub.close()  # type: ignore[attr-defined]


def test_replay_merge_of_an_unknown_recording_is_refused(setup: tuple[Aeron, AeronArchive]) -> None:
    _, archive = setup
    with pytest.raises(UnknownRecordingError):
        archive.replay_merge(31337, live_destination="aeron:udp?endpoint=127.0.0.1:0|control=127.0.0.1:1")


def test_closing_the_archive_closes_its_merges_first(setup: tuple[Aeron, AeronArchive]) -> None:
    aeron, archive = setup
    pub, control, recording_id = live_publication(aeron, archive)
    publish(pub, 10, b"m")
    merge = archive.replay_merge(recording_id,
                                 live_destination=f"aeron:udp?endpoint=127.0.0.1:0|control=127.0.0.1:{control}",
                                 replay_destination="aeron:udp?endpoint=127.0.0.1:0")
    merge.poll(lambda data, header: None, 10)
    archive.close()
    assert merge.is_closed
    with pytest.raises(ArchiveClosedError):
        merge.poll(lambda data, header: None, 10)
    merge.close()  # still safe
    del merge


def test_a_merge_dropped_without_close_and_a_client_closed_under_one_are_safe(tmp_path: Path) -> None:
    with MediaDriver(publication_linger_timeout_ns=0) as driver, \
            running_archive(driver.dir, tmp_path / "archive") as java:
        client = Aeron(driver=driver)
        archive = connect(client, java, message_timeout=5.0)
        assert isinstance(archive, AeronArchive)
        pub, control, recording_id = live_publication(client, archive)
        live = f"aeron:udp?endpoint=127.0.0.1:0|control=127.0.0.1:{control}"
        dropped = archive.replay_merge(recording_id, live_destination=live,
                                       replay_destination="aeron:udp?endpoint=127.0.0.1:0")
        dropped.poll(lambda data, header: None, 10)
        del dropped  # collected: closed by its destructor
        kept = archive.replay_merge(recording_id, live_destination=live,
                                    replay_destination="aeron:udp?endpoint=127.0.0.1:0")
        kept.poll(lambda data, header: None, 10)
        client.close()  # closes the archive, which closes the merge first
        assert kept.is_closed and archive.is_closed
        with pytest.raises(ArchiveClosedError):
            kept.poll(lambda data, header: None, 10)
