"""An asyncio application of the duologue layer (AsyncDuologueServer): one coroutine per
duologue, its messages in order, its sends from the loop, handler endings and misuse.
Real driver, real UDP and IPC on loopback; the clients are the layer's blocking ones."""
from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve()
if str(_HERE.parents[1] / "echo") not in sys.path:  # echo_harness
    sys.path.insert(0, str(_HERE.parents[1] / "echo"))

from aeron_py.duologue import (AsyncDuologue, AsyncDuologueServer, CloseReason, DuologueClosed,  # noqa: E402
                               ServerConfig, ServerOptions, connect, connect_ipc)
from echo_harness import HOST, PortBlocks, Ports  # noqa: E402

pytestmark = [pytest.mark.timeout(120), pytest.mark.integration]

BLOCKS = PortBlocks(29800, 30000, size=20)


async def until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


def server(handler: Callable[[AsyncDuologue], object], ports: Ports, **kwargs: object) -> AsyncDuologueServer:
    config = ServerConfig(max_clients=4, clients_base_port=ports.base, max_ipc_clients=2)
    return AsyncDuologueServer(handler, config, ServerOptions(address=HOST, port=ports.port,  # type: ignore[arg-type]
                                                              control_port=ports.control), **kwargs)  # type: ignore[arg-type]


async def test_one_coroutine_per_duologue_in_order_over_udp_and_ipc() -> None:
    ports, seen, ended = BLOCKS.take(4), [], []

    async def numbered(duologue: AsyncDuologue) -> None:
        seen.append((duologue.peer_ip, duologue.secure))
        n = 0
        async for data in duologue:  # ends with the duologue
            n += 1
            duologue.send(b"%d:%s" % (n, data))
        ended.append(duologue.close_reason)

    async with server(numbered, ports) as served:
        assert served.server.driver_dir is not None

        def talk() -> None:
            with connect(HOST, ports.port, ports.control, interface="127.0.0.2") as udp, \
                    connect_ipc(served.server.driver_dir) as ipc:  # type: ignore[arg-type]
                for client in (udp, ipc):
                    for word in (b"a", b"b", b"c"):
                        client.send(word)
                    assert [client.receive(timeout=5) for _ in range(3)] == [b"1:a", b"2:b", b"3:c"]

        await asyncio.to_thread(talk)
        await until(lambda: len(ended) == 2, 15, "both handlers to end")
    assert sorted(seen) == [("127.0.0.2", False), ("ipc", False)]
    assert set(ended) == {CloseReason.CLIENT_GONE}


async def test_a_handler_that_returns_or_raises_closes_its_duologue() -> None:
    ports = BLOCKS.take(4)

    async def once_then(duologue: AsyncDuologue) -> None:
        data = await duologue.receive(timeout=5)
        assert data is not None
        duologue.send(data)
        if data == b"raise":
            raise RuntimeError("the handler's bug")
        # returning closes the duologue

    async with server(once_then, ports) as served:
        def talk(word: bytes) -> None:
            with connect(HOST, ports.port, ports.control, interface="127.0.0.3") as client:
                client.send(word)
                assert client.receive(timeout=5) == word
                with pytest.raises(DuologueClosed):
                    for _ in range(100):  # bounded: the close arrives within the timeout
                        client.receive(timeout=10)

        await asyncio.to_thread(talk, b"return")
        await asyncio.to_thread(talk, b"raise")
        await until(lambda: served.server.stats.duologues == 0, 15, "the duologues to close")
        assert served.server.stats.closes.get("application") == 2


async def test_reject_sends_bad_message_and_a_closed_duologue_refuses_use() -> None:
    ports, handles = BLOCKS.take(4), []

    async def rejecting(duologue: AsyncDuologue) -> None:
        handles.append(duologue)
        assert await duologue.receive(timeout=5) == b"nonsense"
        duologue.reject()
        with pytest.raises(DuologueClosed):
            await duologue.receive(timeout=10)

    async with server(rejecting, ports):
        def talk() -> None:
            with connect(HOST, ports.port, ports.control, interface="127.0.0.4") as client:
                client.send(b"nonsense")
                with pytest.raises(DuologueClosed, match="bad message"):
                    client.receive(timeout=10)

        await asyncio.to_thread(talk)
        await until(lambda: bool(handles) and handles[0].closed, 15, "the duologue to close")
    (duologue,) = handles
    assert duologue.close_reason is CloseReason.BAD_MESSAGE and duologue.info() is None
    with pytest.raises(DuologueClosed):
        duologue.send(b"late")
    with pytest.raises(ValueError, match="timeout"):
        await duologue.receive(timeout=-1)


async def test_a_handler_that_falls_behind_loses_its_duologue_not_the_server() -> None:
    ports, release = BLOCKS.take(4), asyncio.Event()

    async def stuck(duologue: AsyncDuologue) -> None:
        await release.wait()  # never reads: the server must not queue without bound
        async for data in duologue:
            duologue.send(data)

    async with server(stuck, ports, max_pending=5) as served:
        def flood() -> None:
            with connect(HOST, ports.port, ports.control, interface="127.0.0.5") as client:
                with pytest.raises(DuologueClosed):
                    for n in range(200):  # bounded
                        client.send(b"%d" % n)
                        client.receive(timeout=0)
                    client.receive(timeout=10)

        await asyncio.to_thread(flood)
        await until(lambda: served.server.stats.duologues == 0, 15, "the duologue to close")
        release.set()
        assert served.server.stats.closes.get("application") == 1


def test_bad_arguments() -> None:
    ports = BLOCKS.take(1)
    with pytest.raises(ValueError, match="max_pending"):
        server(lambda d: None, ports, max_pending=0)
    with pytest.raises(RuntimeError, match="start"):
        server(lambda d: None, ports).server
