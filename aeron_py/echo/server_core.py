"""The sans-I/O Echo 2.0 server core.

Moved to :mod:`aeron_py.echo.core.server`; this import path stays for existing code.
"""
from __future__ import annotations

from .core.server import (  # noqa: F401
    DEFAULT_MAX_IMAGE_TERM_LENGTH, DEFAULT_REFUSAL_INTERVAL, Action, Broadcast, CloseDuologue,
    CloseReason, CreateDuologue, DuologueInfo, EchoServerCore, Event, RejectImage, SendDuologue,
    ServerConfig, ServerStats,
)

__all__ = [
    "DEFAULT_MAX_IMAGE_TERM_LENGTH", "DEFAULT_REFUSAL_INTERVAL", "Action", "Broadcast",
    "CloseDuologue", "CloseReason", "CreateDuologue", "DuologueInfo", "EchoServerCore", "Event",
    "RejectImage", "SendDuologue", "ServerConfig", "ServerStats",
]
