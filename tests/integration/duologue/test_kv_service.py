"""The second application of the duologue layer, examples/kv_service.py: a key-value
service written only against aeron_py.duologue. Real drivers, real UDP on loopback:
requests and replies across clients, a bad request, the bounded store, the example's
command line, and a HELLO flood from many addresses while a client is still served."""
from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve()
for extra in (_HERE.parents[1] / "echo", _HERE.parents[3] / "examples"):  # echo_harness; kv_service
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from aeron_py.duologue import (ClientDuologue, CloseReason, Duologue, DuologueClosed, DuologueError,  # noqa: E402
                               DuologueServer, ServerConfig, ServerOptions, connect)
from aeron_py.echo.load.flood import FloodReport, HelloFlood  # noqa: E402
from echo_harness import HOST, PortBlocks, Ports, wait_until  # noqa: E402
from kv_service import KeyValueStore  # noqa: E402
from processes import ChildProcess  # noqa: E402

pytestmark = [pytest.mark.timeout(90), pytest.mark.integration]

BLOCKS = PortBlocks(29000, 29500, size=40)  # shares test_echo_survival's range only by name: free ports are checked
EXAMPLE = _HERE.parents[3] / "examples" / "kv_service.py"


class Store(KeyValueStore):
    """The example's store, recording closes for the assertions (a test double of the app only)."""

    def __init__(self, max_keys: int = 10_000) -> None:
        super().__init__(max_keys)
        self.closes: list[CloseReason] = []

    def closed(self, duologue: Duologue, reason: CloseReason) -> None:
        self.closes.append(reason)


def kv_server(ports: Ports, store: KeyValueStore, clients: int = 8) -> DuologueServer:
    config = ServerConfig(max_clients=clients, clients_base_port=ports.base)
    return DuologueServer(store, config, ServerOptions(address=HOST, port=ports.port, control_port=ports.control))


def ask(duologue: ClientDuologue, request: bytes) -> bytes | None:
    duologue.send(request)
    return duologue.receive(timeout=5)


@pytest.fixture
def served() -> Iterator[tuple[Ports, Store]]:
    ports, store = BLOCKS.take(8), Store(max_keys=3)
    with kv_server(ports, store):
        yield ports, store


def test_clients_share_the_store(served: tuple[Ports, Store]) -> None:
    ports, store = served
    with connect(HOST, ports.port, ports.control, interface="127.0.0.2") as a, \
            connect(HOST, ports.port, ports.control, interface="127.0.0.3") as b:
        assert ask(a, b"SET colour blue") == b"OK"
        assert ask(b, b"GET colour") == b"VALUE blue"
        assert ask(b, b"DEL colour") == b"OK"
        assert ask(a, b"GET colour") == b"NONE"
        assert ask(a, b"DEL colour") == b"NONE"
    assert store.requests == 5
    wait_until(lambda: len(store.closes) == 2, 15, "both duologues to close")
    assert set(store.closes) == {CloseReason.CLIENT_GONE}


def test_the_store_is_bounded_and_a_bad_request_closes_the_duologue(served: tuple[Ports, Store]) -> None:
    ports, store = served
    with connect(HOST, ports.port, ports.control, interface="127.0.0.4") as client:
        for n in range(3):
            assert ask(client, f"SET k{n} v".encode()) == b"OK"
        assert ask(client, b"SET k3 v") == b"FULL"  # max_keys=3
        assert ask(client, b"SET k0 w") == b"OK"    # replacing needs no room
        client.send(b"FETCH everything")
        with pytest.raises(DuologueClosed, match="bad message"):
            client.receive(timeout=5)
    wait_until(lambda: CloseReason.BAD_MESSAGE in store.closes, 10, "the bad request's close")


def test_the_example_serves_its_command_line(tmp_path: Path) -> None:
    ports = BLOCKS.take(4)
    flags = ["--port", str(ports.port), "--control-port", str(ports.control)]
    with ChildProcess([sys.executable, str(EXAMPLE), "serve", *flags, "--base-port", str(ports.base),
                       "--clients", "4"], cwd=tmp_path) as server:
        server.wait_for_line("READY", timeout=30)
        with ChildProcess([sys.executable, str(EXAMPLE), "call", *flags, "SET a 1", "GET a", "GET b"],
                          cwd=tmp_path) as call:
            assert call.wait(timeout=60) == 0, call.output_tail()
        assert call.stdout_lines == ["SET a 1 -> OK", "GET a -> VALUE 1", "GET b -> NONE"], call.output_tail()
        server.stop(signal.SIGINT)
    assert server.returncode == 0 and "served 3 requests, 1 keys" in server.stdout_lines, server.output_tail()


def test_a_client_is_served_during_a_hello_flood_from_many_addresses() -> None:
    """60 addresses flood HELLOs for 12 s at a server with 4 places, as the Echo flood test
    does: each flooding source is refused, penalised and dropped in the driver after 20
    refused HELLOs; a client from a new address each try is served while it lasts."""
    ports, store = BLOCKS.take(4), Store()
    with kv_server(ports, store, clients=4):
        started, reports = threading.Event(), list[FloodReport]()

        def flood() -> None:
            with HelloFlood(HOST, ports.port, ports.control, [f"127.0.3.{i}" for i in range(2, 62)], seed=5) as f:
                reports.append(f.run(12.0, on_start=started.set))

        thread = threading.Thread(target=flood, name="flood")
        thread.start()
        served_during, tries = False, 0
        try:
            wait_until(started.is_set, 20, "the flood to start")
            while thread.is_alive() and not served_during and tries < 30:
                tries += 1
                try:
                    with connect(HOST, ports.port, ports.control, interface=f"127.0.4.{tries}", timeout=5) as client:
                        served_during = ask(client, b"SET during flood") == b"OK" and thread.is_alive()
                except DuologueError as exc:  # refused, timed out or closed: the next address tries
                    print(f"try {tries}: {exc!r}")
        finally:
            thread.join(40)
        assert served_during, f"no client served during the flood in {tries} tries"
        assert reports and reports[0].connected_sources >= 40, reports
        with connect(HOST, ports.port, ports.control, interface="127.0.4.99") as after:  # and right after it
            assert ask(after, b"GET during") == b"VALUE flood"
