"""Where and how the Echo 2.0 server glue runs.

Moved to :mod:`aeron_py.echo.server.options`; this import path stays for existing code.
"""
from __future__ import annotations

from .server.options import (  # noqa: F401
    DEFAULT_TERM_LENGTH, ServerOptions,
)

__all__ = [
    "DEFAULT_TERM_LENGTH", "ServerOptions",
]
