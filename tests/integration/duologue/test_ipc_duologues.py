"""Same-host clients over IPC: a client of the server's own media driver handshakes and
runs its duologue on ``aeron:ipc`` channels, under a limit of its own, beside UDP clients.
Real driver, real IPC and real UDP on loopback."""
from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve()
if str(_HERE.parents[1] / "echo") not in sys.path:  # echo_harness
    sys.path.insert(0, str(_HERE.parents[1] / "echo"))

from aeron_py.duologue import (CloseReason, Duologue, DuologueClosed, DuologueRefused,  # noqa: E402
                               DuologueServer, DuologueTimeout, ServerConfig, ServerOptions, connect, connect_ipc,
                               connect_ipc_async)
from aeron_py.errors import AeronError  # noqa: E402
from echo_harness import HOST, PortBlocks, Ports, wait_until  # noqa: E402

pytestmark = [pytest.mark.timeout(120), pytest.mark.integration]

BLOCKS = PortBlocks(29500, 29800, size=20)
IPC_CLIENTS = 24


class Upper:
    """Answers each message in capitals; ``BYE`` closes the duologue; records who it served."""

    def __init__(self) -> None:
        self.peers: list[tuple[str, bool]] = []
        self.closes: list[CloseReason] = []

    def received(self, duologue: Duologue, data: bytes) -> None:
        self.peers.append((duologue.peer_ip, duologue.secure))
        assert duologue.source_key == duologue.peer_ip  # IPv4 and "ipc" count as themselves
        if data == b"BYE":
            duologue.close()
        else:
            duologue.send(data.upper())

    def closed(self, duologue: Duologue, reason: CloseReason) -> None:
        self.closes.append(reason)


@pytest.fixture
def served() -> Iterator[tuple[DuologueServer, Ports, Upper]]:
    ports, app = BLOCKS.take(2), Upper()
    config = ServerConfig(max_clients=2, clients_base_port=ports.base, max_ipc_clients=IPC_CLIENTS)
    with DuologueServer(app, config, ServerOptions(address=HOST, port=ports.port,
                                                   control_port=ports.control)) as server:
        yield server, ports, app


def test_an_ipc_duologue_round_trips_through_the_servers_driver(served: tuple[DuologueServer, Ports, Upper]) -> None:
    server, _, app = served
    assert server.driver_dir is not None
    with connect_ipc(server.driver_dir, timeout=10) as duologue:
        for n in range(20):
            duologue.send(b"ping %d" % n)
            assert duologue.receive(timeout=5) == b"PING %d" % n
        (info,) = server.duologues
        assert info.ipc and info.owner_ip == "ipc" and info.msgs_in == 20
    assert set(app.peers) == {("ipc", False)}
    wait_until(lambda: server.stats.duologues == 0, 15, "the IPC duologue to close")
    assert app.closes == [CloseReason.CLIENT_GONE]


def test_ipc_and_udp_clients_are_served_side_by_side(served: tuple[DuologueServer, Ports, Upper]) -> None:
    server, ports, _ = served
    assert server.driver_dir is not None
    with connect_ipc(server.driver_dir) as local, \
            connect(HOST, ports.port, ports.control, interface="127.0.0.2") as remote:
        local.send(b"local")
        remote.send(b"remote")
        assert local.receive(timeout=5) == b"LOCAL"
        assert remote.receive(timeout=5) == b"REMOTE"
        assert server.stats.ipc_duologues == 1 and server.stats.duologues == 2


def test_many_ipc_clients_at_once_then_the_limit(served: tuple[DuologueServer, Ports, Upper]) -> None:
    server, _, _ = served
    assert server.driver_dir is not None
    clients = []
    try:
        for _ in range(IPC_CLIENTS):
            clients.append(connect_ipc(server.driver_dir))
        for n, client in enumerate(clients):
            client.send(b"c%d" % n)
        for n, client in enumerate(clients):
            assert client.receive(timeout=5) == b"C%d" % n
        assert server.stats.ipc_duologues == IPC_CLIENTS
        with pytest.raises(DuologueRefused, match="server full"):
            connect_ipc(server.driver_dir, timeout=5)
        clients.pop().send(b"BYE")  # the application closes it: its place is free again
        wait_until(lambda: server.stats.ipc_duologues == IPC_CLIENTS - 1, 10, "the place to be free")
        clients.append(connect_ipc(server.driver_dir))
    finally:
        for client in clients:
            client.close()


def test_the_server_closing_an_ipc_duologue_reaches_its_client(served: tuple[DuologueServer, Ports, Upper]) -> None:
    server, _, _ = served
    assert server.driver_dir is not None
    with connect_ipc(server.driver_dir) as duologue:
        duologue.send(b"BYE")
        with pytest.raises(DuologueClosed):
            for _ in range(100):  # bounded: the close arrives within the timeout
                duologue.receive(timeout=10)


async def test_an_ipc_duologue_on_asyncio(served: tuple[DuologueServer, Ports, Upper]) -> None:
    server, _, _ = served
    assert server.driver_dir is not None
    async with await connect_ipc_async(server.driver_dir, timeout=10) as duologue:
        for n in range(5):
            await duologue.send(b"async %d" % n)
            assert await duologue.receive(timeout=5) == b"ASYNC %d" % n
        await duologue.send(b"BYE")
        assert [message async for message in duologue] == []  # the application closed it: iteration ends


def test_a_server_without_ipc_clients_answers_nobody_over_ipc(tmp_path: Path) -> None:
    ports = BLOCKS.take(1)
    config = ServerConfig(max_clients=1, clients_base_port=ports.base)
    with DuologueServer(Upper(), config, ServerOptions(address=HOST, port=ports.port,
                                                       control_port=ports.control)) as server:
        assert server.driver_dir is not None
        with pytest.raises(DuologueTimeout, match="IPC through the media driver"):
            connect_ipc(server.driver_dir, timeout=1.5)


def test_connect_ipc_misuse_gives_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="timeout"):
        connect_ipc(tmp_path, timeout=0)
    with pytest.raises(ValueError, match="max_message"):
        connect_ipc(tmp_path, max_message=0)
    with pytest.raises(AeronError):  # no media driver there
        connect_ipc(tmp_path / "nobody", timeout=1)
