"""Echo secure mode: the handshake's state object of each side (docs/spec/echo2.md §5).

:class:`SecureClientHandshake` (one per HELLO-SECURE the client sends) and
:class:`SecureServerHandshake` (one per message on the all-clients channel of a secure
server) drive :mod:`.noise`'s NK objects with the messages of :mod:`.secure_hello`.
Sans-I/O: the glue passes the crypto object (:mod:`aeron_py.crypto`) in, sends what comes
back and installs the :class:`~.secure_hello.DuologueKeys` in the driver.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from ...validation import require_int
from .noise import KeyPairFactory, NkInitiator, NkResponder, NoiseAuthenticationError, NoiseCrypto, NoiseError
from .protocol import INT32_MAX, INT32_MIN, Ignored, Reason, Rejected, decode
from .secure_hello import (
    PROLOGUE,
    BadHello,
    DuologueKeys,
    HelloKey,
    PlainHello,
    SecureConnectPayload,
    SecureReason,
    ServerKey,
    duologue_keys,
    format_connect_payload,
    format_connect_secure,
    format_hello_secure,
    format_secure_error,
    format_server_key,
    parse_connect_payload,
    parse_secure_hello,
    parse_secure_reply,
)

__all__ = ["Answer", "Refused", "SecureClientHandshake", "SecureConnected", "SecureServerHandshake",
           "ServerSecrets", "explain_refusal", "read_server_key_reply"]

logger = logging.getLogger("aeron_py.duologue.core.secure_handshake")


@dataclass(frozen=True)
class SecureConnected:
    """The client's handshake completed: the duologue's ports, sessions and keys."""

    data_port: int
    control_port: int
    keys: DuologueKeys


@dataclass(frozen=True)
class Refused:
    """The server answered ``ERROR <reason>`` (as sent); ``explanation`` is for the user."""

    reason: str
    explanation: str


def explain_refusal(reason: str) -> str:
    """What a secure client tells its user about ``ERROR <reason>``."""
    if reason == Reason.BAD_MESSAGE:
        return ("the server is not in secure mode: it answered a secure-mode request with "
                "'ERROR bad message', as a plain Echo 2.0 server does")
    if reason == SecureReason.WRONG_SERVER_KEY:
        return ("the server could not authenticate the handshake: the public key this client holds "
                "for it is not its key (the server's key changed, or this is another server)")
    return f"the server refused: {reason}"


class SecureClientHandshake:
    """The client's side of one secure HELLO: :meth:`hello`, then :meth:`receive` each broadcast.

    A retry is a new object (a new ephemeral key, a new HELLO-SECURE).
    """

    def __init__(self, server_public_key: bytes, *, crypto: NoiseCrypto,
                 ephemeral: KeyPairFactory | None = None) -> None:
        self._noise = NkInitiator(server_public_key, PROLOGUE, crypto=crypto, ephemeral=ephemeral)
        self._sent = False
        self._connected = False

    def hello(self) -> bytes:
        """``HELLO-SECURE <message 1>``; once."""
        message = format_hello_secure(self._noise.write_message(b""))
        self._sent = True
        return message

    def receive(self, data: bytes, own_session: int) -> SecureConnected | Refused | Ignored:
        """Classify one broadcast; ``SecureConnected`` at most once."""
        if not self._sent or self._connected:
            raise NoiseError("receive() is only for the answer to hello(), before it is connected")
        reply = parse_secure_reply(data, own_session)
        if isinstance(reply, Rejected):
            return Refused(reply.reason, explain_refusal(reply.reason))
        if isinstance(reply, ServerKey):
            return Ignored(decode(data), "SERVER-KEY, which this client did not ask for")
        if isinstance(reply, Ignored):
            return reply
        return self._connect(reply.message2, decode(data))

    def _connect(self, message2: bytes, text: str) -> SecureConnected | Refused | Ignored:
        try:
            payload_bytes = self._noise.read_message(message2)
        except NoiseError as error:
            # Another client's (same initial session id), or forged: not from our server.
            logger.warning("ignoring a CONNECT-SECURE for our session that is not for this handshake: %s", error)
            return Ignored(text, f"CONNECT-SECURE not for this handshake: {error}")
        payload = parse_connect_payload(payload_bytes)
        keys = self._noise.split_keys, self._noise.handshake_hash
        self._noise.wipe()
        self._connected = True
        if payload is None:
            return Refused("malformed CONNECT-SECURE payload",
                           f"the server sent an authenticated but malformed CONNECT: {decode(payload_bytes)!r}")
        return SecureConnected(payload.data_port, payload.control_port, duologue_keys(keys[0], payload, keys[1]))


@dataclass(frozen=True)
class Answer:
    """Broadcast ``message`` on the all-clients channel, and nothing else; ``why`` is for logs.

    ``refusal`` is the ``ERROR`` reason when ``message`` is a refusal (None for ``SERVER-KEY``)
    and ``cause`` a stable name for it (telemetry, counters)."""

    message: bytes
    why: str
    refusal: Reason | SecureReason | None = None
    cause: str = "server_key"


@dataclass(frozen=True)
class ServerSecrets:
    """What a secure server's core needs: its static key pair and the primitives.

    ``ephemeral`` makes the server's ephemeral key pairs (tests fix them; default: fresh)."""

    static_keypair: tuple[bytes, bytes | bytearray] = field(repr=False)
    crypto: NoiseCrypto = field(repr=False)
    ephemeral: KeyPairFactory | None = field(default=None, repr=False)

    def handshake(self, initial_session: int) -> SecureServerHandshake:
        """A handshake for one message from initial session ``initial_session``."""
        return SecureServerHandshake(initial_session, self.static_keypair, crypto=self.crypto,
                                     ephemeral=self.ephemeral)


