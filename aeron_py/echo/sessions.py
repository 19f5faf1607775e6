"""Random duologue session ids.

Moved to :mod:`aeron_py.echo.core.sessions`; this import path stays for existing code.
"""
from __future__ import annotations

from .core.sessions import (  # noqa: F401
    DEFAULT_SESSION_MAX, DEFAULT_SESSION_MIN, SessionAllocator,
)

__all__ = [
    "DEFAULT_SESSION_MAX", "DEFAULT_SESSION_MIN", "SessionAllocator",
]
