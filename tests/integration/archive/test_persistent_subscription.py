"""Persistent subscriptions on the real Java Archive and our C driver: replay from the start of
a live stream's recording, join the live stream, every message once and in order; misuse."""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from aeron_py import Aeron, MediaDriver
from aeron_py.archive import (FROM_LIVE, FROM_START, AeronArchive, ArchiveClosedError, PersistentState,
                              PersistentSubscription)
from aeron_py.errors import ClientClosedError

from archive_harness import JavaArchive, connect, running_archive
from conftest import free_udp_port
from test_archive import publish, recording_of

pytestmark = [pytest.mark.integration, pytest.mark.java, pytest.mark.timeout(240)]
STREAM, REPLAY_STREAM = 4801, 4802


@pytest.fixture
def setup(tmp_path: Path) -> Iterator[tuple[Aeron, AeronArchive, JavaArchive]]:
    with MediaDriver(publication_linger_timeout_ns=0) as driver, Aeron(driver=driver) as aeron, \
            running_archive(driver.dir, tmp_path / "archive") as java:
        archive = connect(aeron, java, message_timeout=5.0)
        assert isinstance(archive, AeronArchive)
        with archive:
            yield aeron, archive, java


def recorded_live(aeron: Aeron, archive: AeronArchive) -> tuple[Any, str, int]:
    """A recorded live UDP publication (the Archive's spy lets it publish before anyone
    subscribes): (publication, live channel, recording id)."""
    live = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}|term-length=65536"
    archive.start_recording(live, STREAM)
    pub = aeron.add_exclusive_publication(live + "|ssc=true", STREAM)
    return pub, live, recording_of(archive, "127.0.0.1", STREAM, pub.session_id)


def persistent(aeron: Aeron, java: JavaArchive, recording_id: int, live: str, **options: Any) -> PersistentSubscription:
    return PersistentSubscription.create(
        aeron, recording_id=recording_id, live_channel=live, live_stream_id=STREAM,
        replay_channel="aeron:udp?endpoint=127.0.0.1:0", replay_stream_id=REPLAY_STREAM,
        control_channel=java.control_channel, response_channel="aeron:udp?endpoint=127.0.0.1:0", **options)


def poll_until(sub: PersistentSubscription, got: list[bytes], done: Callable[[], bool],
               timeout: float = 30.0, tick: Callable[[], None] | None = None) -> None:
    deadline = time.monotonic() + timeout
    while not done() and time.monotonic() < deadline:
        if tick is not None:
            tick()
        if sub.poll(lambda data, header: got.append(bytes(data)), 10) == 0:
            time.sleep(0.001)
        assert not sub.has_failed, sub.failure()


def test_from_the_start_it_replays_the_past_then_follows_the_live_stream(
        setup: tuple[Aeron, AeronArchive, JavaArchive]) -> None:
    aeron, archive, java = setup
    pub, live, recording_id = recorded_live(aeron, archive)
    publish(pub, 100, b"m")
    joined: list[bool] = []
    sub = persistent(aeron, java, recording_id, live, on_live_joined=lambda: joined.append(True))
    assert len(set(sub.counter_ids())) == 4 and min(sub.counter_ids()) >= 0
    before = sub.counters()
    assert before.state is PersistentState.AWAIT_ARCHIVE_CONNECTION and before.live_joined == 0
    got: list[bytes] = []
    sent = [100]

    def keep_publishing() -> None:
        if sent[0] < 300:
            pub.offer_until(b"m-%d" % sent[0], timeout=10.0)
            sent[0] += 1

    poll_until(sub, got, lambda: sub.is_live and len(got) == sent[0] and sent[0] >= 300, tick=keep_publishing)
    assert got == [b"m-%d" % i for i in range(sent[0])]  # every message once, in order, across the join
    assert sub.is_live and not sub.is_replaying and joined == [True]
    live_now = sub.counters()
    assert live_now.state is PersistentState.LIVE and (live_now.live_joined, live_now.live_left) == (1, 0)
    assert live_now.join_difference != -2**63  # set when it switched
    publish(pub, 3, b"after")
    poll_until(sub, got, lambda: len(got) == sent[0] + 3, timeout=10.0)
    assert got[-3:] == [b"after-%d" % i for i in range(3)]
    sub.close()
    assert sub.is_closed
    with pytest.raises(ArchiveClosedError):
        sub.poll(lambda data, header: None)
    with pytest.raises(ArchiveClosedError):
        sub.counters()


def test_from_live_it_skips_the_past(setup: tuple[Aeron, AeronArchive, JavaArchive]) -> None:
    aeron, archive, java = setup
    pub, live, recording_id = recorded_live(aeron, archive)
    publish(pub, 20, b"old")
    with persistent(aeron, java, recording_id, live, start_position=FROM_LIVE) as sub:
        got: list[bytes] = []
        poll_until(sub, got, lambda: sub.is_live, timeout=20.0)
        publish(pub, 5, b"new")
        poll_until(sub, got, lambda: len(got) >= 5, timeout=10.0)
        assert got == [b"new-%d" % i for i in range(5)]


