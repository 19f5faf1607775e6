"""The secure client's side of the all-clients channel (docs/spec/echo2.md §5).

:class:`SecureClientHello` is what :class:`~.client.EchoClientCore` sends and reads in
secure mode instead of ``HELLO <key>`` and ``CONNECT``: ``HELLO-KEY`` while it has no
server key (trust on first use: the glue decides whether to trust the
:class:`ServerKeyOffered`, e.g. by recording it in a known-servers file, and calls
:meth:`SecureClientHello.trust`), then one ``HELLO-SECURE`` - the same bytes each time
it is re-sent, so a server that already answered sends the same ``CONNECT-SECURE``
again rather than opening a second duologue.  No I/O, no clock.
"""
from __future__ import annotations

from dataclasses import dataclass

from .noise import KeyPairFactory, NoiseCrypto
from .protocol import Ignored
from .secure_handshake import Refused, SecureClientHandshake, SecureConnected, read_server_key_reply
from .secure_hello import ServerKey, format_hello_key

__all__ = ["SecureClientHello", "ServerKeyOffered"]


@dataclass(frozen=True)
class ServerKeyOffered:
    """The server sent its public key (unauthenticated): trust it, or give up."""

    public_key: bytes


class SecureClientHello:
    """HELLO-KEY (without a server key), then HELLO-SECURE; classifies the answers."""

    def __init__(self, server_key: bytes | None, *, crypto: NoiseCrypto,
                 ephemeral: KeyPairFactory | None = None) -> None:
        self._crypto = crypto
        self._ephemeral = ephemeral
        self._handshake: SecureClientHandshake | None = None
        self._hello: bytes | None = None
        self.server_key: bytes | None = None
        if server_key is not None:
            self.trust(server_key)

    def message(self) -> bytes:
        """What to send (and re-send) on the all-clients publication now."""
        return format_hello_key() if self._hello is None else self._hello

    def trust(self, server_key: bytes) -> None:
        """Handshake with ``server_key`` from now on (once)."""
        if self._handshake is not None:
            raise ValueError("the server key is already set")
        handshake = SecureClientHandshake(server_key, crypto=self._crypto, ephemeral=self._ephemeral)
        self._hello = handshake.hello()
        self._handshake = handshake
        self.server_key = bytes(server_key)

    def receive(self, data: bytes, own_session: int) -> SecureConnected | ServerKeyOffered | Refused | Ignored:
        """Classify one broadcast for initial session ``own_session``."""
        if self._handshake is None:
            reply = read_server_key_reply(data, own_session)
            return ServerKeyOffered(reply.public_key) if isinstance(reply, ServerKey) else reply
        return self._handshake.receive(data, own_session)
