"""Echo 2.0 server limits: server full, per-IP, blocklist, image term cap, 50 clients."""
from __future__ import annotations

import logging
import socket
import time
from pathlib import Path

import pytest

from aeron_py.duologue.blocklist import Blocklist, Entry
from aeron_py.echo.client import EXIT_SERVER_ERROR, EchoClient
from aeron_py.echo.load.generator import run_load
from echo_harness import HOST, PortBlocks, make_server, raw_peer, wait_idle, wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

BLOCKS = PortBlocks(24000, 25600, size=150)


def hello_reply(peer, interface: str | None = None, key: int = 0xABC) -> bytes:
    """Send one HELLO on fresh initial channels and return the text after the session prefix."""
    pub, sub = peer.initial(interface)
    peer.send(pub, f"HELLO {key:X}".encode())
    return peer.reply_to(sub, pub).split(b" ", 1)[1]


def test_server_full() -> None:
    ports = BLOCKS.take(2)
    with make_server(ports, clients=2) as server, raw_peer(ports) as peer:
        assert hello_reply(peer).startswith(b"CONNECT ")
        assert hello_reply(peer).startswith(b"CONNECT ")
        assert hello_reply(peer) == b"ERROR server full"
        result = EchoClient(HOST, ports.port, ports.control, count=1, timeout=5).run()
        assert result.server_reason == "server full" and result.exit_code == EXIT_SERVER_ERROR
        assert server.stats.duologues == 2 and server.stats.rejects == {"max_clients": 2}


def test_too_many_connections_for_one_ip() -> None:
    ports = BLOCKS.take(8)
    with make_server(ports, max_per_ip=2) as server, raw_peer(ports) as peer:
        for _ in range(2):
            assert hello_reply(peer, "127.0.0.2").startswith(b"CONNECT ")
        assert hello_reply(peer, "127.0.0.2") == b"ERROR too many connections for IP address"
        assert hello_reply(peer, "127.0.0.3").startswith(b"CONNECT ")
        refused = EchoClient(HOST, ports.port, ports.control, count=1, timeout=5, interface="127.0.0.2").run()
        assert refused.server_reason == "too many connections for IP address"
        served = EchoClient(HOST, ports.port, ports.control, count=2, timeout=5, interface="127.0.0.4").run()
        assert served.ok, served.reason
        assert server.stats.rejects == {"max_per_ip": 2}


def test_oversized_client_term_is_dropped_by_the_filter_before_an_image_exists() -> None:
    """Spec decision 3 with the endpoint filter (the default): the SETUP never makes an image,
    so there is no HELLO to ignore; the drop is counted."""
    ports = BLOCKS.take(4)
    with make_server(ports, max_image_term_length=64 * 1024) as server:
        result = EchoClient(HOST, ports.port, ports.control, count=1, timeout=3, term_length=128 * 1024).run()
        assert not result.ok and result.server_reason is None  # nothing reached the server
        assert server.filter_counters()["filter: setup_term_length"] >= 1
        assert server.stats.rejects.get("term_length", 0) == 0 and server.stats.connects == 0
        assert EchoClient(HOST, ports.port, ports.control, count=1, timeout=5).run().ok


def test_oversized_client_term_is_refused_with_an_answer() -> None:
    """Spec decision 3 without the filter: the image is rejected, and its HELLO still gets
    ``ERROR server full``."""
    ports = BLOCKS.take(4)
    with make_server(ports, options={"endpoint_filter": False}, max_image_term_length=64 * 1024) as server:
        result = EchoClient(HOST, ports.port, ports.control, count=1, timeout=5, term_length=128 * 1024).run()
        assert not result.ok and result.exit_code == EXIT_SERVER_ERROR and result.server_reason == "server full"
        assert server.stats.rejects.get("term_length", 0) >= 1 and server.stats.connects == 0
        assert EchoClient(HOST, ports.port, ports.control, count=1, timeout=5).run().ok