def test_a_raising_handler_stops_the_poll_and_loses_nothing_after_it(
        setup: tuple[Aeron, AeronArchive, JavaArchive]) -> None:
    aeron, archive, java = setup
    pub, live, recording_id = recorded_live(aeron, archive)
    publish(pub, 30, b"m")
    with persistent(aeron, java, recording_id, live) as sub:
        got: list[bytes] = []

        def handler(data: bytes, header: object) -> None:
            got.append(bytes(data))
            if data == b"m-9":
                raise KeyError("boom")

        deadline = time.monotonic() + 30.0
        raised = 0
        while len(got) < 30 and time.monotonic() < deadline:
            try:
                sub.poll(handler, 10)
            except KeyError:
                raised += 1
        assert raised == 1 and got == [b"m-%d" % i for i in range(30)]


def test_close_and_client_close_from_the_handler_wait_for_the_poll(tmp_path: Path) -> None:
    with MediaDriver(publication_linger_timeout_ns=0) as driver, \
            running_archive(driver.dir, tmp_path / "archive") as java:
        client = Aeron(driver=driver)
        archive = connect(client, java, message_timeout=5.0)
        assert isinstance(archive, AeronArchive)
        pub, live, recording_id = recorded_live(client, archive)
        publish(pub, 20, b"m")
        sub = persistent(client, java, recording_id, live)
        seen: list[bytes] = []

        def close_inside(data: bytes, header: object) -> None:
            seen.append(bytes(data))
            sub.close()
            assert sub.is_closed

        deadline = time.monotonic() + 30.0
        while not seen and time.monotonic() < deadline:
            sub.poll(close_inside, 10)
        assert seen and sub.is_closed
        with pytest.raises(ArchiveClosedError):
            sub.poll(close_inside, 10)

        other = persistent(client, java, recording_id, live)
        def close_client(data: bytes, header: object) -> None:
            client.close()

        deadline = time.monotonic() + 30.0
        while not client.is_closed and time.monotonic() < deadline:
            other.poll(close_client, 10)
        assert client.is_closed and other.is_closed
        with pytest.raises(ClientClosedError):
            other.poll(close_client, 10)


def test_reentrant_poll_and_bad_arguments_raise(setup: tuple[Aeron, AeronArchive, JavaArchive]) -> None:
    aeron, archive, java = setup
    pub, live, recording_id = recorded_live(aeron, archive)
    publish(pub, 5, b"m")
    with persistent(aeron, java, recording_id, live) as sub:
        errors: list[BaseException] = []

        def reenter(data: bytes, header: object) -> None:
            try:
                sub.poll(lambda d, h: None, 1)
            except RuntimeError as exc:
                errors.append(exc)

        deadline = time.monotonic() + 30.0
        while not errors and time.monotonic() < deadline:
            sub.poll(reenter, 10)
        assert errors and "re-entrant" in str(errors[0])
        with pytest.raises(TypeError):
            sub.poll("not callable", 10)  # type: ignore[arg-type]
        with pytest.raises(ValueError):
            sub.poll(lambda d, h: None, -1)
    with pytest.raises(ValueError, match="start_position"):
        persistent(aeron, java, recording_id, live, start_position=-7)
    with pytest.raises(ValueError, match="live_channel"):
        PersistentSubscription.create(aeron, recording_id=recording_id, live_channel="", live_stream_id=1,
                                      replay_channel="aeron:udp?endpoint=127.0.0.1:0", replay_stream_id=2)


def test_a_header_kept_past_its_handler_call_is_dead(setup: tuple[Aeron, AeronArchive, JavaArchive]) -> None:
    aeron, archive, java = setup
    pub, live, recording_id = recorded_live(aeron, archive)
    publish(pub, 3, b"m")
    with persistent(aeron, java, recording_id, live) as sub:
        kept: list[Any] = []
        positions: list[int] = []

        def keep(data: bytes, header: Any) -> None:
            positions.append(header.position)
            kept.append(header)

        deadline = time.monotonic() + 30.0
        while len(kept) < 3 and time.monotonic() < deadline:
            sub.poll(keep, 10)
        assert len(kept) == 3 and positions == sorted(positions) and positions[0] > 0
        with pytest.raises(ValueError):
            kept[0].position
    assert FROM_START == -1


def test_an_unknown_recording_makes_it_fail_with_the_reason(setup: tuple[Aeron, AeronArchive, JavaArchive]) -> None:
    aeron, _, java = setup
    errors: list[tuple[int, str]] = []
    with persistent(aeron, java, 987_654, f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}",
                    on_error=lambda code, message: errors.append((code, message))) as sub:
        deadline = time.monotonic() + 30.0
        while not sub.has_failed and time.monotonic() < deadline:
            if sub.poll(lambda data, header: None, 10) == 0:
                time.sleep(0.001)
        assert sub.has_failed and not sub.is_live
        assert sub.counters().state is PersistentState.FAILED
        reason = sub.failure()
        assert reason is not None and "987654" in reason[1], reason
        assert errors and errors[-1][1] == reason[1]
