"""Echo 2.0 server end to end: real drivers, real UDP on 127.0.0.0/8."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from aeron_py import DriverStat
from aeron_py.echo.client import EXIT_SERVER_ERROR, EchoClient, EchoResult
from aeron_py.duologue.server import SNAPSHOT_COUNTERS
from aeron_py.telemetry import read_events
from echo_harness import (
    CONNECT_RE, HOST, PortBlocks, make_server, raw_peer, udp_port_free, wait_idle, wait_until,
)
from processes import remove_dead_driver_dirs

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

BLOCKS = PortBlocks(21000, 24000)


def test_connect_carries_crypt_and_signed_session_and_echoes() -> None:
    ports = BLOCKS.take()
    with make_server(ports) as server, raw_peer(ports) as peer:
        hs = peer.handshake()
        assert 1 <= hs.session < 2**31 - 1  # drawn from the server's reserved range
        assert {hs.data_port, hs.control_port} <= set(range(ports.base, ports.base + 16))
        pub, sub = peer.open_duologue(hs)  # the session filter only matches if the crypt was right
        peer.send(pub, b"ECHO hi")
        assert peer.receive(sub, lambda m: True) == b"ECHO hi"
        assert server.stats.connects == 1 and server.stats.duologues == 1


def test_echo_is_verbatim_including_empty_and_non_ascii() -> None:
    ports = BLOCKS.take()
    payloads = [b"ECHO ", "ECHO héllo wörld ✓ 東京".encode(), b"ECHO \x00\x01\x7f", b"ECHO \xff\xfe bad utf-8",
                b"ECHO " + b"x" * 1019]
    with make_server(ports), raw_peer(ports) as peer:
        pub, sub = peer.open_duologue(peer.handshake())
        for message in payloads:
            peer.send(pub, message)
            assert peer.receive(sub, lambda m: True) == message


@pytest.mark.parametrize("bad", [b"ECHO", b"ECHO a\nb", b"HELLO 1A", b"ECHO \xe2\x80\xa8"])
def test_bad_duologue_message_gets_error_then_close_and_resources_back(bad: bytes) -> None:
    ports = BLOCKS.take()
    with make_server(ports) as server, raw_peer(ports) as peer:
        pub, sub = peer.open_duologue(peer.handshake())
        peer.send(pub, bad)
        assert peer.receive(sub, lambda m: True) == b"ERROR bad message"
        wait_idle(server)
        assert server.stats.closes == {"bad_message": 1}


def test_oversize_echo_is_a_bad_message() -> None:
    ports = BLOCKS.take()
    with make_server(ports, max_message=1024) as server:
        fits = EchoClient(HOST, ports.port, ports.control, count=1, message="y" * 1019, timeout=5).run()
        assert fits.ok, fits.reason
        result = EchoClient(HOST, ports.port, ports.control, count=1, message="x" * 1020, timeout=5).run()
        assert not result.ok and result.server_reason == "bad message"
        assert result.exit_code == EXIT_SERVER_ERROR
        wait_until(lambda: server.stats.closes.get("bad_message") == 1, 5, "the oversize duologue to close")


def test_bad_hello_variants_get_error_bad_message() -> None:
    ports = BLOCKS.take()
    variants = [b"", b"HELLO", b"HELLO ", b"hello 1A", b"HELLO 1a", b"HELLO  1A", b"HELLO 1A ", b" HELLO 1A",
                b"HELLO 1FFFFFFFF", b"HELLO 0x1A", "HELLO ١٢".encode(), b"HELLO \xff", b"HELLO 1A\n"]
    with make_server(ports, refusal_interval=0.0) as server, raw_peer(ports) as peer:  # answer each one
        pub, sub = peer.initial()
        for bad in variants:
            peer.send(pub, bad)
            assert peer.reply_to(sub, pub) == f"{pub.session_id} ERROR bad message".encode(), bad
        peer.send(pub, b"HELLO 1A")  # the same client may retry with a good HELLO
        assert CONNECT_RE.fullmatch(peer.reply_to(sub, pub))
        stats = server.stats
        assert stats.rejects == {"malformed": len(variants)}
        assert stats.hellos == len(variants) + 1 and stats.connects == 1


def test_an_oversize_hello_is_answered_and_its_image_rejected() -> None:
    """No client sends a message longer than --max-message on its initial publication: it
    is answered ``bad message`` and the image rejected at once (its log then holds no
    more than that); the client's next publication is served."""
    ports = BLOCKS.take()
    with make_server(ports) as server, raw_peer(ports) as peer:
        pub, sub = peer.initial()
        peer.send(pub, b"HELLO " + b"A" * 2000)
        assert peer.reply_to(sub, pub) == f"{pub.session_id} ERROR bad message".encode()
        wait_until(lambda: server.stats.initial_images == 0, 15, "the rejected initial image to go")
        assert server.stats.rejects == {"oversize": 1} and server.stats.connects == 0
        assert peer.handshake(key=0x1A).session  # a new publication (a new session) is served


