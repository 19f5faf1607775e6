"""The Echo 2.0 server glue: moves bytes between Aeron and the sans-I/O core.

:class:`EchoServer` (:mod:`.loop`) runs the loop; ``python -m aeron_py.echo.server``
(also ``python -m aeron_py.echo_server``) is its command line (:mod:`.cli`).
"""
from __future__ import annotations

from .lifecycle import DriverLostError
from .loop import DEFAULT_TERM_LENGTH, SNAPSHOT_COUNTERS, EchoServer, ServerOptions, aeron_cause

__all__ = ["DEFAULT_TERM_LENGTH", "SNAPSHOT_COUNTERS", "DriverLostError", "EchoServer", "ServerOptions",
           "aeron_cause"]
