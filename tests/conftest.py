"""Shared fixtures: a real embedded media driver and client per test, loopback ports."""
from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

T = TypeVar("T")


def wait_until(condition: Callable[[], T], timeout: float = 5.0, what: str = "condition",
               step: float = 0.001) -> T:
    """Poll ``condition`` until truthy or raise AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


def free_udp_port(host: str = "127.0.0.1") -> int:
    """A UDP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@pytest.fixture
def driver() -> Iterator["object"]:
    from aeron_py import MediaDriver

    with MediaDriver(publication_linger_timeout_ns=0) as d:
        yield d


@pytest.fixture
def aeron(driver: "object") -> Iterator["object"]:
    from aeron_py import Aeron

    with Aeron(driver=driver) as client:
        yield client


@pytest.fixture
def udp_port() -> int:
    return free_udp_port()
