"""The Echo 2.0 server: the duologue server (:mod:`aeron_py.duologue.server`) with Echo's
application.

:func:`echo_server` (:mod:`.echo_application`) makes it; ``python -m aeron_py.echo.server``
(also ``python -m aeron_py.echo_server``) is its command line (:mod:`.cli`).
"""
from __future__ import annotations

from .echo_application import EchoApplication, echo_server

__all__ = ["EchoApplication", "echo_server"]
