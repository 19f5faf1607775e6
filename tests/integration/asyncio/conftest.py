"""Fixtures for the aeron_py.asyncio tests: every async test runs under asyncio and uvloop,
on one real embedded media driver per module, over UDP loopback."""
from __future__ import annotations

import asyncio
import itertools
import socket
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest
import uvloop

from aeron_py import MediaDriver

_streams = itertools.count(3001)


def pytest_asyncio_loop_factories(config: pytest.Config, item: pytest.Item) -> Mapping[str, Callable[[], asyncio.AbstractEventLoop]]:
    """Run each async test once per event loop implementation."""
    return {"asyncio": asyncio.new_event_loop, "uvloop": uvloop.new_event_loop}


@pytest.fixture(scope="module")
def driver() -> Iterator[MediaDriver]:
    with MediaDriver(publication_linger_timeout_ns=0) as d:
        yield d


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def channel() -> tuple[str, int]:
    """A fresh UDP unicast channel and stream id (nothing else uses either)."""
    return f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}", next(_streams)


@pytest.fixture(params=["timer", "thread"])
def waker(request: pytest.FixtureRequest) -> Any:
    return request.param