def test_reply_that_cannot_leave_closes_only_its_duologue() -> None:
    """A client that never subscribes to its duologue: the reply misses its deadline."""
    ports = BLOCKS.take()
    with make_server(ports, options={"send_timeout": 0.5}) as server, raw_peer(ports) as peer:
        deaf = peer.handshake(key=7)
        deaf_pub = peer.publication(deaf.data_port, deaf.session)
        wait_until(lambda: deaf_pub.is_connected, 5, "the deaf client's publication to connect")
        good_pub, good_sub = peer.open_duologue(peer.handshake(key=8))
        peer.send(deaf_pub, b"ECHO into the void")
        wait_until(lambda: server.stats.closes.get("send_deadline") == 1, 5, "the deaf duologue to close")
        peer.send(good_pub, b"ECHO fine")
        assert peer.receive(good_sub, lambda m: True) == b"ECHO fine"
        assert server.stats.duologues == 1


@pytest.mark.skipif(not socket.has_ipv6 or not udp_port_free(0, "::1"), reason="no IPv6 loopback")
def test_ipv6_loopback() -> None:
    ports = BLOCKS.take()
    with make_server(ports, options={"address": "::1"}, ipv6_prefix=64) as server:
        # A duologue freed at its client's end of stream is gone at once: keep one alive
        # (three echoes 0.4 s apart) while the second client runs, then both count as ::1.
        first: list[EchoResult] = []
        lasting = threading.Thread(target=lambda: first.append(
            EchoClient("::1", ports.port, ports.control, count=3, interval=0.4, timeout=5).run()))
        lasting.start()
        try:
            wait_until(lambda: server.stats.duologues == 1, 5, "the first IPv6 duologue")
            result = EchoClient("::1", ports.port, ports.control, count=2, timeout=5).run()
            assert result.ok and result.source_ip == "::1", result.reason
            assert server.stats.connects == 2 and server.stats.source_keys == 1  # both from ::1
        finally:
            lasting.join(10)
        assert first and first[0].ok and first[0].source_ip == "::1", first


def test_a_late_step_while_joining_says_no_server_answering() -> None:
    """The join phase's deadline, not the CONNECT wait that has not begun, ends a client
    stepped long after it (a busy machine's late wake-up)."""
    ports = BLOCKS.take(1)  # nobody serves these
    client = EchoClient(HOST, ports.port, ports.control, count=1, timeout=1)
    try:
        client.open(now=100.0)
        client.step(now=100.001)
        assert client.result is None
        client.step(now=105.0)
        result = client.result
        assert result is not None and not result.ok
        assert "no server answering" in (result.reason or ""), result.reason
    finally:
        client.close()


