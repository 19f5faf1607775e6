"""Duologues for any protocol: the Echo server's hardened machinery as a library.

A *duologue* is one client's private conversation with a server over Aeron, opened by
Echo 2.0's handshake (``HELLO`` on the server's all-clients channel, ``CONNECT`` with two
ports and a session id only that client can compute), then carried on channels of its
own. The server side is hardened as the Echo server is: admission (``server full``,
per-source limits, reclaiming unjoined places under flood, a flood penalty), port
ownership and a SETUP budget enforced in the media driver, a live blocklist, the
large-term budget, secure mode (a Noise NK handshake, then in-driver AEAD), telemetry,
the quiet idle. The application supplies only its messages:

Server side:

>>> class Upper:
...     def received(self, duologue: Duologue, data: bytes) -> None:
...         duologue.send(data.upper())
>>> server = DuologueServer(Upper(), ServerConfig(max_clients=16, clients_base_port=9010))  # doctest: +SKIP
>>> with server:                                                                           # doctest: +SKIP
...     ...  # serving on its own thread

Client side, :func:`connect` returns the same kind of object:

>>> with connect("127.0.0.1", 9000, 9001) as duologue:                                      # doctest: +SKIP
...     duologue.send(b"hello")
...     duologue.receive(timeout=5)
b'HELLO'

A client on the server's host may instead join through the server's own media driver
(``ServerConfig(max_ipc_clients=N)``): :func:`connect_ipc` with the server's
:attr:`~DuologueServer.driver_dir` runs the same handshake and the duologue over IPC,
no UDP port at all, a round trip about a tenth of loopback UDP's.

Limits, secure mode, telemetry and the blocklist are :class:`ServerConfig` and
:class:`ServerOptions` fields, the same for every application; Echo 2.0
(:mod:`aeron_py.echo`) is the first application. The tutorial: ``docs/tutorial/duologue.md``.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .core.contract import CloseReason, DuologueInfo, ServerConfig, ServerStats
from .server.application import Application, Duologue
from .server.loop import DuologueServer
from .server.options import ServerOptions
from .client import ClientDuologue, connect, connect_ipc
from .errors import DuologueClosed, DuologueError, DuologueRefused, DuologueTimeout

if TYPE_CHECKING:
    from .server.async_application import AsyncDuologue, AsyncDuologueServer
    from .async_client import AsyncClientDuologue, connect_async, connect_ipc_async

#: The asyncio faces, imported on first use: a threaded server or client never loads asyncio.
_LAZY = {
    "AsyncDuologue": ".server.async_application", "AsyncDuologueServer": ".server.async_application",
    "AsyncClientDuologue": ".async_client", "connect_async": ".async_client", "connect_ipc_async": ".async_client",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value  # once: later lookups never come here
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

__all__ = ["Application", "AsyncClientDuologue", "AsyncDuologue", "AsyncDuologueServer", "ClientDuologue", "CloseReason", "Duologue", "DuologueClosed",
           "DuologueError", "DuologueInfo", "DuologueRefused", "DuologueServer", "DuologueTimeout", "ServerConfig",
           "ServerOptions", "ServerStats", "connect", "connect_async", "connect_ipc",
           "connect_ipc_async"]
