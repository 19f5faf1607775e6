"""Driver introspection through the CnC file: counters, loss report, error log, CLI."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import aeron_py
from aeron_py import DriverStat
from conftest import free_udp_port, wait_until
from processes import run_process

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


def test_counters_report_real_traffic(driver, aeron, udp_port):
    channel = f"aeron:udp?endpoint=127.0.0.1:{udp_port}"
    sub = aeron.add_subscription(channel, 20)
    pub = aeron.add_publication(channel, 20)
    wait_until(lambda: pub.is_connected, 5, "connect")
    pub.offer_until(b"x" * 500, timeout=5)
    wait_until(lambda: sub.poll(lambda d, h: None, 10), 5, "delivery")
    with driver.stat() as stat:
        system = stat.system_counters()
        assert system["Bytes sent"] >= 500 and system["Bytes received"] >= 500
        labels = [c.label for c in stat.counters()]
        assert any(label.startswith("pub-pos") for label in labels)
        assert stat.heartbeat_age() < 5
        assert stat.constants()["pid"] > 0
    assert {c.label for c in aeron.counters()} >= {"Bytes sent", "Bytes received"}


def test_error_log_records_driver_errors(driver, aeron):
    with pytest.raises(aeron_py.AeronError):
        aeron.add_publication("aeron:udp?endpoint=no-such-host.invalid:4000", 1)
    with driver.stat() as stat:
        errors = wait_until(stat.errors, 5, "an error log entry")
        assert any("unknown host" in e.message for e in errors)
        assert errors[0].observation_count >= 1 and errors[0].last_observation_ms >= errors[0].first_observation_ms


LOSS_SCRIPT = r"""
import json, sys, time
from aeron_py import Aeron, MediaDriver
port = int(sys.argv[1])
with MediaDriver() as driver, Aeron(driver=driver) as aeron:
    channel = f"aeron:udp?endpoint=127.0.0.1:{port}"
    sub = aeron.add_subscription(channel, 21)
    pub = aeron.add_publication(channel, 21)
    deadline = time.monotonic() + 10
    while not pub.is_connected and time.monotonic() < deadline:
        time.sleep(0.001)
    received = []
    for i in range(200):
        pub.offer_until(i.to_bytes(4, "little"), timeout=5)
        sub.poll(lambda d, h: received.append(d), 10)
        time.sleep(0.001)  # pacing: one datagram per message, so the interceptor has frames to drop
    deadline = time.monotonic() + 20
    while len(received) < 200 and time.monotonic() < deadline:
        sub.poll(lambda d, h: received.append(d), 100)
    with driver.stat() as stat:
        loss = [e.__dict__ for e in stat.loss_report()]
        naks = stat.system_counters()["NAKs sent"]
    print(json.dumps({"received": [int.from_bytes(d, "little") for d in received], "loss": loss, "naks": naks}))
"""


def test_loss_report_records_loss(tmp_path):
    # Aeron's own loss interceptor drops 20 % of received data frames. It is configured by
    # process-wide environment variables read once, hence a separate process.
    env = dict(os.environ, AERON_UDP_CHANNEL_INCOMING_INTERCEPTORS="loss",
               AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_LOSS_ARGS="rate=0.2|seed=7|recv-msg-mask=0x2")
    out = run_process([sys.executable, "-c", LOSS_SCRIPT, str(free_udp_port())], env=env, cwd=tmp_path,
                      capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["received"] == list(range(200))  # reliable: NAKs and retransmits repaired every gap
    assert result["naks"] > 0
    [entry] = result["loss"]
    assert entry["total_bytes_lost"] > 0 and entry["stream_id"] == 21
    assert entry["source"].startswith("127.0.0.1:")


def test_stat_cli_prints_json(driver, tmp_path):
    out = subprocess.run([sys.executable, "-m", "aeron_py.stat", "--dir", driver.dir, "--json"],
                         capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    snap = json.loads(out.stdout)
    assert snap["dir"] == driver.dir and any(c["label"] == "Bytes sent" for c in snap["counters"])


def test_stat_cli_missing_dir_is_a_clear_error(tmp_path):
    out = subprocess.run([sys.executable, "-m", "aeron_py.stat", "--dir", str(tmp_path / "nope")],
                         capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert out.returncode == 2 and "no Aeron driver directory" in out.stderr


def test_driver_stat_missing_dir(tmp_path):
    with pytest.raises(FileNotFoundError):
        DriverStat(tmp_path / "nope")


def _stream(stat: DriverStat, stream_id: int) -> "aeron_py.stat.backlog.StreamBacklog":
    [stream] = [b for b in stat.backlog() if b.key.stream_id == stream_id]
    return stream


def _unread(stat: DriverStat, stream_id: int) -> int:
    """The one subscriber's backlog on ``stream_id`` (-1 while unknown)."""
    backlogs = list(_stream(stat, stream_id).subscriber_backlogs().values())
    return backlogs[0] if len(backlogs) == 1 and backlogs[0] is not None else -1