def test_blocklist_refuses_a_source_and_reloads(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ports = BLOCKS.take(8)
    path = tmp_path / "blocklist.txt"
    Blocklist.write(path, [Entry.create("127.0.0.2", None, "test: blocked source")])
    # Without the driver's endpoint filter the server answers a blocked source; with it,
    # the filter drops the source's datagrams and it hears nothing (see endpoint_guard).
    with make_server(ports, options={"blocklist": str(path), "endpoint_filter": False}) as server:
        def run(ip: str):
            return EchoClient(HOST, ports.port, ports.control, count=1, timeout=5, interface=ip).run()

        assert run("127.0.0.2").server_reason == "too many connections for IP address"
        assert run("127.0.0.3").ok
        Blocklist.write(path, [Entry.create("127.0.0.3/32", time.time() + 3600, "now this one")])
        server.reload_blocklist()
        wait_until(lambda: server.blocklist_version == 2, 5, "the blocklist reload")
        assert run("127.0.0.3").server_reason == "too many connections for IP address"
        assert run("127.0.0.2").ok
        path.write_text("not-an-address never reason\n")
        with caplog.at_level(logging.ERROR, logger="aeron_py.duologue.server"):
            server.reload_blocklist()
            wait_until(lambda: "blocklist reload failed" in caplog.text, 5, "the failed reload to be logged")
        assert server.blocklist_version == 2
        assert run("127.0.0.3").server_reason == "too many connections for IP address"  # old list kept
        assert server.stats.rejects == {"blocklist": 3}


def test_fifty_concurrent_clients() -> None:
    ports = BLOCKS.take(64)
    sources = [f"127.0.0.{i}" for i in range(2, 22)]
    with make_server(ports, clients=64) as server:
        report, results = run_load(HOST, ports.port, ports.control, clients=50, sources=sources, echoes=5,
                                   timeout=15)
        assert report.succeeded == 50, report.failures
        assert report.rtt["count"] == 250 and report.handshake["count"] == 50
        assert {r.source_ip for r in results} == set(sources)
        assert server.stats.connects == 50
        wait_idle(server, timeout=10)


def test_duologues_are_independent_when_one_client_fails() -> None:
    ports = BLOCKS.take(8)
    with make_server(ports) as server, raw_peer(ports) as peer:
        good = peer.handshake(key=1)
        bad = peer.handshake(key=2)
        good_pub, good_sub = peer.open_duologue(good)
        bad_pub, bad_sub = peer.open_duologue(bad)
        peer.send(bad_pub, b"garbage")
        assert peer.receive(bad_sub, lambda m: True) == b"ERROR bad message"
        peer.send(good_pub, b"ECHO still here")
        assert peer.receive(good_sub, lambda m: True) == b"ECHO still here"
        assert server.stats.duologues == 1


def test_counters_file_is_sized_for_max_clients() -> None:
    """Aeron's default counters file (65,536 counters) is full at ~4,300 duologues: a
    server for 5,000 clients gets one with room for 20 a duologue, a small server keeps
    the default. (No duologue is opened: the duologue ports past the test range are
    never bound.)"""
    from aeron_py.stat import DriverStat

    for clients, expected in ((5000, 5000 * 20 + 1024), (8, 65_536)):
        with make_server(BLOCKS.take(2), clients=clients) as server:
            assert server.driver_dir is not None
            counters = DriverStat(server.driver_dir).counters_reader().max_counter_id + 1
            assert counters >= expected
            assert clients > 8 or counters == 65_536


def test_a_duologue_moves_off_ports_that_are_still_bound() -> None:
    """Six of the twelve duologue ports are bound by other sockets (as a closed duologue's
    endpoint stays bound while its departed client's image lingers): a duologue whose
    channels fail with "Address already in use" moves to other ports before its CONNECT
    goes out, so every client is served."""
    ports = BLOCKS.take(6)
    taken = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(6)]
    try:
        for i, sock in enumerate(taken):
            sock.bind((HOST, ports.base + 2 * i))
        with make_server(ports, clients=6) as server:
            for _ in range(3):
                result = EchoClient(HOST, ports.port, ports.control, count=1, timeout=10).run()
                assert result.ok, result.reason
            assert server.stats.rejects == {}
    finally:
        for sock in taken:
            sock.close()
