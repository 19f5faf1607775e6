"""Helpers for the aeron_py.asyncio tests (bounded waits on the running loop)."""
from __future__ import annotations

import asyncio
from collections.abc import Callable


async def wait_for_condition(condition: Callable[[], object], timeout: float = 5.0, what: str = "condition") -> None:
    """Await ``condition()`` truthy, looking again every loop iteration / millisecond, bounded."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition():
        if loop.time() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.001)
