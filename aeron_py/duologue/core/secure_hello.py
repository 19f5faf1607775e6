"""Echo secure mode on the all-clients channel (docs/spec/echo2.md §5): the messages.

Pure encoders and parsers around the Noise NK handshake of :mod:`.noise` (the state
object of each side is in :mod:`.secure_handshake`):

* client -> server: ``HELLO-SECURE <message 1>`` (message 1's payload is empty), or
  ``HELLO-KEY`` (trust on first use: ask for the server's public key);
* server -> clients: ``<sid> CONNECT-SECURE <message 2>``, whose payload (readable by
  that client only) is ``CONNECT <d-data> <d-control> <server-session> <client-session>``;
  ``<sid> SERVER-KEY <public key>``; ``<sid> ERROR <reason>`` as in plain mode.

Binary values are base64url without padding (RFC 4648 §5), decoded strictly.  The keys
each duologue session is encrypted with are mapped in one place, :func:`duologue_keys`.
No I/O and no crypto here.
"""

from __future__ import annotations

import base64
import binascii
import re
from dataclasses import dataclass, field
from enum import StrEnum

from ...validation import require_int
from .protocol import INT32_MAX, INT32_MIN, Ignored, Reason, Rejected, decode, format_error, parse_hello, \
    parse_initial_reply

__all__ = [
    "BadHello", "ConnectSecure", "DuologueKeys", "HelloKey", "HelloSecure", "MAX_SECURE_MESSAGE", "MESSAGE1_LEN",
    "PROLOGUE", "PlainHello", "SecureConnectPayload", "SecureReason", "ServerKey", "b64url_decode", "b64url_encode",
    "duologue_keys", "format_connect_payload", "format_connect_secure", "format_hello_key", "format_hello_secure",
    "format_secure_error", "format_server_key", "parse_connect_payload", "parse_secure_hello", "parse_secure_reply",
]

#: Noise prologue of secure mode version 1 (ASCII); both sides mix it in first.
PROLOGUE = b"aeron_py echo2 secure v1"
#: Message 1 is the client's ephemeral key and the tag of the empty payload.
MESSAGE1_LEN = 32 + 16
#: Message 2's payload, the CONNECT text, is at most this long (43 bytes in practice).
MAX_CONNECT_PAYLOAD = 64
#: Longer messages on the all-clients channel are bad messages in secure mode.
MAX_SECURE_MESSAGE = 256
HELLO_KEY = b"HELLO-KEY"

_B64URL = "[A-Za-z0-9_-]+"
_HELLO_SECURE_RE = re.compile(f"HELLO-SECURE ({_B64URL})")
_CONNECT_SECURE_RE = re.compile(f"CONNECT-SECURE ({_B64URL})")
_SERVER_KEY_RE = re.compile(f"SERVER-KEY ({_B64URL})")
_PORT = "([1-9][0-9]{0,4})"
_SESSION = "(0|-?[1-9][0-9]{0,9})"
_CONNECT_PAYLOAD_RE = re.compile(f"CONNECT {_PORT} {_PORT} {_SESSION} {_SESSION}")


class SecureReason(StrEnum):
    """The reasons secure mode adds to ``<sid> ERROR <reason>``."""

    SECURE_MODE_REQUIRED = "secure mode required"  # a plain HELLO to a secure server
    WRONG_SERVER_KEY = "wrong server key"  # message 1 was not made with this server's public key


# ------------------------------------------------------------------- base64url


def b64url_encode(data: bytes | bytearray) -> str:
    """Base64url (RFC 4648 §5) without ``=`` padding."""
    return base64.urlsafe_b64encode(bytes(data)).rstrip(b"=").decode("ascii")


def b64url_decode(text: str) -> bytes | None:
    """The bytes of canonical unpadded base64url ``text``, else None (padding, other
    characters, an impossible length or non-zero unused bits are all refused)."""
    if not re.fullmatch("[A-Za-z0-9_-]*", text) or len(text) % 4 == 1:
        return None
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        return None
    return raw if b64url_encode(raw) == text else None


