"""Echo 2.0 as an application of the duologue layer: ``ECHO <payload>`` comes back
verbatim, anything else is a bad message (``ERROR bad message``, then close); the rule is
:mod:`..core.echo_rule`'s. :func:`echo_server` makes the duologue server with it."""
from __future__ import annotations

from ...duologue.core.contract import ServerConfig
from ...duologue.server.application import Duologue
from ...duologue.server.loop import DuologueServer
from ...duologue.server.options import ServerOptions
from ..core.echo_rule import is_echo

__all__ = ["EchoApplication", "echo_server"]


class EchoApplication:
    """The Echo server's application: every message answered by :func:`is_echo`'s rule."""

    def received(self, duologue: Duologue, data: bytes) -> None:
        if is_echo(data):
            duologue.send(data)
        else:
            duologue.reject()


def echo_server(config: ServerConfig, options: ServerOptions | None = None) -> DuologueServer:
    """An Echo 2.0 server: the duologue server with :class:`EchoApplication`.

    >>> with echo_server(ServerConfig(max_clients=4, clients_base_port=9010)) as server:
    ...     ...  # serving on a background thread
    """
    return DuologueServer(EchoApplication(), config, options)
