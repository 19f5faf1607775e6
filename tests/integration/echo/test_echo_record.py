"""``echo_server --record``: the server's telemetry recorded by the real Java Archive, and written
back by ``python -m aeron_py.telemetry.replay`` as telemetry files equal to the server's own."""
from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from aeron_py import Aeron, MediaDriver
from aeron_py.echo.client import EchoClient
from aeron_py.telemetry import read_events
from aeron_py.telemetry import replay as telemetry_replay

from conftest import free_udp_port
from echo_harness import HOST, PortBlocks, make_server, wait_until

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "archive"))
from archive_harness import connect, running_archive  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.java, pytest.mark.timeout(240)]
# the top of test_echo_server_e2e.py's range, which takes about 600 ports from 21000
BLOCKS = PortBlocks(23600, 24000)


def test_recorded_telemetry_replays_into_the_same_events_and_a_window_selects_by_time(tmp_path: Path) -> None:
    events_dir, out_all, out_window = tmp_path / "events", tmp_path / "replayed", tmp_path / "window"
    record_port = free_udp_port()
    with MediaDriver(publication_linger_timeout_ns=0) as archive_driver, \
            running_archive(archive_driver.dir, tmp_path / "archive") as java:
        with Aeron(driver=archive_driver) as aeron:
            connect(aeron, java).close()  # the Archive answers: the server's connect will not wait on the JVM
        ports = BLOCKS.take()
        server = make_server(ports, options={
            "events": str(events_dir), "snapshot_interval": 0.5, "record": java.control_channel,
            "record_channel": f"aeron:udp?endpoint=127.0.0.1:{record_port}|term-length=1m", "record_stream": 9101})
        recording = server._lifecycle.recording
        try:
            assert recording is not None
            for i in range(3):
                result = EchoClient(HOST, ports.port, ports.control, count=1, message=b"hello %d" % i,
                                    timeout=10.0).run()
                assert result.ok, result
        finally:
            server.close()  # the telemetry's last lines are offered before the recording closes
        assert recording.dropped == 0
        written = list(read_events(events_dir))
        control = ["--control", java.control_channel, "--stream", "9101"]
        assert telemetry_replay.main([*control, "--out", str(out_all)]) == 0
        replayed = list(read_events(out_all))
        assert replayed == written  # every event, in order, as the server wrote it
        hellos = [e for e in written if e["kind"] == "hello"]
        assert len(hellos) == 3
        since = hellos[1]["ts"]
        assert telemetry_replay.main([*control, "--out", str(out_window), "--since", str(since)]) == 0
        assert list(read_events(out_window)) == [e for e in written if e["ts"] >= since]


def test_record_needs_events_and_an_archive_that_answers(tmp_path: Path) -> None:
    from aeron_py.archive import ArchiveTimeoutError
    from aeron_py.duologue.server import ServerOptions

    with pytest.raises(ValueError, match="needs events"):
        ServerOptions(record="aeron:udp?endpoint=127.0.0.1:1")
    ports = BLOCKS.take()
    server = make_server(ports, start=False, options={
        "events": str(tmp_path / "events"), "record": f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"})
    started = time.monotonic()
    with pytest.raises(ArchiveTimeoutError, match="cannot connect to the Archive"):
        server.start(timeout=30.0)
    assert time.monotonic() - started < 30.0


def test_the_recorded_telemetry_is_bounded_on_the_archive(tmp_path: Path) -> None:
    from aeron_py.duologue.server.telemetry_recording import TelemetryRecording

    record_port = free_udp_port()
    with MediaDriver(publication_linger_timeout_ns=0) as archive_driver, \
            running_archive(archive_driver.dir, tmp_path / "archive") as java, \
            MediaDriver(publication_linger_timeout_ns=0) as server_driver:
        with Aeron(driver=archive_driver) as aeron:
            connect(aeron, java).close()  # the Archive answers
        recording = TelemetryRecording(server_driver, java.control_channel, stream_id=9102, max_bytes=1 << 20, keep=2,
                                       channel=f"aeron:udp?endpoint=127.0.0.1:{record_port}|term-length=1m")
        line = b'{"ts":1.0,"kind":"hello","pad":"' + b"x" * 200 + b'"}\n'
        deadline = time.monotonic() + 60.0
        while recording.rotations < 4 and time.monotonic() < deadline:
            recording.offer(line)
            if recording.dropped:  # back pressure: let the Archive catch up (bounded by the deadline)
                time.sleep(0.001)
        recording.close()
        assert recording.rotations >= 4
        with Aeron(driver=archive_driver) as aeron:
            archive = connect(aeron, java)
            kept = archive.list_recordings(channel_fragment="aeron:", stream_id=9102)
            archive.close()
        # keep=2: at each rotation the stopped recordings beyond the newest one are purged
        assert 2 <= len(kept) <= 3, [(d.recording_id, d.stop_position) for d in kept]
        assert all(d.stop_position - d.start_position < (1 << 20) + 4096 for d in kept)