# ------------------------------------------------------------- client -> server


def format_hello_secure(message1: bytes) -> bytes:
    """``HELLO-SECURE <message 1>``."""
    if len(message1) != MESSAGE1_LEN:
        raise ValueError(f"message 1 must be {MESSAGE1_LEN} bytes (empty payload), not {len(message1)}")
    return b"HELLO-SECURE " + b64url_encode(message1).encode("ascii")


def format_hello_key() -> bytes:
    """``HELLO-KEY``: ask the server for its static public key (unauthenticated)."""
    return HELLO_KEY


@dataclass(frozen=True)
class HelloSecure:
    """A well-formed ``HELLO-SECURE``: Noise message 1, not yet authenticated."""

    message1: bytes


@dataclass(frozen=True)
class HelloKey:
    """``HELLO-KEY``."""


@dataclass(frozen=True)
class PlainHello:
    """A plain Echo 2.0 ``HELLO <key>``: a secure server answers ``secure mode required``."""

    key: int


@dataclass(frozen=True)
class BadHello:
    """Anything else: answered ``ERROR bad message``; ``why`` is for the log, ``cause``
    (``oversize`` or ``malformed``) for counters and telemetry."""

    why: str
    cause: str = "malformed"


SecureHello = HelloSecure | HelloKey | PlainHello | BadHello


def parse_secure_hello(data: bytes) -> SecureHello:
    """Server side: classify one message from the all-clients channel in secure mode."""
    if len(data) > MAX_SECURE_MESSAGE:
        return BadHello(f"longer than {MAX_SECURE_MESSAGE} bytes", "oversize")
    if bytes(data) == HELLO_KEY:
        return HelloKey()
    if (key := parse_hello(data)) is not None:
        return PlainHello(key)
    match = _HELLO_SECURE_RE.fullmatch(decode(data))
    if match is None:
        return BadHello("not HELLO-SECURE, HELLO-KEY or HELLO")
    message1 = b64url_decode(match.group(1))
    if message1 is None:
        return BadHello("HELLO-SECURE: bad base64url")
    if len(message1) != MESSAGE1_LEN:
        return BadHello(f"HELLO-SECURE: message 1 is {len(message1)} bytes, not {MESSAGE1_LEN}")
    return HelloSecure(message1)


# ------------------------------------------------------------- server -> clients


def format_connect_secure(initial_session: int, message2: bytes) -> bytes:
    """``<sid> CONNECT-SECURE <message 2>``."""
    require_int("initial session", initial_session, min=INT32_MIN, max=INT32_MAX)
    return f"{initial_session} CONNECT-SECURE {b64url_encode(message2)}".encode("ascii")


def format_server_key(initial_session: int, public_key: bytes) -> bytes:
    """``<sid> SERVER-KEY <public key>``."""
    require_int("initial session", initial_session, min=INT32_MIN, max=INT32_MAX)
    if len(public_key) != 32:
        raise ValueError(f"a server public key is 32 bytes, not {len(public_key)}")
    return f"{initial_session} SERVER-KEY {b64url_encode(public_key)}".encode("ascii")


def format_secure_error(initial_session: int, reason: Reason | SecureReason) -> bytes:
    """``<sid> ERROR <reason>`` for a plain or a secure-mode reason."""
    if isinstance(reason, SecureReason):
        require_int("initial session", initial_session, min=INT32_MIN, max=INT32_MAX)
        return f"{initial_session} ERROR {reason.value}".encode("ascii")
    return format_error(initial_session, reason)


@dataclass(frozen=True)
class SecureConnectPayload:
    """Message 2's payload: the duologue's ports and its two session ids."""

    data_port: int
    control_port: int
    server_session: int  # the server's duologue publication (the client subscribes to it)
    client_session: int  # the session id the client must give its duologue publication

    def __post_init__(self) -> None:
        require_int("data port", self.data_port, min=1, max=65535)
        require_int("control port", self.control_port, min=1, max=65535)
        require_int("server session", self.server_session, min=INT32_MIN, max=INT32_MAX)
        require_int("client session", self.client_session, min=INT32_MIN, max=INT32_MAX)
        if self.server_session == self.client_session:
            raise ValueError("the two duologue sessions must differ: each has its own key")


