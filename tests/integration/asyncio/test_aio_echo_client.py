"""The asyncio Echo 2.0 client (aeron_py.echo.client.async_client, echo_client --asyncio) against the
real server over UDP loopback, under asyncio and uvloop."""
from __future__ import annotations

import asyncio
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import aeron_py.asyncio as aio
from aeron_py import MediaDriver
from aeron_py.echo.client.async_client import AsyncEchoClient
from aeron_py.duologue.server import DuologueServer, ServerOptions
from aeron_py.echo.server import echo_server
from aeron_py.duologue.core.contract import ServerConfig
from processes import run_process

pytestmark = [pytest.mark.integration, pytest.mark.timeout(90)]

HOST = "127.0.0.1"
# This module's ports: [32700, 32768) in blocks of 30 (port, control, then duologue ports from +10);
# one server serves the whole module.
BLOCK = 30
_BLOCKS = iter(range(32700, 32768 - BLOCK + 1, BLOCK))


def _free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.bind((HOST, port))
        except OSError:
            return False
    return True


def _take_block() -> int:
    for first in _BLOCKS:
        if all(_free(p) for p in range(first, first + BLOCK)):
            return first
    raise RuntimeError("asyncio echo test port range exhausted")


@pytest.fixture(scope="module")
def server() -> Iterator[DuologueServer]:
    first = _take_block()
    echo = echo_server(ServerConfig(max_clients=(BLOCK - 10) // 2, clients_base_port=first + 10),
                      ServerOptions(address=HOST, port=first, control_port=first + 1))
    with echo.start() as running:
        yield running


async def test_async_echo_client_against_the_server(server: DuologueServer) -> None:
    options = server.options
    client = AsyncEchoClient(HOST, options.port, options.control_port, count=5, timeout=10.0)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.001)
            ticks += 1

    ticking = asyncio.ensure_future(ticker())
    result = await asyncio.wait_for(client.run(), 60)
    ticking.cancel()
    assert result.ok, result.reason
    assert result.echoes == 5 and len(result.rtts) == 5 and result.exit_code == 0
    assert result.session_id is not None and result.source_ip == HOST
    assert ticks > 0, "the event loop was blocked during the whole run"


async def test_async_echo_clients_share_one_client(server: DuologueServer) -> None:
    """Two duologues at once on one shared asyncio client, from two source addresses."""
    options = server.options
    with MediaDriver(publication_linger_timeout_ns=100_000_000) as driver:
        async with aio.Aeron(driver=driver) as aeron:
            clients = [AsyncEchoClient(HOST, options.port, options.control_port, count=3, message=f"from {ip}",
                                       interface=ip, aeron=aeron) for ip in ("127.0.0.2", "127.0.0.3")]
            results = await asyncio.wait_for(asyncio.gather(*(c.run() for c in clients)), 60)
    assert [r.ok for r in results] == [True, True], [r.reason for r in results]
    assert sorted(r.source_ip or "" for r in results) == ["127.0.0.2", "127.0.0.3"]
    assert results[0].session_id != results[1].session_id


def test_echo_client_cli_asyncio(server: DuologueServer, tmp_path: Path) -> None:
    options = server.options
    for flag in ("--asyncio", "--uvloop"):
        done = run_process([sys.executable, "-m", "aeron_py.echo_client", HOST, str(options.port),
                            str(options.control_port), "--count", "2", flag], capture_output=True, text=True,
                           timeout=60, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("OK 2 echoes"), done.stdout


async def test_async_echo_client_reports_no_server() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as a, socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as b:
        a.bind((HOST, 0))
        b.bind((HOST, 0))
        port, control = a.getsockname()[1], b.getsockname()[1]  # nobody serves here
    result = await asyncio.wait_for(AsyncEchoClient(HOST, port, control, timeout=1.0).run(), 30)
    assert not result.ok and result.exit_code == 3
    assert result.reason is not None and "no server answering" in result.reason


def test_example_runs_concurrent_clients(server: DuologueServer, tmp_path: Path) -> None:
    options = server.options
    example = Path(__file__).resolve().parents[3] / "examples" / "echo2_async_client.py"
    done = run_process([sys.executable, str(example), HOST, str(options.port), str(options.control_port),
                        "--clients", "3", "--count", "2", "--uvloop"], capture_output=True, text=True,
                       timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert sorted(line.split(" (")[1].split(")")[0] for line in lines if line.startswith("client ")) == [
        "127.0.0.2", "127.0.0.3", "127.0.0.4"]
    assert lines[-1].startswith("3/3 clients OK"), done.stdout
