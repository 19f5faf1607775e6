"""Echo secure mode end to end (docs/spec/echo2.md §5): real drivers, real UDP on loopback.

The Noise NK handshake on the all-clients channel, both duologue sessions sealed by the
drivers' secure transports, and each claim next to the plain run it differs from (an
eavesdropper reads a plain duologue; the same capture of a secure one shows nothing),
so these tests can fail.
"""
from __future__ import annotations

import asyncio
import os
import struct
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aeron_py import Aeron, DriverStat, MediaDriver
from aeron_py.idle import BackoffIdleStrategy
from aeron_py.duologue.client_security import ClientSecurity, ServerKeyRefused
from aeron_py.echo.client import EXIT_AUTHENTICATION, EchoClient, EchoResult
from aeron_py.errors import AeronError
from aeron_py.echo.client.async_client import run_echo_client
from aeron_py.duologue.core.secure_hello import b64url_encode
from aeron_py.duologue.keys import KnownServers, generate_server_key, server_secrets
from aeron_py.duologue.server import DuologueServer
from aeron_py.telemetry import read_events
from echo_harness import HOST, PortBlocks, Ports, make_server, wait_idle, wait_until
from forged import DATA_TYPE, data_frame, raw_socket
from loopback_capture import LoopbackCapture, capture_available
from processes import run_process

pytestmark = [pytest.mark.timeout(120), pytest.mark.integration]

BLOCKS = PortBlocks(20000, 20440, size=26)  # 16 blocks of 8 duologues (10 + 2 x 8 ports)
CHURN_BLOCKS = PortBlocks(20440, 20497, size=57)
PAYLOAD = "attack-at-dawn-7f3a"


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "server.key"
    generate_server_key(path)
    return path


def secure_server(ports: Ports, key_file: Path, clients: int = 8, **kwargs: Any) -> DuologueServer:
    return make_server(ports, clients, secure=server_secrets(key_file), **kwargs)


def public_key(key_file: Path) -> bytes:
    return server_secrets(key_file).static_keypair[0]


def run_client(ports: Ports, secure: ClientSecurity | None, **kwargs: Any) -> EchoResult:
    options: dict[str, Any] = {"count": 3, "timeout": 10.0, **kwargs}
    return EchoClient(HOST, ports.port, ports.control, secure=secure, **options).run()


def transport_counters(server: DuologueServer) -> dict[str, int]:
    assert server.secure_transport is not None
    return server.secure_transport.counters()


@pytest.mark.skipif(not capture_available(), reason="a packet socket on lo needs CAP_NET_RAW")
@pytest.mark.parametrize("secure", [False, True], ids=["plain", "secure"])
def test_an_eavesdropper_reads_a_plain_duologue_and_nothing_of_a_secure_one(secure: bool, key_file: Path) -> None:
    ports = BLOCKS.take()
    watched = range(ports.port, ports.base + 16)
    server = secure_server(ports, key_file) if secure else make_server(ports)
    with server, LoopbackCapture(watched) as capture:
        security = ClientSecurity(server_key=public_key(key_file)) if secure else None
        result = run_client(ports, security, message=PAYLOAD)
        assert result.ok and result.echoes == 3, result.reason
        wait_idle(server)
        counters = transport_counters(server) if secure else {}
    payloads = [d.payload for d in capture.datagrams]
    assert len(payloads) > 20, "the capture must have seen the run"
    shows_payload = any(PAYLOAD.encode() in p for p in payloads)
    shows_hello = any(b"HELLO " in p for p in payloads)
    if not secure:  # the same capture of a plain run: the payloads and the HELLO's one-time pad in clear
        assert shows_payload and shows_hello
        return
    assert not shows_payload, "an ECHO payload crossed the wire in clear"
    assert not any(b"ECHO " in p for p in payloads)
    assert not shows_hello, "only HELLO-SECURE may cross in secure mode"
    assert any(b"HELLO-SECURE " in p for p in payloads) and any(b"CONNECT-SECURE " in p for p in payloads)
    for connect in (p for p in payloads if b"CONNECT-SECURE " in p):
        assert b"CONNECT " not in connect.replace(b"CONNECT-SECURE ", b""), "the CONNECT payload is encrypted"
    assert counters["sealed"] >= 3 and counters["opened"] >= 3, counters


