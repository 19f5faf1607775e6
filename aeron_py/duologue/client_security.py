"""Echo secure mode on the client's side: which server key, and the duologue's keys in the driver.

:class:`ClientSecurity` says how a client knows its server (docs/spec/echo2.md §5):
a pinned public key, else the one a :class:`~aeron_py.duologue.keys.KnownServers` file
recorded, else trust on first use (the key the server sends is recorded there).
:class:`ClientKeys` installs a secure duologue's two keys in the client's driver
before its channels are made, and removes them when the client closes.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .. import crypto
from ..secure import Role
from .core.client import Failed
from .core.protocol import STREAM_ID
from .core.secure_client import SecureClientHello
from .core.secure_hello import SecureReason
from .keys import KnownServerMismatch, KnownServers

if TYPE_CHECKING:
    from ..driver import MediaDriver
    from ..secure import SecureTransport
    from .core.secure_hello import DuologueKeys

__all__ = ["SHARED_KEY_HOLD", "ClientKeys", "ClientSecurity", "ServerKeyRefused", "wrong_server_key"]

logger = logging.getLogger("aeron_py.echo.client")


#: Seconds a shared driver keeps a closed secure duologue's keys (its end of stream, the drain).
SHARED_KEY_HOLD = 2.0


class ServerKeyRefused(Exception):
    """The server's key is not the one this client knows (or may not be trusted)."""


def wrong_server_key(failure: Failed) -> bool:
    """Whether the server refused the handshake because the client holds another key for it."""
    return failure.server_reason == SecureReason.WRONG_SERVER_KEY


@dataclass(frozen=True)
class ClientSecurity:
    """How a secure client authenticates its server.

    ``server_key``: the server's 32-byte public key, pinned.  Else ``known_servers`` is
    looked up (``host:port`` of the all-clients channel), and when the server is not in
    it the key the server sends is trusted and recorded (``trust_on_first_use``).
    ``transport``: the secure transport of the driver a shared ``aeron`` client uses
    (an :class:`~aeron_py.echo.client.EchoClient` that embeds its driver makes its own).
    """

    server_key: bytes | None = field(default=None, repr=False)
    known_servers: KnownServers | None = None
    trust_on_first_use: bool = True
    transport: SecureTransport | None = None

    def __post_init__(self) -> None:
        if self.server_key is not None and (not isinstance(self.server_key, bytes) or len(self.server_key) != 32):
            raise ValueError("server_key must be the server's 32-byte public key")

    def hello(self, host: str, port: int) -> SecureClientHello:
        """The handshake for the server at ``host:port``: pinned, known, or to be learnt."""
        key = self.server_key
        if key is None and self.known_servers is not None:
            known = self.known_servers.lookup(host, port)
            key = None if known is None else known.public_key
        if key is None and not self.trust_on_first_use:
            raise ServerKeyRefused(f"no public key known for the echo server at {host}:{port}: pin one "
                                   "(--server-key) or allow trust on first use")
        return SecureClientHello(key, crypto=crypto)

    def transport_of(self, driver: MediaDriver | None) -> SecureTransport:
        """The secure transport to install keys in: :attr:`transport`, else ``driver``'s
        (the client's own driver); ValueError for a shared client without one."""
        if self.transport is not None:
            return self.transport
        if driver is None:
            raise ValueError("a secure Echo client sharing an Aeron client needs the secure transport of that "
                             "client's driver: ClientSecurity(transport=driver.secure_transport), with "
                             "MediaDriver(secure_transport=True)")
        return driver.secure_transport

    def offered(self, host: str, port: int, public_key: bytes) -> None:
        """The server sent its key (trust on first use): record it, or raise :class:`ServerKeyRefused`."""
        if not self.trust_on_first_use:
            raise ServerKeyRefused(f"the echo server at {host}:{port} offered a key, and trust on first use is off")
        if self.known_servers is None:
            logger.warning("trusting the key of echo server %s:%d without recording it", host, port)
            return
        try:
            self.known_servers.remember(host, port, public_key)
        except KnownServerMismatch as exc:
            raise ServerKeyRefused(str(exc)) from None


class ClientKeys:
    """A secure duologue's keys in the client's driver: installed before its channels, removed at close."""

    def __init__(self, transport: SecureTransport) -> None:
        self._transport = transport
        self._installed: list[tuple[Role, int]] = []

    def install(self, keys: DuologueKeys) -> None:
        """Seal the client's publication (``client_session``), open the server's (``server_session``)."""
        self._transport.add(Role.PUBLICATION, stream_id=STREAM_ID, session_id=keys.client_session,
                            key=keys.client_send_key)
        self._installed.append((Role.PUBLICATION, keys.client_session))
        self._transport.add(Role.SUBSCRIPTION, stream_id=STREAM_ID, session_id=keys.server_session,
                            key=keys.server_send_key)
        self._installed.append((Role.SUBSCRIPTION, keys.server_session))

    def remove(self, delay: float = 0.0) -> None:
        """Remove what :meth:`install` installed, ``delay`` seconds from now (idempotent)."""
        installed, self._installed = self._installed, []
        for role, session in installed:
            if delay > 0:
                self._transport.remove_later(role, stream_id=STREAM_ID, session_id=session, delay=delay)
                continue
            try:
                self._transport.remove(role, stream_id=STREAM_ID, session_id=session)
            except KeyError:
                logger.debug("secure duologue key %s %d was already gone", role.name, session)
