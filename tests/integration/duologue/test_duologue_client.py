"""The client duologue (aeron_py.duologue.client) against a real Echo 2.0 server: real
drivers, real UDP on loopback (127.0.0.x).

Echo is the application here: ``ECHO <payload>`` comes back as it went, anything else
is answered ``ERROR bad message`` and the duologue closed.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_ECHO_TESTS = str(Path(__file__).resolve().parents[1] / "echo")  # echo_harness, imported as the echo tests do
if _ECHO_TESTS not in sys.path:
    sys.path.insert(0, _ECHO_TESTS)

from aeron_py import Aeron, MediaDriver  # noqa: E402
from aeron_py.duologue.client import ClientDuologue, connect  # noqa: E402
from aeron_py.duologue.client_channels import ClientChannels  # noqa: E402
from aeron_py.duologue.core.client import EchoClientCore  # noqa: E402
from aeron_py.duologue.handshake import ClientHandshake, HandshakePhase  # noqa: E402
from aeron_py.duologue.errors import CLOSED_HERE, SERVER_GONE, DuologueClosed, DuologueRefused, DuologueTimeout  # noqa: E402
from aeron_py.duologue.keys import generate_server_key, server_secrets  # noqa: E402
from echo_harness import HOST, PortBlocks, Ports, make_server, wait_idle, wait_until  # noqa: E402

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

# Below the ephemeral range; no other test module takes ports from here (test_echo_survival's
# range nominally reaches 32700, but its 9 blocks of 40 end near 31860).
BLOCKS = PortBlocks(32400, 32700, size=30)


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "server.key"
    generate_server_key(path)
    return path


def public_key(key_file: Path) -> bytes:
    key: bytes = server_secrets(key_file).static_keypair[0]
    return key


def open_duologue(ports: Ports, **kwargs: Any) -> ClientDuologue:
    return connect(HOST, ports.port, ports.control, **kwargs)


@pytest.fixture
def ports() -> Iterator[Ports]:
    yield BLOCKS.take(4)


def test_connect_send_receive(ports: Ports) -> None:
    with make_server(ports, 4) as server:
        with open_duologue(ports, timeout=10.0) as duologue:
            assert not duologue.secure and not duologue.closed and duologue.close_reason is None
            assert repr(duologue) == f"<ClientDuologue {duologue.session_id} with {HOST}:{ports.port} open>"
            assert [d.session_id for d in server.duologues] == [duologue.session_id]
            assert duologue.receive(timeout=0) is None  # nothing yet: no wait
            assert duologue.poll(lambda _: None) == 0

            duologue.send(b"ECHO hi")
            assert duologue.receive(timeout=5.0) == b"ECHO hi"

            sent = [b"ECHO one", b"ECHO two", b"ECHO " + b"x" * 1019]  # the last: 1024 bytes, the limit
            for text in sent:
                duologue.send(text)
            got: list[bytes] = []
            wait_until(lambda: duologue.poll(got.append, limit=2) >= 0 and len(got) == 3, 5.0, "three echoes")
            assert got == sent
            assert duologue.receive(timeout=0.05) is None
        assert duologue.closed and duologue.close_reason == CLOSED_HERE
        assert "closed (closed by this client)" in repr(duologue)
        # end of stream went out before the embedded driver stopped: the server frees the
        # duologue at once, not after its 5 s image liveness
        wait_idle(server, timeout=4.0)


def test_a_message_the_server_refuses_closes_the_duologue(ports: Ports) -> None:
    with make_server(ports, 4) as server, open_duologue(ports) as duologue:
        duologue.send(b"ECHO before")
        duologue.send(b"not an echo")
        assert duologue.receive(timeout=5.0) == b"ECHO before"  # what came before the ERROR is delivered
        with pytest.raises(DuologueClosed) as closed:
            duologue.receive(timeout=5.0)
        assert closed.value.reason == "bad message"
        assert duologue.closed and duologue.close_reason == "bad message"
        with pytest.raises(DuologueClosed, match="bad message"):  # and stays closed, for every call
            duologue.receive(timeout=0)
        with pytest.raises(DuologueClosed, match="bad message"):
            duologue.poll(lambda _: None)
        with pytest.raises(DuologueClosed, match="bad message"):
            duologue.send(b"ECHO after")
        wait_until(lambda: not server.duologues, 5.0, "the server to close the duologue")


def test_the_server_going_away_closes_the_duologue(ports: Ports) -> None:
    """A server that stops without end of stream (its shutdown does not linger): the
    duologue's image goes after the client driver's image liveness (1 s here, on a shared
    client with its own conductor thread; 10 s by default)."""
    with MediaDriver(image_liveness_timeout_ns=1_000_000_000, publication_linger_timeout_ns=100_000_000) as driver, \
            Aeron(driver=driver) as aeron:
        server = make_server(ports, 4)
        try:
            duologue = open_duologue(ports, aeron=aeron)
        finally:
            server.close()
        with duologue:
            started = time.monotonic()
            with pytest.raises(DuologueClosed) as closed:
                duologue.receive()  # no timeout: until a message or the close
            assert closed.value.reason == SERVER_GONE
            assert time.monotonic() - started < 8.0
            with pytest.raises(DuologueClosed, match="the server closed the duologue"):
                duologue.send(b"ECHO anyone?", timeout=1.0)
        assert not aeron.is_closed


def test_the_servers_refusal_is_a_typed_error(ports: Ports) -> None:
    with make_server(ports, 4, max_per_ip=1) as server, \
            open_duologue(ports, interface="127.0.0.3") as first:
        with pytest.raises(DuologueRefused) as refused:
            open_duologue(ports, interface="127.0.0.3", timeout=10.0)
        assert refused.value.reason == "too many connections for IP address"
        assert "too many connections for IP address" in str(refused.value)
        assert server.stats.rejects == {"max_per_ip": 1}
        first.send(b"ECHO still here")  # the first one is unharmed
        assert first.receive(timeout=5.0) == b"ECHO still here"
        with open_duologue(ports, interface="127.0.0.4") as other:  # another source is admitted
            assert other.session_id != first.session_id


def test_no_server_is_a_timeout_within_the_bound(ports: Ports) -> None:
    started = time.monotonic()
    with pytest.raises(DuologueTimeout) as timed_out:
        open_duologue(ports, timeout=1.0)
    elapsed = time.monotonic() - started
    assert 1.0 <= elapsed < 4.0, elapsed  # the bound, plus stopping the embedded driver
    assert isinstance(timed_out.value, TimeoutError)
    assert "all-clients channels" in timed_out.value.waiting_for
    assert f"port {ports.port} control {ports.control}" in str(timed_out.value)


def test_a_late_step_in_the_join_phase_still_says_no_server(ports: Ports) -> None:
    """Every phase has one deadline: a step long after the join deadline fails the join
    (no server answering), never the HELLO phase's CONNECT wait that has not begun."""
    core = EchoClientCore(timeout=1.0)
    channels = ClientChannels(HOST, ports.port, ports.control, invoker=False)
    channels.open()
    try:
        handshake = ClientHandshake(channels, core, timeout=1.0)
        handshake.start(now=100.0)
        handshake.step(now=100.001)  # nobody there: still joining
        assert handshake.phase is HandshakePhase.JOIN
        handshake.step(now=105.0)  # both 1 s bounds are long past
        failed = handshake.failed
        assert failed is not None and failed.timed_out
        assert "no server answering" in failed.reason, failed.reason
        assert "all-clients channels" in (failed.waiting_for or "")
    finally:
        channels.close()


