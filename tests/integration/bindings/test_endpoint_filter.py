"""The driver's endpoint filter on real UDP loopback: forged SETUP/DATA frames from raw sockets
bound to 127.0.0.x, real publications from other addresses, the real C driver."""
from __future__ import annotations

import ipaddress
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import pytest

from aeron_py import Aeron, AeronError, MediaDriver
from aeron_py.endpoint_filter import EndpointFilterConfig
import forged
from conftest import free_udp_port, wait_until
from forged import raw_socket

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

TERM = 64 * 1024
STREAM = 1001


def setup_frame(session_id: int, stream_id: int = STREAM, term_length: int = TERM, initial_term_id: int = 7) -> bytes:
    return forged.setup_frame(session_id, stream_id, term_length, initial_term_id)


def data_frame(session_id: int, term_id: int, term_offset: int, payload: bytes, stream_id: int = STREAM) -> bytes:
    return forged.data_frame(session_id, term_id, term_offset, payload, stream_id)


@contextmanager
def filtered(config: EndpointFilterConfig, **options: object) -> Iterator[tuple[MediaDriver, Aeron]]:
    options.setdefault("term_buffer_length", TERM)
    options.setdefault("publication_linger_timeout_ns", 0)
    with MediaDriver(endpoint_filter=config, **options) as driver, Aeron(driver=driver) as aeron:
        yield driver, aeron


def publication_from(aeron: Aeron, interface: str, port: int, stream_id: int = STREAM):
    """A publication whose datagrams leave from ``interface`` (manual MDC with a bound control address)."""
    pub = aeron.add_exclusive_publication(f"aeron:udp?control={interface}:0|control-mode=manual|term-length={TERM}", stream_id)
    pub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{port}")
    return pub


def deliver(sock: socket.socket, frame: bytes, port: int, progress: Callable[[], int]) -> int:
    """Send ``frame`` until ``progress()`` (drops counted + images made) moves: on a loaded host the
    kernel may drop a datagram before the driver reads it, and the tests count exact outcomes.
    Returns the number of sends (a re-send may reach the driver too when it was only slow)."""
    before = progress()
    for sends in range(1, 26):
        sock.sendto(frame, ("127.0.0.1", port))
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:
            if progress() > before:
                return sends
            time.sleep(0.001)
    raise AssertionError(f"no outcome for a forged frame to port {port} after 25 sends")


def outcomes(driver: MediaDriver, *subs) -> Callable[[], int]:
    return lambda: sum(driver.endpoint_filter.counters().values()) + sum(s.image_count for s in subs)


def log_files(driver: MediaDriver) -> list[str]:
    images = os.path.join(driver.dir, "images")
    return os.listdir(images) if os.path.isdir(images) else []


def receive(sub, count: int, timeout: float = 10.0) -> list[bytes]:
    got: list[bytes] = []
    wait_until(lambda: sub.poll(lambda d, h: got.append(bytes(d)), 100) >= 0 and len(got) >= count, timeout,
               f"{count} messages")
    return got


def test_oversize_term_setup_flood_makes_no_image_and_legit_publication_connects():
    port = free_udp_port()
    with filtered(EndpointFilterConfig(max_setup_term_length=1 << 20)) as (driver, aeron):
        sub = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", STREAM)
        filt = driver.endpoint_filter
        with raw_socket("127.0.0.3") as attacker:
            for session in range(1, 201):
                deliver(attacker, setup_frame(session, term_length=1 << 30), port, outcomes(driver, sub))
        assert filt.counters()["setup_term_length"] == 200
        assert sub.image_count == 0 and log_files(driver) == []
        pub = publication_from(aeron, "127.0.0.2", port)
        wait_until(lambda: pub.is_connected and sub.image_count == 1, 10, "the legitimate publication")
        pub.offer_until(b"hello", timeout=5)
        assert receive(sub, 1) == [b"hello"]
        assert sub.images()[0].source_address[0] == "127.0.0.2"
        assert len(log_files(driver)) == 1
        assert {k: v for k, v in filt.counters().items() if v} == {"setup_term_length": 200}


