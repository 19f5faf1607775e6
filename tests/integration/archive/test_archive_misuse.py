"""aeron_py.archive misused, or left by its Archive: every path ends in a Python exception or a
documented safe behaviour, bounded, never a crash or a hang (real Java Archive, C driver)."""
from __future__ import annotations

import gc
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from aeron_py import Aeron, MediaDriver
from aeron_py.archive import (FOLLOW, AeronArchive, ArchiveClosedError, ArchiveTimeoutError,
                              UnknownRecordingError)
from aeron_py.errors import ClientClosedError

from archive_harness import connect, running_archive
from conftest import free_udp_port
from test_archive import IPC, drain, publish, recording_of

pytestmark = [pytest.mark.integration, pytest.mark.java, pytest.mark.timeout(240)]


@pytest.fixture
def driver() -> Iterator[MediaDriver]:
    with MediaDriver(publication_linger_timeout_ns=0) as d:
        yield d


@pytest.fixture
def aeron(driver: MediaDriver) -> Iterator[Aeron]:
    with Aeron(driver=driver) as client:
        yield client


def test_connect_with_no_archive_there_times_out_within_the_message_timeout(aeron: Aeron) -> None:
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    started = time.monotonic()
    with pytest.raises(ArchiveTimeoutError, match="cannot connect to the Archive at") as caught:
        AeronArchive.connect(aeron, control_channel=channel, message_timeout=0.5)
    assert time.monotonic() - started < 5.0
    assert channel in str(caught.value)


def test_bad_settings_are_refused_before_anything_is_sent(aeron: Aeron) -> None:
    with pytest.raises(ValueError, match="message_timeout"):
        AeronArchive.connect(aeron, message_timeout=0)
    with pytest.raises(ValueError, match="control_channel must not be empty"):
        AeronArchive.connect(aeron, control_channel="")
    with pytest.raises(ValueError, match="NUL"):
        AeronArchive.connect(aeron, control_channel="aeron:udp?endpoint=127.0.0.1:1\0", message_timeout=0.5)


def test_an_invoker_mode_client_is_refused_with_the_reason(driver: MediaDriver) -> None:
    with Aeron(driver=driver, use_conductor_agent_invoker=True) as client:
        with pytest.raises(ValueError, match="own conductor thread"):
            AeronArchive.connect(client, message_timeout=0.5)


def test_a_closed_client_is_refused(driver: MediaDriver) -> None:
    client = Aeron(driver=driver)
    client.close()
    with pytest.raises(ArchiveClosedError):
        AeronArchive.connect(client, message_timeout=0.5)


def test_calls_after_close_raise_and_close_is_idempotent(aeron: Aeron, driver: MediaDriver, tmp_path: Path) -> None:
    with running_archive(driver.dir, tmp_path / "archive") as java:
        archive = connect(aeron, java)
        assert isinstance(archive, AeronArchive)
        with archive:
            assert archive.archive_id == java.archive_id
        assert archive.is_closed
        archive.close()
        for call in (lambda: archive.archive_id, lambda: archive.list_recordings(),
                     lambda: archive.start_recording(IPC, 1), lambda: archive.replay(0, IPC, 2),
                     lambda: archive.detach_segments(0, 0), lambda: archive.delete_detached_segments(0),
                     lambda: archive.purge_segments(0, 0), lambda: archive.attach_segments(0),
                     lambda: archive.migrate_segments(0, 1), lambda: archive.update_channel(0, IPC),
                     lambda: archive.try_stop_recording_channel(IPC, 1), lambda: archive.recording_of_counter(0),
                     lambda: archive.counter_source_identity(0), lambda: archive.counter_is_active(0, 0),
                     lambda: archive.replicate(0, java.control_channel), lambda: archive.stop_replication(0),
                     lambda: archive.try_stop_replication(0), lambda: archive.poll_error_response(),
                     lambda: archive.check_error_response()):
            with pytest.raises(ArchiveClosedError, match="closed"):
                call()


def test_closing_the_client_closes_the_archive_connection_first(driver: MediaDriver, tmp_path: Path) -> None:
    with running_archive(driver.dir, tmp_path / "archive") as java:
        client = Aeron(driver=driver)
        archive = connect(client, java)
        assert isinstance(archive, AeronArchive)
        client.close()
        assert archive.is_closed
        with pytest.raises(ClientClosedError):
            archive.list_recordings()
        with pytest.raises(ClientClosedError):  # its counters went with the client: never read
            archive.recording_of_counter(0)
        archive.close()  # still safe