def test_misuse_raises_clear_errors(ports: Ports) -> None:
    with pytest.raises(ValueError, match="timeout"):
        open_duologue(ports, timeout=0)
    with pytest.raises(ValueError, match="key"):
        open_duologue(ports, key=5, secure_key=bytes(32))
    with pytest.raises(ValueError, match="max_message"):
        open_duologue(ports, max_message=0)
    with make_server(ports, 4):
        duologue = open_duologue(ports, max_message=16, key=0x611786D9)
        with duologue:
            with pytest.raises(ValueError, match="longer than max_message"):
                duologue.send(b"ECHO " + b"y" * 12)  # 17 bytes: refused before sending
            duologue.send(b"ECHO " + b"y" * 11)  # 16: the duologue is unharmed
            assert duologue.receive(timeout=5.0) == b"ECHO " + b"y" * 11
            with pytest.raises(ValueError, match="timeout"):
                duologue.receive(timeout=-1)
            with pytest.raises(ValueError, match="limit"):
                duologue.poll(lambda _: None, limit=0)
        duologue.close()  # idempotent
        with pytest.raises(DuologueClosed) as closed:
            duologue.send(b"ECHO late")
        assert closed.value.reason == CLOSED_HERE
        with pytest.raises(DuologueClosed):
            duologue.receive(timeout=0)