def test_blocklisted_source_is_dropped_and_unblocked_after_replacement():
    port = free_udp_port()
    with filtered(EndpointFilterConfig()) as (driver, aeron):
        filt = driver.endpoint_filter
        filt.set_blocklist(["127.0.0.3", ipaddress.ip_network("127.0.1.0/24"), "::ffff:127.0.2.0/120", "2001:db8::/64"])
        sub = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", STREAM)
        blocked = publication_from(aeron, "127.0.0.3", port)
        allowed = publication_from(aeron, "127.0.0.2", port)
        wait_until(lambda: allowed.is_connected and sub.image_count == 1, 10, "the allowed publication")
        with raw_socket("127.0.1.5") as in_prefix:
            deliver(in_prefix, setup_frame(99), port, lambda: filt.counters()["blocklist"])
        wait_until(lambda: filt.counters()["blocklist"] >= 2, 10, "blocked SETUPs counted")
        assert not blocked.is_connected and sub.image_count == 1
        assert [i.source_address[0] for i in sub.images()] == ["127.0.0.2"]
        assert filt.blocklist == ("127.0.0.3/32", "127.0.1.0/24", "127.0.2.0/24", "2001:db8::/64")

        filt.set_blocklist([])
        wait_until(lambda: blocked.is_connected and sub.image_count == 2, 10, "the unblocked publication")
        assert filt.blocklist == ()


def test_new_session_rate_per_source():
    port = free_udp_port()
    with filtered(EndpointFilterConfig(setup_rate=0.001, setup_burst=3)) as (driver, aeron):
        sub = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", STREAM)
        filt = driver.endpoint_filter
        with raw_socket("127.0.0.3") as first, raw_socket("127.0.0.4") as second:
            for session in range(1, 11):
                deliver(first, setup_frame(session), port, outcomes(driver, sub))
            assert sub.image_count == 3 and filt.counters()["setup_rate"] == 7
            for _ in range(5):  # SETUPs of sessions that already have an image cost nothing
                first.sendto(setup_frame(1), ("127.0.0.1", port))
            deliver(second, setup_frame(50), port, outcomes(driver, sub))  # another source has its own bucket
            assert sub.image_count == 4
        assert sorted(i.session_id for i in sub.images()) == [1, 2, 3, 50]
        assert filt.counters()["setup_rate"] == 7


@pytest.mark.timeout(90)
def test_concurrent_image_caps_per_source_and_total_are_released_when_images_go():
    port = free_udp_port()
    config = EndpointFilterConfig(max_images_per_source=2, max_images_total=3)
    with filtered(config, image_liveness_timeout_ns=1_000_000_000) as (driver, aeron):
        sub = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", STREAM)
        filt = driver.endpoint_filter
        with raw_socket("127.0.0.3") as first, raw_socket("127.0.0.4") as second:
            for session in range(1, 6):
                deliver(first, setup_frame(session), port, outcomes(driver, sub))
            assert sub.image_count == 2 and filt.counters()["source_images"] == 3
            for session in range(11, 16):
                deliver(second, setup_frame(session), port, outcomes(driver, sub))
            assert sub.image_count == 3 and filt.counters()["total_images"] == 4
            # Forged images get no data: they time out (1 s liveness) and free their places.
            wait_until(lambda: sub.image_count == 0, 20, "the forged images to time out")
            for session in range(21, 24):
                deliver(first, setup_frame(session), port, outcomes(driver, sub))
            assert sub.image_count == 2
        assert filt.counters()["source_images"] == 4