class SecureServerHandshake:
    """The server's side of one message on the all-clients channel in secure mode.

    :meth:`receive_hello` returns the :class:`Answer` to broadcast, or None when message 1
    authenticated: then admission (capacity, per-IP limits) decides, and either refuses
    with the plain ``ERROR`` or allocates the duologue and calls :meth:`connect`.
    """

    def __init__(self, initial_session: int, static_keypair: tuple[bytes, bytes | bytearray], *,
                 crypto: NoiseCrypto, ephemeral: KeyPairFactory | None = None) -> None:
        require_int("initial session", initial_session, min=INT32_MIN, max=INT32_MAX)
        self._sid = initial_session
        self._static_keypair = static_keypair
        self._crypto = crypto
        self._ephemeral = ephemeral
        self._noise: NkResponder | None = None  # made for a well-formed HELLO-SECURE only

    def receive_hello(self, data: bytes) -> Answer | None:
        """Read one message; None means a valid HELLO-SECURE (call :meth:`connect` or drop this)."""
        hello = parse_secure_hello(data)
        if isinstance(hello, HelloKey):
            return Answer(format_server_key(self._sid, bytes(self._static_keypair[0])), "server key")
        if isinstance(hello, PlainHello):
            return self._refuse(SecureReason.SECURE_MODE_REQUIRED, "plain HELLO", "secure_mode_required")
        if isinstance(hello, BadHello):
            return self._refuse(Reason.BAD_MESSAGE, hello.why, hello.cause)
        if self._noise is not None:
            raise NoiseError("receive_hello() takes one HELLO-SECURE: make a new handshake for the next")
        self._noise = NkResponder(self._static_keypair, PROLOGUE, crypto=self._crypto, ephemeral=self._ephemeral)
        try:
            self._noise.read_message(hello.message1)
        except NoiseAuthenticationError:
            self._noise.wipe()  # its copy of the static secret
            return self._refuse(SecureReason.WRONG_SERVER_KEY, "wrong server key", "wrong_server_key")
        except NoiseError as error:
            self._noise.wipe()
            return self._refuse(Reason.BAD_MESSAGE, f"HELLO-SECURE: {error}", "malformed")
        return None

    def _refuse(self, reason: Reason | SecureReason, why: str, cause: str) -> Answer:
        return Answer(format_secure_error(self._sid, reason), why, reason, cause)

    def connect(self, payload: SecureConnectPayload) -> tuple[bytes, DuologueKeys]:
        """``<sid> CONNECT-SECURE <message 2>`` and the duologue's keys (after receive_hello's None)."""
        if self._noise is None:
            raise NoiseError("connect() comes after receive_hello() accepted a HELLO-SECURE")
        message2 = self._noise.write_message(format_connect_payload(payload))
        keys = duologue_keys(self._noise.split_keys, payload, self._noise.handshake_hash)
        self._noise.wipe()
        return format_connect_secure(self._sid, message2), keys

    def wipe(self) -> None:
        """Zero this handshake's secrets (a HELLO that admission refused)."""
        if self._noise is not None:
            self._noise.wipe()


def read_server_key_reply(data: bytes, own_session: int) -> ServerKey | Refused | Ignored:
    """Client side of ``HELLO-KEY`` (trust on first use): the server's key, a refusal, or not ours."""
    reply = parse_secure_reply(data, own_session)
    if isinstance(reply, Rejected):
        return Refused(reply.reason, explain_refusal(reply.reason))
    if isinstance(reply, (ServerKey, Ignored)):
        return reply
    return Ignored(decode(data), "CONNECT-SECURE, while waiting for SERVER-KEY")