@pytest.mark.skipif(not capture_available(), reason="a packet socket on lo needs CAP_NET_RAW")
def test_replayed_altered_and_forged_datagrams_from_the_owners_address_are_dropped(key_file: Path) -> None:
    """An attacker on the path, sending from the owner's address to the duologue's data port:
    a recorded DATA datagram again, the same with a bit of its ciphertext or of its nonce
    flipped, a forged plain DATA frame in the client's session. All dropped and counted; the client's echoes go on in order."""
    ports = BLOCKS.take()
    with secure_server(ports, key_file) as server, LoopbackCapture(range(ports.base, ports.base + 16)) as capture, \
            raw_socket(HOST) as attacker:
        client = EchoClient(HOST, ports.port, ports.control, count=40, interval=0.02, timeout=10,
                            secure=ClientSecurity(server_key=public_key(key_file))).open()
        idle, attacked = BackoffIdleStrategy(max_park_ns=1_000_000), False
        deadline = time.monotonic() + 30
        while not client.finished and time.monotonic() < deadline:
            idle.idle(client.step())
            if not attacked and len(client.rtts) >= 5:
                sealed = [d for d in capture.datagrams if d.destination[1] in range(ports.base, ports.base + 16)
                          and struct.unpack_from("<h", d.payload, 6)[0] == DATA_TYPE and len(d.payload) > 80]
                assert sealed, "the client's sealed DATA must have been seen"
                recorded = sealed[-1]
                altered = bytearray(recorded.payload)
                altered[40] ^= 0x01  # inside the ciphertext: its nonce was seen, so a replay
                renonced = bytearray(recorded.payload)
                renonced[-8] ^= 0x40  # the nonce's counter far ahead: a fresh nonce, and the tag fails
                session, stream, term_id = struct.unpack_from("<iii", recorded.payload, 12)
                forged = data_frame(session, term_id, 0, b"ECHO forged", stream)  # plain: no tag, no nonce
                for datagram in (recorded.payload, bytes(altered), bytes(renonced), forged):
                    attacker.sendto(datagram, recorded.destination)
                attacked = True
        client.close()
        assert attacked and client.result is not None and client.result.ok, client.result
        assert client.result.echoes == 40
        counters = transport_counters(server)
    assert counters["dropped_replay"] >= 2 and counters["dropped_bad_tag"] >= 1, counters
    assert counters["dropped_malformed"] + counters["dropped_bad_tag"] >= 2, counters


def test_plain_client_against_secure_server_gets_a_clear_refusal(key_file: Path) -> None:
    ports = BLOCKS.take()
    with secure_server(ports, key_file) as server:
        result = run_client(ports, None)
        assert not result.ok and result.server_reason == "secure mode required"
        assert result.exit_code == 1
        assert server.stats.rejects.get("secure_mode_required") == 1
        wait_idle(server)


def test_secure_client_against_plain_server_says_it_is_not_secure(tmp_path: Path) -> None:
    ports = BLOCKS.take()
    with make_server(ports) as server:
        result = run_client(ports, ClientSecurity(known_servers=KnownServers(tmp_path / "known")))
        assert not result.ok and "not in secure mode" in (result.reason or ""), result.reason
        assert result.exit_code == 1
        assert not (tmp_path / "known").exists(), "nothing learnt from a plain server"
        wait_idle(server)


def test_trust_on_first_use_records_the_key_and_a_changed_key_is_refused(key_file: Path, tmp_path: Path) -> None:
    ports = BLOCKS.take()
    known = KnownServers(tmp_path / "known")
    with secure_server(ports, key_file) as server:
        first = run_client(ports, ClientSecurity(known_servers=known))
        assert first.ok, first.reason
        recorded = known.lookup(HOST, ports.port)
        assert recorded is not None and recorded.public_key == public_key(key_file)
        assert run_client(ports, ClientSecurity(known_servers=known)).ok  # now pinned by the file
        wait_idle(server)
    other = tmp_path / "other.key"
    generate_server_key(other)
    with secure_server(ports, other) as server:  # same address, another key: refused, exit code 4
        result = run_client(ports, ClientSecurity(known_servers=known))
        assert not result.ok and result.exit_code == EXIT_AUTHENTICATION
        assert result.server_reason == "wrong server key", result
        assert server.stats.rejects.get("wrong_server_key") == 1
        assert server.stats.duologues == 0


def _cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return run_process([sys.executable, *args], capture_output=True, text=True, timeout=timeout, check=False)


def test_client_cli_pinning_the_wrong_key_exits_4_with_a_clear_error(key_file: Path, tmp_path: Path) -> None:
    ports = BLOCKS.take()
    wrong = tmp_path / "wrong.key"
    generate_server_key(wrong)
    with secure_server(ports, key_file) as server:
        base = ["-m", "aeron_py.echo_client", HOST, str(ports.port), str(ports.control), "--secure",
                "--known-servers", str(tmp_path / "known"), "--count", "2"]
        bad = _cli(*base, "--server-key", b64url_encode(public_key(wrong)))
        assert bad.returncode == EXIT_AUTHENTICATION, bad.stderr
        assert "public key this client holds" in bad.stderr and "not its key" in bad.stderr
        good = _cli(*base, "--server-key", b64url_encode(public_key(key_file)))
        assert good.returncode == 0 and good.stdout.startswith("OK 2 echoes"), good.stderr
        malformed = _cli(*base, "--server-key", "not-a-key")
        assert malformed.returncode == 2 and "--server-key must be a 32-byte public key" in malformed.stderr
        wait_idle(server)