def test_intruder_on_an_owned_port_never_disturbs_the_owner():
    port = free_udp_port()
    with filtered(EndpointFilterConfig()) as (driver, aeron):
        filt = driver.endpoint_filter
        filt.set_port_owner(port, "127.0.0.2")
        assert filt.port_owners == {port: "127.0.0.2"}
        sub = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", STREAM)
        owner = publication_from(aeron, "127.0.0.2", port)
        wait_until(lambda: owner.is_connected and sub.image_count == 1, 10, "the owner's publication")
        image = sub.images()[0]
        session, term_id = image.session_id, image.initial_term_id
        expected = [f"message {i:03d}".encode() for i in range(100)]
        got: list[bytes] = []
        with raw_socket("127.0.0.3") as intruder:
            for i, message in enumerate(expected):
                # Forged frames exactly where the owner's next ones will land (each message is 32 + 11
                # bytes, 64 aligned): unfiltered, the receiver would take them as the owner's data.
                for offset in range(i * 64, i * 64 + 6 * 64, 64):
                    intruder.sendto(data_frame(session, term_id, offset, b"FORGED!!!!!"), ("127.0.0.1", port))
                intruder.sendto(setup_frame(session + 1), ("127.0.0.1", port))
                if i < 20:  # give the subscriber a chance to read a forged frame before the owner's lands
                    deadline = time.monotonic() + 0.01
                    while time.monotonic() < deadline and not sub.poll(lambda d, h: got.append(bytes(d)), 100):
                        time.sleep(0.001)
                owner.offer_until(message, timeout=5)
                sub.poll(lambda d, h: got.append(bytes(d)), 100)
        wait_until(lambda: sub.poll(lambda d, h: got.append(bytes(d)), 100) >= 0 and len(got) >= 100, 10, "all")
        assert got == expected
        assert sub.image_count == 1
        # The kernel may drop some forged datagrams on a loaded host: those the driver read were dropped.
        assert 0 < filt.counters()["port_owner"] <= 100 * 7

        filt.set_port_owner(port, None)
        assert filt.port_owners == {}


@pytest.mark.parametrize("threading_mode", ["SHARED", "DEDICATED"])  # DEDICATED: sender and receiver threads
def test_table_replacement_while_traffic_flows(threading_mode):
    port = free_udp_port()
    with filtered(EndpointFilterConfig(), threading_mode=threading_mode) as (driver, aeron):
        filt = driver.endpoint_filter
        sub = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", STREAM)
        pub = publication_from(aeron, "127.0.0.2", port)
        wait_until(lambda: pub.is_connected and sub.image_count == 1, 10, "connect")
        noise = [f"10.{i // 250}.{i % 250}.0/24" for i in range(800)]
        got: list[bytes] = []
        sends = 0
        with raw_socket("127.0.0.3") as hostile:
            for i in range(200):
                filt.set_blocklist(noise[i:] + ["127.0.0.3"] if i % 2 else ["127.0.0.3", f"2001:db8:{i:x}::/48"])
                filt.set_port_owner(40000 + i % 7, "127.0.0.9" if i % 3 else None)
                sends += deliver(hostile, setup_frame(5000 + i), port, lambda: filt.counters()["blocklist"])
                pub.offer_until(f"{i}".encode(), timeout=5)
                sub.poll(lambda d, h: got.append(bytes(d)), 100)
        wait_until(lambda: sub.poll(lambda d, h: got.append(bytes(d)), 100) >= 0 and len(got) >= 200, 10, "all")
        assert got == [f"{i}".encode() for i in range(200)]
        assert 200 <= filt.counters()["blocklist"] <= sends  # every hostile frame that arrived was dropped
        assert sub.image_count == 1


def test_bad_entries_raise_value_error_naming_the_entry():
    with filtered(EndpointFilterConfig()) as (driver, _):
        filt = driver.endpoint_filter
        filt.set_blocklist(["192.0.2.1"])
        for bad, fragment in ((["10.0.0.1", "not-an-ip"], "1 'not-an-ip'"), (["10.0.0.0/33"], "10.0.0.0/33"),
                              (["2001:db8::/129"], "2001:db8::/129"), (["10.0.0.0/x"], "10.0.0.0/x"),
                              (["10.0.0.1/8"], "host bits"), ([None], "0 None")):
            with pytest.raises(ValueError, match=fragment):
                filt.set_blocklist(bad)
        with pytest.raises(TypeError):
            filt.set_blocklist("10.0.0.1")
        assert filt.blocklist == ("192.0.2.1/32",)
        with pytest.raises(ValueError, match="port"):
            filt.set_port_owner(0, "127.0.0.2")
        with pytest.raises(ValueError, match="'nobody'"):
            filt.set_port_owner(4000, "nobody")
    for bad in ({"max_setup_term_length": -1}, {"setup_rate": 0}, {"ipv6_prefix": 129}, {"setup_burst": 0.5},
                {"max_images_total": 1.5}, {"max_sources": 0}):
        with pytest.raises((ValueError, TypeError), match=next(iter(bad))):
            EndpointFilterConfig(**bad)
    with pytest.raises(TypeError, match="endpoint_filter"):
        MediaDriver(endpoint_filter={"max_setup_term_length": 1})  # type: ignore[arg-type]