def test_a_duologue_on_a_shared_client_in_invoker_mode(ports: Ports) -> None:
    """The shared client's duty cycle runs in the duologue's waits; closing the duologue
    leaves the client open."""
    with make_server(ports, 4) as server, MediaDriver(publication_linger_timeout_ns=100_000_000) as driver, \
            Aeron(driver=driver, use_conductor_agent_invoker=True) as aeron:
        with pytest.raises(ValueError, match="secure_transport"):  # secure mode needs that driver's transport
            open_duologue(ports, aeron=aeron, secure_key=bytes(32))
        with open_duologue(ports, aeron=aeron) as duologue:
            duologue.send(b"ECHO shared")
            assert duologue.receive(timeout=5.0) == b"ECHO shared"
        assert not aeron.is_closed
        wait_until(lambda: aeron.do_work() >= 0 and not server.duologues, 5.0, "the server to free the duologue")


def test_secure_mode_connects_and_echoes(ports: Ports, key_file: Path) -> None:
    with make_server(ports, 4, secure=server_secrets(key_file)) as server:
        with open_duologue(ports, secure_key=public_key(key_file)) as duologue:
            assert duologue.secure and " secure open>" in repr(duologue)
            (info,) = server.duologues
            assert info.secure and info.session_id == duologue.session_id
            duologue.send(b"ECHO sealed")
            assert duologue.receive(timeout=5.0) == b"ECHO sealed"
        with MediaDriver(secure_transport=True, publication_linger_timeout_ns=100_000_000) as driver, \
                Aeron(driver=driver) as aeron:  # a shared client: the keys go in its driver's secure transport
            with open_duologue(ports, secure_key=public_key(key_file), aeron=aeron,
                               secure_transport=driver.secure_transport) as shared:
                shared.send(b"ECHO sealed too")
                assert shared.receive(timeout=5.0) == b"ECHO sealed too"
        with pytest.raises(DuologueRefused) as refused:  # a key that is not the server's
            open_duologue(ports, secure_key=bytes(range(1, 33)))
        assert refused.value.reason == "wrong server key"
        with pytest.raises(DuologueRefused) as plain:  # a plain HELLO to a secure server
            open_duologue(ports)
        assert plain.value.reason == "secure mode required"


def test_a_server_shutting_down_reaches_its_clients_by_end_of_stream(ports: Ports) -> None:
    """The server keeps its driver up for the duologues' end of stream: a client learns of
    the shutdown from it. Its driver's image liveness is a minute, longer than the wait, so
    only the end of stream can close the duologue in time."""
    server = make_server(ports)
    with MediaDriver(image_liveness_timeout_ns=60_000_000_000) as driver, Aeron(driver=driver) as aeron, \
            open_duologue(ports, aeron=aeron) as duologue:
        duologue.send(b"ECHO up")
        assert duologue.receive(timeout=5) == b"ECHO up"
        server.close()
        with pytest.raises(DuologueClosed, match="server"):
            duologue.receive(timeout=20)