def format_connect_payload(payload: SecureConnectPayload) -> bytes:
    """``CONNECT <d-data> <d-control> <server-session> <client-session>`` (decimal)."""
    p = payload
    return f"CONNECT {p.data_port} {p.control_port} {p.server_session} {p.client_session}".encode("ascii")


def parse_connect_payload(data: bytes) -> SecureConnectPayload | None:
    """The payload of a message 2, or None if it is not exactly that form and in range."""
    match = _CONNECT_PAYLOAD_RE.fullmatch(decode(data)) if len(data) <= MAX_CONNECT_PAYLOAD else None
    if match is None:
        return None
    try:
        return SecureConnectPayload(*(int(group) for group in match.groups()))
    except ValueError:
        return None


# ------------------------------------------------------------------ the keys


@dataclass(frozen=True)
class DuologueKeys:
    """The session key of each direction of one duologue (for the driver's secure transport)."""

    client_session: int
    client_send_key: bytes = field(repr=False)  # client -> server: the client's duologue publication
    server_session: int
    server_send_key: bytes = field(repr=False)  # server -> client: the server's duologue publication
    handshake_hash: bytes

    def by_session(self) -> dict[int, bytes]:
        """``{session id: 32-byte key}`` for both sessions."""
        return {self.client_session: self.client_send_key, self.server_session: self.server_send_key}


def duologue_keys(split_keys: tuple[bytes, bytes], payload: SecureConnectPayload,
                  handshake_hash: bytes) -> DuologueKeys:
    """THE key mapping of secure mode, used by both sides.

    ``Split()``'s first key (initiator -> responder) keys the client's duologue
    publication (``client-session``); its second key keys the server's duologue
    publication (``server-session``).
    """
    initiator_to_responder, responder_to_initiator = split_keys
    return DuologueKeys(payload.client_session, initiator_to_responder,
                        payload.server_session, responder_to_initiator, handshake_hash)


# --------------------------------------------------------------- client parsers


@dataclass(frozen=True)
class ConnectSecure:
    """``CONNECT-SECURE`` for our session id: message 2, not yet authenticated."""

    message2: bytes


@dataclass(frozen=True)
class ServerKey:
    """``SERVER-KEY`` for our session id: the server's static public key (unauthenticated)."""

    public_key: bytes


SecureReply = ConnectSecure | ServerKey | Rejected | Ignored


def parse_secure_reply(data: bytes, own_session: int) -> SecureReply:
    """Client side: classify a broadcast on the all-clients channel in secure mode.

    Other sessions' messages are ignored as in plain mode; ``ERROR`` is read as the
    plain client reads it (:func:`.protocol.parse_initial_reply`).
    """
    require_int("own session", own_session, min=INT32_MIN, max=INT32_MAX)
    text = decode(data)
    if len(data) > MAX_SECURE_MESSAGE:
        return Ignored(text, f"longer than {MAX_SECURE_MESSAGE} bytes")
    prefix, _, rest = text.partition(" ")
    if prefix != str(own_session):
        return Ignored(text, "for another session")
    if (match := _CONNECT_SECURE_RE.fullmatch(rest)) is not None:
        message2 = b64url_decode(match.group(1))
        if message2 is None or not MESSAGE1_LEN <= len(message2) <= MESSAGE1_LEN + MAX_CONNECT_PAYLOAD:
            return Ignored(text, "CONNECT-SECURE: bad base64url or length")
        return ConnectSecure(message2)
    if (match := _SERVER_KEY_RE.fullmatch(rest)) is not None:
        public_key = b64url_decode(match.group(1))
        if public_key is None or len(public_key) != 32:
            return Ignored(text, "SERVER-KEY: bad base64url or not 32 bytes")
        return ServerKey(public_key)
    reply = parse_initial_reply(data, own_session)
    return reply if isinstance(reply, Rejected) else Ignored(text, "unrecognised message")