def test_backlog_shows_where_each_streams_bytes_wait(driver, aeron, udp_port):
    channel = f"aeron:udp?endpoint=127.0.0.1:{udp_port}"
    sub = aeron.add_subscription(channel, 22)
    pub = aeron.add_publication(channel, 22)
    wait_until(lambda: pub.is_connected, 5, "connect")
    for _ in range(10):
        pub.offer_until(b"x" * 1000, timeout=5)
    with driver.stat() as stat:
        # one driver holds both sides: publisher, sender, receiver and the unread subscriber
        wait_until(lambda: _unread(stat, 22) >= 10 * 1000, 5, "the receiver to have every byte the subscriber has not read")
        stream = _stream(stat, 22)
        assert stream.key.session_id == pub.session_id and stream.key.channel.startswith("aeron:udp")
        assert stream.publisher is not None and stream.publisher.remaining_window > 0
        assert stream.sender is not None and stream.receiver is not None
        wait_until(lambda: _stream(stat, 22).sender_backlog == 0, 5, "the sender to have sent everything")
        read: list[bytes] = []
        wait_until(lambda: sub.poll(lambda d, h: read.append(d), 100) >= 0 and len(read) == 10, 5, "reading")
        wait_until(lambda: _unread(stat, 22) == 0, 5, "a drained subscriber")


def test_backlog_of_an_ipc_stream_counts_to_the_publisher(driver, aeron):
    sub = aeron.add_subscription("aeron:ipc", 23)
    pub = aeron.add_publication("aeron:ipc", 23)
    wait_until(lambda: pub.is_connected, 5, "connect")
    pub.offer_until(b"y" * 4000, timeout=5)
    with driver.stat() as stat:
        # the publisher's position counter is sampled by the driver's conductor: it follows shortly
        wait_until(lambda: _unread(stat, 23) >= 4000, 5, "the sampled position")
        stream = _stream(stat, 23)
        assert stream.sender is None and stream.receiver is None
        [registration] = stream.subscribers
        wait_until(lambda: sub.poll(lambda d, h: None, 10) >= 1, 5, "reading")
        assert _stream(stat, 23).subscriber_backlogs()[registration] == 0


def test_stat_cli_prints_the_backlog(driver, aeron, tmp_path):
    pub = aeron.add_publication("aeron:ipc", 24)
    sub = aeron.add_subscription("aeron:ipc", 24)  # kept: the subscriber the backlog is about
    wait_until(lambda: pub.is_connected, 5, "connect")
    pub.offer_until(b"z" * 100, timeout=5)
    with driver.stat() as stat:
        wait_until(lambda: _unread(stat, 24) >= 100, 5, "the sampled position")
    text = subprocess.run([sys.executable, "-m", "aeron_py.stat", "--dir", driver.dir, "--backlog"],
                          capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert f"session {pub.session_id} stream 24 aeron:ipc" in text.stdout and "bytes to read" in text.stdout
    as_json = subprocess.run([sys.executable, "-m", "aeron_py.stat", "--dir", driver.dir, "--backlog", "--json"],
                             capture_output=True, text=True, timeout=30, cwd=tmp_path)
    [stream] = [b for b in json.loads(as_json.stdout)["backlog"] if b["stream_id"] == 24]
    assert stream["subscribers"][0]["backlog"] >= 100 and stream["publisher"]["remaining_window"] > 0