def test_asyncio_client_in_secure_mode(key_file: Path, tmp_path: Path) -> None:
    ports = BLOCKS.take()
    with secure_server(ports, key_file) as server:
        security = ClientSecurity(known_servers=KnownServers(tmp_path / "known"))
        result = asyncio.run(run_echo_client(HOST, ports.port, ports.control, count=3, secure=security))
        assert result.ok and result.echoes == 3 and result.secure, result.reason
        wrong = ClientSecurity(server_key=bytes(range(1, 33)))  # a valid point that is not the server's key
        refused = asyncio.run(run_echo_client(HOST, ports.port, ports.control, count=3, secure=wrong))
        assert not refused.ok and refused.exit_code == EXIT_AUTHENTICATION, refused
        wait_idle(server)
        assert server.stats.rejects.get("wrong_server_key") == 1


def test_load_tool_runs_secure_clients(key_file: Path) -> None:
    ports = BLOCKS.take()
    with secure_server(ports, key_file) as server:
        base = ["-m", "aeron_py.echo_load", HOST, str(ports.port), str(ports.control), "--clients", "4",
                "--echoes", "2", "--sources", "127.0.0.2,127.0.0.3", "--no-progress"]
        run = _cli(*base, "--secure", "--server-key", b64url_encode(public_key(key_file)))
        assert run.returncode == 0, run.stderr
        assert '"succeeded": 4' in run.stdout
        assert server.stats.connects == 4 and server.stats.rejects == {}
        plain = _cli(*base)  # plain clients of a secure server: refused, not hung
        assert plain.returncode == 1 and "secure mode required" in plain.stdout + plain.stderr
        unpinned = _cli(*base, "--secure")
        assert unpinned.returncode == 2 and "--secure and --server-key KEY go together" in unpinned.stderr
        wait_idle(server)


def test_a_secure_server_goes_quiet_and_the_next_echo_wakes_it(key_file: Path) -> None:
    """Quiet mode's traffic bell reads sealed datagrams' clear headers: idle secure
    duologues let the server sleep, and a sealed ECHO rings it."""
    ports = BLOCKS.take()
    with secure_server(ports, key_file, options={"quiet_after": 0.3, "quiet_period": 0.02}) as server:
        client = EchoClient(HOST, ports.port, ports.control, count=1, hold=True, timeout=10,
                            secure=ClientSecurity(server_key=public_key(key_file))).open()
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)

        def step_until(done: Callable[[], bool], seconds: float, what: str) -> None:
            deadline = time.monotonic() + seconds
            while not done():
                assert time.monotonic() < deadline and not client.finished, (what, client.result)
                idle.idle(client.step())

        try:
            step_until(lambda: client.holding, 10, "the first echo")
            assert server._driver is not None
            bell = server._driver.traffic
            step_until(lambda: bell.quiet_for() > 0.5, 10, "a quiet spell")
            client.echo_more(1, 0.0, time.monotonic())
            step_until(lambda: client.holding, 10, "the echo after the quiet spell")
            assert len(client.rtts) == 2
        finally:
            client.close()


def test_secure_client_misuse_raises_clear_errors(key_file: Path) -> None:
    with pytest.raises(ValueError, match="32-byte public key"):
        ClientSecurity(server_key=b"too short")
    with pytest.raises(ServerKeyRefused, match="no public key known"):
        EchoClient(HOST, 20001, 20002, secure=ClientSecurity(trust_on_first_use=False))
    with MediaDriver() as driver, Aeron(driver=driver, use_conductor_agent_invoker=True) as aeron:
        client = EchoClient(HOST, 20001, 20002, aeron=aeron, secure=ClientSecurity(server_key=public_key(key_file)))
        with pytest.raises(ValueError, match=r"ClientSecurity\(transport=driver.secure_transport\)"):
            client.open()  # a shared client's driver is not known: say how to pass its transport
        client.close()
        plain_driver = ClientSecurity(server_key=public_key(key_file), transport=None)
        with pytest.raises(AeronError, match="no secure transport"):
            plain_driver.transport_of(driver)  # MediaDriver() without secure_transport=True