def test_never_connected_duologue_expires() -> None:
    ports = BLOCKS.take()
    with make_server(ports, expiry=0.5) as server, raw_peer(ports) as peer:
        peer.handshake()
        assert server.stats.connects == 1
        wait_until(lambda: server.stats.closes.get("expired") == 1, 5, "the duologue to expire")
        wait_idle(server)


def test_intruder_on_a_duologue_port_is_dropped_by_the_filter() -> None:
    """With the endpoint filter (the default) a duologue's data port belongs to its client's IP:
    an intruder using the owner's session id never makes an image, and the owner is served."""
    ports = BLOCKS.take()
    with make_server(ports, expiry=60.0) as server, raw_peer(ports) as owner:
        hs = owner.handshake(interface="127.0.0.2")
        with raw_peer(ports) as intruder:
            bad_pub = intruder.publication(hs.data_port, hs.session, "127.0.0.3")
            wait_until(lambda: server.filter_counters().get("filter: port_owner", 0) > 0, 5,
                       "the filter to drop the intruder's datagrams")
            assert not bad_pub.is_connected
            pub, sub = owner.open_duologue(hs, interface="127.0.0.2")
            owner.send(pub, b"ECHO mine")
            assert owner.receive(sub, lambda m: True) == b"ECHO mine"
            wait_until(lambda: [(d.connected, d.msgs_in) for d in server.duologues] == [(True, 1)], 5,
                       "the server's duologue snapshot to show the one echo")


def test_client_from_another_ip_is_not_served(tmp_path: Path) -> None:
    """Without the filter: an image of the duologue's session from a non-owner IP is rejected,
    logged, never served.

    (Aeron keys images by session and stream, not by source, so while a rejected image
    lives no other image of that session can form on that subscription: the owner can
    only connect once the intruder's image has timed out. That limit is Aeron's.)
    """
    ports = BLOCKS.take()
    options = {"events": str(tmp_path), "image_liveness_timeout": 1.0, "endpoint_filter": False}
    with make_server(ports, options=options, expiry=60.0) as server, raw_peer(ports) as owner:
        hs = owner.handshake(interface="127.0.0.2")
        with raw_peer(ports) as intruder:
            bad_pub = intruder.publication(hs.data_port, hs.session, "127.0.0.3")
            bad_sub = intruder.subscription(hs.control_port, hs.session)
            wait_until(lambda: bad_pub.is_connected, 5, "the intruder's publication to connect")
            intruder.send(bad_pub, b"ECHO let me in")
            assert intruder.silent(bad_sub, 1.0) == []  # no echo, no ERROR: not served at all
            [info] = server.duologues
            assert not info.connected and info.msgs_in == 0 and info.msgs_out == 0
    events = list(read_events(tmp_path))
    connected = [e for e in events if e["kind"] == "client_connected"]
    assert [(e["ip"], e["wrong_ip"]) for e in connected] == [("127.0.0.3", True)]  # logged as wrong-IP


