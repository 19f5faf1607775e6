"""Bounded waits for the media driver's answers.

A leaf module (it imports nothing else from aeron_py but the idle strategies), so
``client``, ``publication`` and ``subscription`` can all use :func:`wait_for`
without importing each other.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from .errors import AeronTimeoutError
from .idle import BackoffIdleStrategy

T = TypeVar("T")


def wait_for(poll: Callable[[], T | None], timeout: float, what: str,
             work: Callable[[], int] | None = None) -> T:
    """Call ``poll`` until it returns something other than None/False, for at most ``timeout`` s.

    ``work`` (the client's conductor duty cycle in invoker mode) runs between polls.
    Raises :class:`~aeron_py.errors.AeronTimeoutError` naming ``what`` when time runs out.
    """
    idle = BackoffIdleStrategy(max_park_ns=1_000_000)
    deadline = time.monotonic() + timeout
    while True:
        result = poll()
        if result is not None and result is not False:
            return result
        if time.monotonic() >= deadline:
            raise AeronTimeoutError(f"{what}: no answer from the media driver within {timeout} s")
        idle.idle(work() if work is not None else 0)
