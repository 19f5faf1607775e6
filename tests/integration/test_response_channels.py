"""Echo over response channels (examples/echo_response_channels.py): one request channel, one
response control port, each client answered on its own stream. Real driver, UDP on loopback and IPC."""
from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from aeron_py import Aeron, BackoffIdleStrategy, MediaDriver
from conftest import free_udp_port, wait_until
from processes import run_process

pytestmark = [pytest.mark.timeout(90), pytest.mark.integration]

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "echo_response_channels.py"


@pytest.fixture(scope="module")
def example() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("echo_response_channels", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules[spec.name]


def _endpoints(example: ModuleType, media: str) -> object:
    return example.Endpoints(media, request_port=free_udp_port(), control_port=free_udp_port())


@pytest.mark.parametrize("media", ["udp", "ipc"])
def test_every_client_gets_exactly_its_own_answers(example: ModuleType, media: str) -> None:
    received = example.run(_endpoints(example, media), clients=8, messages=5)
    assert received == {f"client-{i}": [f"client-{i} #{n}".encode() for n in range(5)] for i in range(8)}


def test_a_client_that_leaves_frees_its_response_stream(example: ModuleType) -> None:
    endpoints = _endpoints(example, "udp")
    with MediaDriver(image_liveness_timeout_ns=1_000_000_000) as driver, Aeron(driver=driver) as aeron:
        server = example.EchoResponseServer(aeron, endpoints)
        staying = example.EchoResponseClient(aeron, endpoints, "staying")
        leaving = example.EchoResponseClient(aeron, endpoints, "leaving")
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)
        wait_until(lambda: idle.idle(server.step()) is None and server.clients == 2 and staying.connected
                   and leaving.connected, 10, "both clients connected")
        leaving.round_trip(server, b"bye")
        leaving.requests.close()
        leaving.responses.close()
        wait_until(lambda: idle.idle(server.step()) is None and server.clients == 1, 15, "the response stream closed")
        staying.round_trip(server, b"still here")
        assert staying.received == [b"still here"] and leaving.received == [b"bye"]


def test_the_example_runs_from_the_command_line() -> None:
    run = run_process([sys.executable, str(EXAMPLE), "--clients", "3", "--messages", "4",
                       "--port", str(free_udp_port()), "--control-port", str(free_udp_port())],
                      capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    assert "OK: 3 clients x 4 echoes" in run.stdout
