"""The asyncio client duologue (aeron_py.duologue.async_client) against a real
DuologueServer: real drivers, real UDP on loopback (127.0.0.x).

The application echoes every message, closes the duologue on ``CLOSE`` and rejects
``BAD`` (``ERROR bad message``).
"""
from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

_ECHO_TESTS = str(Path(__file__).resolve().parents[1] / "echo")  # echo_harness, imported as the echo tests do
if _ECHO_TESTS not in sys.path:
    sys.path.insert(0, _ECHO_TESTS)

from aeron_py.duologue import (AsyncClientDuologue, Duologue, DuologueClosed, DuologueRefused,  # noqa: E402
                               DuologueServer, ServerConfig, ServerOptions, connect_async)
from aeron_py.duologue.errors import CLOSED_HERE, SERVER_GONE  # noqa: E402
from echo_harness import HOST, PortBlocks, Ports  # noqa: E402

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

# Between test_echo_survival's blocks (ending near 31860) and test_duologue_client's (32400).
BLOCKS = PortBlocks(31900, 32400, size=20)


class EchoOrClose:
    def received(self, duologue: Duologue, data: bytes) -> None:
        if data == b"CLOSE":
            duologue.close()
        elif data == b"BAD":
            duologue.reject()
        else:
            duologue.send(data)


def serve(ports: Ports, clients: int = 4) -> DuologueServer:
    return DuologueServer(EchoOrClose(), ServerConfig(max_clients=clients, clients_base_port=ports.base),
                          ServerOptions(address=HOST, port=ports.port, control_port=ports.control))


@pytest.fixture
def ports() -> Iterator[Ports]:
    yield BLOCKS.take(4)


@pytest.fixture
def served(ports: Ports) -> Iterator[Ports]:
    with serve(ports):
        yield ports


async def open_duologue(ports: Ports, **kwargs: Any) -> AsyncClientDuologue:
    return await connect_async(HOST, ports.port, ports.control, **kwargs)


async def until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    """Await ``condition()`` (looking every 10 ms, the loop running), at most ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.01)


async def test_round_trip_of_several_messages(served: Ports) -> None:
    async with await open_duologue(served, timeout=10.0) as duologue:
        assert not duologue.closed and duologue.close_reason is None and not duologue.secure
        assert repr(duologue).startswith(f"<AsyncClientDuologue {duologue.session_id} with {HOST}:")
        for n in range(3):  # one at a time
            await duologue.send(f"one {n}".encode())
            assert await duologue.receive(timeout=5.0) == f"one {n}".encode()
        sent = [f"many {n}".encode() for n in range(10)] + [b"x" * 1024]  # pipelined; the last at the limit
        for data in sent:
            await duologue.send(data)
        assert [await duologue.receive(timeout=5.0) for _ in sent] == sent
        with pytest.raises(ValueError, match="longer than max_message"):
            await duologue.send(b"x" * 1025)
    assert duologue.closed and duologue.close_reason == CLOSED_HERE
    await duologue.aclose()  # idempotent, and so is close()
    duologue.close()
    with pytest.raises(DuologueClosed, match=CLOSED_HERE):
        await duologue.receive(timeout=0)
    with pytest.raises(DuologueClosed, match=CLOSED_HERE):
        await duologue.send(b"late")


async def test_iteration_ends_when_the_server_closes_and_raises_on_its_error(served: Ports) -> None:
    async with await open_duologue(served) as duologue:
        for data in (b"first", b"second", b"CLOSE"):
            await duologue.send(data)
        async with asyncio.timeout(15):
            got = [message async for message in duologue]
        assert got == [b"first", b"second"]  # every message before the close, then the end
        assert duologue.closed and duologue.close_reason == SERVER_GONE
    async with await open_duologue(served) as duologue:
        for data in (b"before", b"BAD", b"after"):
            await duologue.send(data)
        got = []
        with pytest.raises(DuologueClosed) as closed:
            async with asyncio.timeout(15):
                async for message in duologue:
                    got.append(message)
        assert got == [b"before"] and closed.value.reason == "bad message"
        assert duologue.close_reason == "bad message"


async def test_receive_times_out_with_none_and_loses_nothing(served: Ports) -> None:
    async with await open_duologue(served) as duologue:
        assert await duologue.receive(timeout=0) is None
        started = time.monotonic()
        assert await duologue.receive(timeout=0.3) is None
        assert 0.3 <= time.monotonic() - started < 2.0
        with pytest.raises(TimeoutError):  # a receive cancelled by the caller's own timeout
            async with asyncio.timeout(0.2):
                await duologue.receive()
        await duologue.send(b"still here")
        assert await duologue.receive(timeout=5.0) == b"still here"
        with pytest.raises(ValueError, match="timeout"):
            await duologue.receive(timeout=-1)


async def test_a_second_receiver_and_another_loop_are_refused(served: Ports) -> None:
    async with await open_duologue(served) as duologue:
        waiting = asyncio.create_task(duologue.receive(timeout=10.0))
        await asyncio.sleep(0)  # the task runs to its first wait
        with pytest.raises(RuntimeError, match="receive already in progress"):
            await duologue.receive(timeout=0)
        with pytest.raises(RuntimeError, match="receive already in progress"):
            await anext(aiter(duologue))
        with pytest.raises(RuntimeError, match="another event loop"):
            await asyncio.to_thread(asyncio.run, duologue.receive(timeout=0))
        await duologue.send(b"for the first")
        assert await waiting == b"for the first"
        assert await duologue.receive(timeout=0) is None  # and one receiver at a time is fine again


async def test_cancelling_connect_closes_what_it_opened(ports: Ports) -> None:
    """Nobody answers at ``ports``: the handshake would wait 20 s.  Cancelled while the
    embedded driver starts, and again once its client is up, it is closed within a few
    seconds and leaves no thread (the handshake's, the client's event thread) behind."""
    before = threading.active_count()
    for cancel_when_client_is_up in (False, True):
        task = asyncio.create_task(open_duologue(ports, timeout=20.0))
        if cancel_when_client_is_up:
            await until(lambda: any(t.name.startswith("aeron-py-events") for t in threading.enumerate()), 15,
                        "the handshake's Aeron client to start")
        else:
            await asyncio.sleep(0)
        assert any(t.name.startswith("duologue-connect") for t in threading.enumerate())
        started = time.monotonic()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert time.monotonic() - started < 5.0
        await until(lambda: threading.active_count() == before, 5.0,
                    f"the threads to end (left: {[t.name for t in threading.enumerate()]})")


async def test_a_full_server_refuses(ports: Ports) -> None:
    with serve(ports, clients=1):
        async with await open_duologue(ports, interface="127.0.0.2") as first:
            with pytest.raises(DuologueRefused) as refused:
                await open_duologue(ports, interface="127.0.0.3", timeout=10.0)
            assert refused.value.reason == "server full"
            await first.send(b"unharmed")
            assert await first.receive(timeout=5.0) == b"unharmed"
