"""The Echo 2.0 server glue: moves bytes between Aeron and the sans-I/O core.

:class:`~.loop.DuologueServer` runs the loop for any application;
:func:`echo_server` (:mod:`.echo_application`) makes it with Echo's; ``python -m aeron_py.echo.server``
(also ``python -m aeron_py.echo_server``) is its command line (:mod:`.cli`).
"""
from __future__ import annotations

from .lifecycle import DriverLostError
from .echo_application import EchoApplication, echo_server
from .loop import DEFAULT_TERM_LENGTH, SNAPSHOT_COUNTERS, DuologueServer, ServerOptions, aeron_cause

__all__ = ["DEFAULT_TERM_LENGTH", "SNAPSHOT_COUNTERS", "DriverLostError", "DuologueServer", "EchoApplication",
           "ServerOptions", "echo_server",
           "aeron_cause"]
