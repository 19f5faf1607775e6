"""Fixtures for the aeron_py.asyncio tests: every async test runs under asyncio and uvloop,
on one real embedded media driver per module, over UDP loopback."""
from __future__ import annotations

import asyncio
import importlib.util
import itertools
import socket
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
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


def _reexport_root_conftest() -> None:
    """pytest imports a conftest.py outside a package as the module ``conftest``, so this file
    displaces tests/conftest.py in ``sys.modules`` and tests collected later that do
    ``from conftest import wait_until`` get this module: offer them the root one's names too
    (a copy of tests/conftest.py; names defined here win)."""
    root = Path(__file__).resolve().parents[2] / "conftest.py"
    spec = importlib.util.spec_from_file_location("_aeron_py_tests_root_conftest", root)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    here = globals()
    for name, value in vars(module).items():
        if not name.startswith("_") and name not in here:
            here[name] = value


_reexport_root_conftest()
