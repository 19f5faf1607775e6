"""Small helpers for the benchmark's Python clients over the low-level ``aeron_py._aeron`` API.

Each add/connect wait is bounded and sleeps between polls (this is setup, not the
measured loop).  The measured loops idle with ``_aeron.IdleStrategy(mode)``, the same
Aeron C idle function the C tools call.
"""
from __future__ import annotations

import time
from typing import Any

from aeron_py import _aeron

from benchmarks import harness

StopFlag = harness.StopFlag  # kept as a name of this module for its callers

SETUP_TIMEOUT_S = 15.0

# idle mode name used in the benchmarks -> Aeron idle strategy name (aeron_idle_strategy_load)
IDLE_STRATEGY_NAMES = {"spin": "spin", "yield": "yield"}


class ClientSetupError(RuntimeError):
    """A Python benchmark client could not connect or set up its streams in time."""


def idle_strategy(mode: str) -> Any:
    """The Aeron idle strategy for a benchmark idle mode ("spin" or "yield")."""
    try:
        return _aeron.IdleStrategy(IDLE_STRATEGY_NAMES[mode])
    except KeyError:
        raise ValueError(f"unknown idle mode {mode!r}; expected one of {sorted(IDLE_STRATEGY_NAMES)}") from None


def _await(pending: Any, what: str, deadline: float) -> Any:
    while time.monotonic() < deadline:
        handle = pending.poll()
        if handle is not None:
            return handle
        time.sleep(0.001)
    raise ClientSetupError(f"driver did not answer {what} within {SETUP_TIMEOUT_S}s")


def connect(aeron_dir: str) -> Any:
    """A client on the shared driver's directory."""
    return _aeron.Client(dir=aeron_dir)


def add_subscription(client: Any, channel: str, stream_id: int) -> Any:
    """Add a subscription and wait (bounded) for it."""
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    return _await(client.async_add_subscription(channel, stream_id), f"subscription {channel} {stream_id}", deadline)


def add_publication(client: Any, channel: str, stream_id: int, exclusive: bool) -> Any:
    """Add an (exclusive) publication and wait (bounded) for it."""
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    add = client.async_add_exclusive_publication if exclusive else client.async_add_publication
    return _await(add(channel, stream_id), f"publication {channel} {stream_id}", deadline)


def wait_connected(handle: Any, what: str, timeout_s: float = SETUP_TIMEOUT_S, stop: "harness.StopFlag | None" = None) -> None:
    """Wait (bounded, sleeping) until a publication/subscription ``is_connected``."""
    deadline = time.monotonic() + timeout_s
    while not handle.is_connected:
        if stop is not None and stop.stopped:
            raise ClientSetupError(f"stopped while waiting for {what} to connect")
        if time.monotonic() >= deadline:
            raise ClientSetupError(f"{what} not connected within {timeout_s}s")
        time.sleep(0.001)