def test_stream_session_limit_is_passed_to_the_driver():
    with MediaDriver(endpoint_filter=EndpointFilterConfig(stream_session_limit=4)) as driver:
        assert driver.options["stream_session_limit"] == 4
    with pytest.raises(TypeError, match="stream_session_limit"):
        MediaDriver(endpoint_filter=EndpointFilterConfig(stream_session_limit=4), stream_session_limit=8)


def test_use_after_close_raises_and_unfiltered_driver_says_so():
    with filtered(EndpointFilterConfig()) as (driver, _):
        filt = driver.endpoint_filter
    for call in (filt.counters, lambda: filt.set_blocklist(["10.0.0.1"]), lambda: filt.set_port_owner(4000, None)):
        with pytest.raises(AeronError, match="closed"):
            call()
    with MediaDriver(endpoint_filter=None) as plain:
        with pytest.raises(AeronError, match="no endpoint filter"):
            plain.endpoint_filter


NATIVE_MISUSE = r"""
from aeron_py import _aeron
f = _aeron.EndpointFilter(0, 0.0, 1.0, 0, 0, 32, 64, 16, 16, 10**9)
ctx = _aeron.DriverContext()
ctx.set_dir(__import__("sys").argv[1]); ctx.set_dir_delete_on_start(True); ctx.set_dir_delete_on_shutdown(True)
ctx.set_threading_mode(_aeron.THREADING_MODE_SHARED); ctx.set_shared_idle_strategy("sleeping")
d = _aeron.Driver(ctx, endpoint_filter=f)
f.publish([(b"\0" * 10 + b"\xff\xff" + bytes([10, 0, 0, 0]), 104)], [(4000, b"\0" * 16)])
d.close()
print(sorted(f.dropped().items()), f.phase, f.counter_ids()["blocklist"])
f.publish([], [])                       # harmless after close: the table is the filter's own
for bad in (lambda: f.publish([(b"short", 8)], []), lambda: f.publish([(b"\0" * 16, 129)], []),
            lambda: f.publish([], [(70000, b"\0" * 16)]), lambda: _aeron.Driver(ctx, endpoint_filter=f),
            lambda: ctx.get_term_buffer_length(), lambda: _aeron.EndpointFilter(0, 1.0, 0.5, 0, 0, 32, 64, 16, 16, 1)):
    try:
        bad()
    except (ValueError, _aeron.AeronError) as e:
        print("refused:", type(e).__name__)
ctx2 = _aeron.DriverContext(); ctx2.set_dir(__import__("sys").argv[1] + "-2"); ctx2.set_dir_delete_on_start(True)
ctx2.set_dir_delete_on_shutdown(True)
try:
    _aeron.Driver(ctx2, endpoint_filter=f)  # a filter serves one driver only
except _aeron.AeronError as e:
    print("refused:", type(e).__name__)
print("OK")
"""


def test_native_filter_misuse_in_a_child_process(tmp_path):
    result = subprocess.run([sys.executable, "-c", NATIVE_MISUSE, str(tmp_path / "drv")], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr  # negative would be death by a signal
    lines = result.stdout.splitlines()
    assert lines[-1] == "OK" and lines.count("refused: ValueError") == 4 and lines.count("refused: AeronError") == 3
    assert "detached -1" in lines[0]


def test_stat_cli_shows_the_filter_counters():
    port = free_udp_port()
    with filtered(EndpointFilterConfig(max_setup_term_length=TERM)) as (driver, aeron):
        aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", STREAM)
        with raw_socket("127.0.0.3") as attacker:
            for session in range(3):
                deliver(attacker, setup_frame(session, term_length=2 * TERM), port,
                        lambda: driver.endpoint_filter.counters()["setup_term_length"])
        out = subprocess.run([sys.executable, "-m", "aeron_py.stat", "--dir", driver.dir], capture_output=True,
                             text=True, timeout=30)
        assert out.returncode == 0, out.stderr
        line = next(x for x in out.stdout.splitlines() if x.endswith("aeron_py filter dropped: setup term length"))
        assert line.split(" - ")[0].split(":")[1].strip() == "3"
        assert "aeron_py filter dropped: blocklist" in out.stdout
