"""The sans-I/O Echo 2.0 client core.

Moved to :mod:`aeron_py.echo.core.client`; this import path stays for existing code.
"""
from __future__ import annotations

from .core.client import (  # noqa: F401
    DEFAULT_CLIENT_TIMEOUT, ClientState, EchoClientCore, Failed, OpenDuologue, random_key,
    random_payload,
)

__all__ = [
    "DEFAULT_CLIENT_TIMEOUT", "ClientState", "EchoClientCore", "Failed", "OpenDuologue",
    "random_key", "random_payload",
]