@pytest.mark.parametrize("problem", ["mode", "content", "missing"])
def test_server_refuses_a_bad_key_file_at_start(problem: str, tmp_path: Path) -> None:
    path = tmp_path / "server.key"
    if problem != "missing":
        generate_server_key(path)
    if problem == "mode":
        os.chmod(path, 0o644)
    elif problem == "content":
        path.write_text("# not a key\nhello\n")
        os.chmod(path, 0o600)
    # the ports are never bound: the server refuses the key before it opens anything
    run = _cli("-m", "aeron_py.echo_server", "--secure", "--key-file", str(path), "--port", "20497",
               "--control-port", "20498", "--base-port", "20499", "--clients", "1", timeout=30)
    assert run.returncode == 2, run.stderr
    assert "READY" not in run.stdout
    expected = {"mode": "chmod 600", "content": "is not a 32-byte X25519 secret key", "missing": "No such file"}[problem]
    assert "refusing the server key file" in run.stderr and expected in run.stderr, run.stderr


def test_ten_percent_loss_both_ways_loses_no_echo(key_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Aeron's own loss interceptor on every driver made while these are set: 10 % of all
    # received datagrams (every frame type, both drivers) dropped before the secure transport.
    monkeypatch.setenv("AERON_UDP_CHANNEL_INCOMING_INTERCEPTORS", "loss")
    monkeypatch.setenv("AERON_UDP_CHANNEL_TRANSPORT_BINDINGS_LOSS_ARGS", "rate=0.1|recv-msg-mask=0xFFFF|seed=11")
    ports = BLOCKS.take()
    with secure_server(ports, key_file) as server:
        result = run_client(ports, ClientSecurity(server_key=public_key(key_file)), count=100, timeout=30)
        assert result.ok and result.echoes == 100, result.reason
        assert server.driver_dir is not None
        with DriverStat(server.driver_dir) as stat:
            naks = stat.system_counters().get("NAKs received", 0) + stat.system_counters().get("NAKs sent", 0)
        assert naks > 0, "the loss interceptor must have dropped something the drivers repaired"
        counters = transport_counters(server)
        assert counters["dropped_bad_tag"] == 0 and counters["dropped_replay"] == 0, counters


@pytest.mark.soak
@pytest.mark.timeout(240)
def test_a_thousand_secure_cycles_leave_no_key_behind(key_file: Path) -> None:
    """1,000 secure connect/echo/close cycles, 8 at a time from 127.0.0.2-9 on one client driver."""
    ports = CHURN_BLOCKS.take(16)
    with secure_server(ports, key_file, clients=16, options={"linger": 0.05}) as server, \
            MediaDriver(secure_transport=True) as driver, \
            Aeron(driver=driver, use_conductor_agent_invoker=True) as aeron:
        security = ClientSecurity(server_key=public_key(key_file), transport=driver.secure_transport)
        server_transport = server.secure_transport
        assert server_transport is not None
        slots: list[EchoClient | None] = [None] * 8
        started = done = most = 0
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)
        deadline = time.monotonic() + 200
        while done < 1000 and time.monotonic() < deadline:
            work = aeron.do_work()
            for slot, client in enumerate(slots):
                if client is not None and client.finished:
                    client.close()
                    assert client.result is not None and client.result.ok, (done, client.result)
                    done, client = done + 1, None
                if client is None and started < 1000:
                    client = EchoClient(HOST, ports.port, ports.control, count=1, timeout=10, aeron=aeron,
                                        interface=f"127.0.0.{2 + slot}", secure=security).open()
                    started += 1
                slots[slot] = client
                work += client.step() if client is not None else 0
            most = max(most, server_transport.session_count)
            idle.idle(work)
        assert done == 1000 and server.stats.connects == 1000
        wait_idle(server, 10)
        wait_until(lambda: server_transport.session_count == 0 and driver.secure_transport.session_count == 0, 15,
                   "every duologue key removed on both drivers")
        assert server_transport.removals_pending == 0 and driver.secure_transport.removals_pending == 0
        assert most >= 2, "keys were installed while the duologues lived"


def test_telemetry_records_that_duologues_were_secure(key_file: Path, tmp_path: Path) -> None:
    ports = BLOCKS.take()
    events = tmp_path / "events"
    with secure_server(ports, key_file, options={"events": str(events), "snapshot_interval": 0.2}) as server:
        assert run_client(ports, ClientSecurity(server_key=public_key(key_file))).ok
        wait_idle(server)
        wait_until(lambda: any(e["kind"] == "driver_snapshot" and "secure sealed" in e["counters"]
                               for e in read_events(events)), 10, "a snapshot with the secure counters")
    created = [e for e in read_events(events) if e["kind"] == "duologue_created"]
    assert len(created) == 1 and created[0]["secure"] is True
