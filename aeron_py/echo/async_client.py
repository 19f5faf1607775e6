"""Echo 2.0 client on asyncio.

Moved to :mod:`aeron_py.echo.client.async_client`; this import path stays for existing code.
"""
from __future__ import annotations

from .client.async_client import (  # noqa: F401
    AsyncEchoClient, run_echo_client,
)

__all__ = [
    "AsyncEchoClient", "run_echo_client",
]