def test_an_archive_dropped_without_close_is_closed_by_the_collector(aeron: Aeron, driver: MediaDriver,
                                                                       tmp_path: Path) -> None:
    with running_archive(driver.dir, tmp_path / "archive") as java:
        for _ in range(3):
            archive = connect(aeron, java)
            assert isinstance(archive, AeronArchive)
            assert archive.list_recordings() == []
            del archive
            gc.collect()
        again = connect(aeron, java)
        assert isinstance(again, AeronArchive)
        assert again.archive_id == java.archive_id
        again.close()


def test_calls_from_several_threads_take_turns(aeron: Aeron, driver: MediaDriver, tmp_path: Path) -> None:
    with running_archive(driver.dir, tmp_path / "archive") as java:
        archive = connect(aeron, java, message_timeout=5.0)
        assert isinstance(archive, AeronArchive)
        errors: list[BaseException] = []

        def worker(stream_id: int) -> None:
            try:
                for _ in range(20):
                    subscription_id = archive.start_recording(IPC, stream_id)
                    assert archive.list_recording_subscriptions("ipc", stream_id)[0].subscription_id == subscription_id
                    archive.stop_recording(subscription_id)
            except BaseException as exc:  # reported below
                errors.append(exc)

        threads = [threading.Thread(target=worker, args=(4400 + i,)) for i in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60.0)
        assert not any(t.is_alive() for t in threads) and errors == []
        archive.close()


def test_the_archive_going_away_mid_replay_gives_timeouts_not_hangs(aeron: Aeron, driver: MediaDriver,
                                                                     tmp_path: Path) -> None:
    with running_archive(driver.dir, tmp_path / "archive") as java:
        archive = connect(aeron, java, message_timeout=1.0)
        assert isinstance(archive, AeronArchive)
        stream_id = 4501
        archive.start_recording(IPC, stream_id)
        pub = aeron.add_exclusive_publication(IPC, stream_id)
        publish(pub, 100)
        recording_id = recording_of(archive, "ipc", stream_id, pub.session_id)
        replay = archive.replay(recording_id, IPC, 4502, length=FOLLOW)
        assert len(drain(replay, 100)) == 100
        java.process.stop(signal.SIGKILL)  # gone, without a word
        started = time.monotonic()
        with pytest.raises(ArchiveTimeoutError):
            archive.list_recordings()
        with pytest.raises(ArchiveTimeoutError):
            archive.stop_position(recording_id)
        assert time.monotonic() - started < 10.0  # two requests, one second each, and some slack
        assert drain(replay, 1, timeout=0.2) == []  # nothing more, no crash
        replay.close()
        archive.close()
        pub.close()
    assert not aeron.is_closed


def test_closing_the_client_while_a_call_waits_on_a_dead_archive_returns(driver: MediaDriver,
                                                                          tmp_path: Path) -> None:
    with running_archive(driver.dir, tmp_path / "archive") as java:
        client = Aeron(driver=driver)
        archive = connect(client, java, message_timeout=2.0)
        assert isinstance(archive, AeronArchive)
        java.process.stop(signal.SIGKILL)
        outcome: list[BaseException] = []

        def call() -> None:
            try:
                archive.list_recordings()
            except BaseException as exc:
                outcome.append(exc)

        caller = threading.Thread(target=call)
        caller.start()
        time.sleep(0.2)  # not synchronisation: either order ends the same way, bounded
        started = time.monotonic()
        client.close()  # waits for the call in progress (bounded by its message timeout)
        caller.join(10.0)
        assert not caller.is_alive() and time.monotonic() - started < 10.0
        assert len(outcome) == 1 and isinstance(outcome[0], (ArchiveTimeoutError, ArchiveClosedError))
        assert archive.is_closed


def test_an_unknown_recording_in_replay_is_typed(aeron: Aeron, driver: MediaDriver, tmp_path: Path) -> None:
    with running_archive(driver.dir, tmp_path / "archive") as java:
        archive = connect(aeron, java)
        assert isinstance(archive, AeronArchive)
        with pytest.raises(UnknownRecordingError):
            archive.replay(424242, IPC, 4601)
        with pytest.raises(UnknownRecordingError):
            archive.start_replay(424242, IPC, 4601)
        archive.close()