def test_client_vanishing_mid_echo_frees_its_duologue(tmp_path: Path) -> None:
    ports = BLOCKS.take()
    with make_server(ports, options={"image_liveness_timeout": 1.0}) as server:
        child = subprocess.Popen(
            [sys.executable, "-m", "aeron_py.echo_client", str(tmp_path / "client-aeron"), HOST, str(ports.port),
             str(ports.control), "--count", "100000", "--interval", "0.01", "--timeout", "30"],
            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_until(lambda: any(d.msgs_in >= 5 for d in server.duologues), 15, "the child to be echoing")
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(5)
            remove_dead_driver_dirs(child.pid, [tmp_path / "client-aeron"])
        wait_until(lambda: server.stats.closes.get("client_gone") == 1, 10, "the server to notice")
        wait_idle(server)
        after = EchoClient(HOST, ports.port, ports.control, count=2, timeout=5).run()
        assert after.ok, after.reason


def test_server_restart_on_the_same_ports() -> None:
    ports = BLOCKS.take()
    first = make_server(ports)
    try:
        assert EchoClient(HOST, ports.port, ports.control, count=2, timeout=5).run().ok
    finally:
        first.close()
    assert first.driver_dir is not None and not os.path.exists(first.driver_dir)
    with make_server(ports) as second:
        result = EchoClient(HOST, ports.port, ports.control, count=2, timeout=5).run()
        assert result.ok, result.reason
        assert second.stats.connects == 1


def test_rapid_close_and_reopen_reuses_ports_in_either_role() -> None:
    """One client slot = two ports whose data/control roles swap at random between duologues.

    Each duologue ends with a bad message, so the server closes it at once and the next
    HELLO gets the same two ports while the previous publication still lingers on one.
    """
    ports = BLOCKS.take()
    rounds = 4
    with make_server(ports, clients=1) as server:
        for round_ in range(rounds):
            with raw_peer(ports) as peer:  # a fresh client driver: its own ports are not reused
                hs = peer.handshake(key=0x1000 + round_)
                pub, sub = peer.open_duologue(hs)
                peer.send(pub, b"ECHO round %d" % round_)
                assert peer.receive(sub, lambda m: True) == b"ECHO round %d" % round_
                peer.send(pub, b"bye")
                assert peer.receive(sub, lambda m: True) == b"ERROR bad message"
            wait_until(lambda: server.stats.duologues == 0, 5, f"duologue of round {round_} to close")
        wait_idle(server)
        assert server.stats.connects == rounds and server.stats.closes == {"bad_message": rounds}
        with DriverStat(server.driver_dir) as stat:
            assert not [e.message for e in stat.errors() if "Address already in use" in e.message]


def test_shutdown_closes_every_duologue_and_removes_the_driver_dir() -> None:
    ports = BLOCKS.take()
    server = make_server(ports)
    with raw_peer(ports) as peer:
        peer.open_duologue(peer.handshake())
        wait_until(lambda: any(d.connected for d in server.duologues), 5, "the duologue to see its client")
        server.close()
    assert server.stats.closes == {"shutdown": 1}
    assert server.channel_count == 0 and server.stats.ports_in_use == 0
    assert server.driver_dir is not None and not os.path.exists(server.driver_dir)


def test_telemetry_events_follow_the_schema(tmp_path: Path) -> None:
    ports = BLOCKS.take()
    with make_server(ports, options={"events": str(tmp_path), "snapshot_interval": 0.2}) as server, \
            raw_peer(ports) as peer:
        pub, sub = peer.initial()
        peer.send(pub, b"HELLO nope")
        peer.reply_to(sub, pub)
        assert EchoClient(HOST, ports.port, ports.control, count=2, timeout=5).run().ok
        # client_gone needs the client's end-of-stream (~1 s) or, if that is lost, image liveness (10 s)
        wait_until(lambda: server.stats.closes.get("client_gone") == 1, 15, "the duologue to close")
    events = list(read_events(tmp_path))
    kinds = {e["kind"] for e in events}
    assert {"hello", "reject", "bad_message", "duologue_created", "client_connected", "duologue_closed",
            "driver_snapshot"} <= kinds
    hellos = [e for e in events if e["kind"] == "hello"]
    assert sorted(e["key_valid"] for e in hellos) == [False, True] and all(e["port"] > 0 for e in hellos)
    assert [e["reason"] for e in events if e["kind"] == "reject"] == ["bad_message"]
    assert [e["where"] for e in events if e["kind"] == "bad_message"] == ["initial"]
    snapshot = [e for e in events if e["kind"] == "driver_snapshot"][-1]
    assert set(SNAPSHOT_COUNTERS) <= set(snapshot["counters"]) and snapshot["counters"]["Bytes received"] > 0
    drops = {"dropped events", "deleted telemetry files", "outbox drops", "refusals coalesced", "log lines folded"}
    assert drops <= set(snapshot["counters"]) and snapshot["counters"]["dropped events"] == 0
