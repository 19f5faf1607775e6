"""Echo 2.0 wire format (docs/spec/echo2.md §1): constants, encoders and parsers.

Pure functions only: no I/O, no clocks, no Aeron.  The parsers reproduce the Java
reference (io7m aeron-guide ``take2``) exactly, including Java's regex ``.`` (which
excludes ``\\n``, ``\\r``, U+0085, U+2028 and U+2029) and ``String.trim()`` (which
strips every char <= U+0020).  Python's ``re`` differs from Java's in both respects,
so the character classes below are spelled out instead of relying on ``.``/``strip``.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from enum import StrEnum

from ...validation import require_int

#: The one stream id used on every Echo 2.0 channel (541388802).
STREAM_ID = 0x2044F002

#: Same-host clients over IPC (the duologue layer's, not Echo 2.0's): the source name
#: their images count under, the streams of the IPC all-clients channels (HELLO in,
#: replies out), and the first of the streams IPC duologues take two at a time. Those
#: streams travel in the CONNECT's port fields, so they stay within [1, 65535]: at most
#: 16,383 IPC duologues.
IPC_SOURCE = "ipc"
IPC_HELLO_STREAM = STREAM_ID
IPC_BROADCAST_STREAM = STREAM_ID + 1
IPC_STREAM_BASE = 0x8000
#: An image's source identity when it is an IPC publication's (Aeron's ``aeron:ipc``).
IPC_SOURCE_IDENTITY = "aeron:ipc"

UINT32_MAX = 0xFFFFFFFF
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

#: What the server sends on a duologue before closing it (no session prefix).
ERROR_BAD_MESSAGE_DUOLOGUE = b"ERROR bad message"

ECHO_PREFIX = b"ECHO "

# Java's ``.`` without DOTALL: anything except these five line terminators.
_JAVA_DOT = "[^\n\r\u0085\u2028\u2029]"
JAVA_LINE_TERMINATORS = frozenset("\n\r\u0085\u2028\u2029")

# Whole-message patterns, always used with ``fullmatch`` (Java ``Matcher.matches``).
# ``[0-9]`` / ``[0-9A-F]`` on purpose: ``\d`` would accept Unicode digits.
_HELLO_RE = re.compile(rb"HELLO ([0-9A-F]+)")
_ECHO_RE = re.compile(f"ECHO ({_JAVA_DOT}*)")
_ERROR_RE = re.compile(f"ERROR ({_JAVA_DOT}*)")
_CONNECT_RE = re.compile(r"CONNECT ([0-9]+) ([0-9]+) ([0-9A-F]+)")

# Java String.trim(): strips every char with code point <= U+0020 at both ends.
_JAVA_TRIM_CHARS = "".join(chr(c) for c in range(0x21))


class Reason(StrEnum):
    """The only reasons a server puts in ``<sid> ERROR <reason>``."""

    BAD_MESSAGE = "bad message"
    SERVER_FULL = "server full"
    TOO_MANY_FOR_IP = "too many connections for IP address"


class CoreUsageError(RuntimeError):
    """The glue broke the contract of a sans-I/O core (e.g. unknown image id)."""


# --------------------------------------------------------------------- helpers


def decode(data: bytes) -> str:
    """Decode one protocol message: UTF-8, invalid sequences become U+FFFD."""
    return bytes(data).decode("utf-8", errors="replace")


def java_trim(text: str) -> str:
    """Java ``String.trim()``: strip chars <= U+0020 at both ends."""
    return text.strip(_JAVA_TRIM_CHARS)


def to_signed32(value: int) -> int:
    """Reinterpret the low 32 bits of ``value`` as a signed 32-bit integer."""
    value &= UINT32_MAX
    return value - 2**32 if value > INT32_MAX else value


# ----------------------------------------------------------------- HELLO / crypt


def parse_hello(data: bytes) -> int | None:
    """Return the key of a valid ``HELLO <key>`` message, else None.

    The whole message must match ``HELLO ([0-9A-F]+)`` (one space, no trimming, no
    lowercase) and the key must fit in 32 unsigned bits.
    """
    match = _HELLO_RE.fullmatch(data)  # ASCII only: the same as matching the decoded text
    if match is None:
        return None
    key = int(match.group(1), 16)
    return key if key <= UINT32_MAX else None


def format_hello(key: int) -> bytes:
    """``HELLO <key>`` with the key as unpadded uppercase hex."""
    require_int("key", key, min=0, max=UINT32_MAX)
    return f"HELLO {key:X}".encode("ascii")


def crypt(key: int, duologue_session: int) -> int:
    """Unsigned 32-bit ``key XOR session`` (the session may be signed or unsigned)."""
    require_int("key", key, min=0, max=UINT32_MAX)
    require_int("duologue session", duologue_session, min=INT32_MIN, max=UINT32_MAX)
    return (key ^ duologue_session) & UINT32_MAX


def session_from_crypt(key: int, crypt_value: int) -> int:
    """The client's side of :func:`crypt`: ``key XOR crypt`` as a SIGNED 32-bit id."""
    require_int("key", key, min=0, max=UINT32_MAX)
    require_int("crypt", crypt_value, min=0, max=UINT32_MAX)
    return to_signed32(key ^ crypt_value)


# ------------------------------------------------------------ server broadcasts


def format_connect(initial_session: int, data_port: int, control_port: int, crypt: int) -> bytes:
    """``<sid> CONNECT <data-port> <control-port> <crypt>`` (sid signed, crypt hex)."""
    require_int("initial session", initial_session, min=INT32_MIN, max=INT32_MAX)
    require_int("data port", data_port, min=1, max=65535)
    require_int("control port", control_port, min=1, max=65535)
    require_int("crypt", crypt, min=0, max=UINT32_MAX)
    return f"{initial_session} CONNECT {data_port} {control_port} {crypt:X}".encode("ascii")


def format_error(initial_session: int, reason: Reason) -> bytes:
    """``<sid> ERROR <reason>``; ``reason`` must be one of :class:`Reason`."""
    require_int("initial session", initial_session, min=INT32_MIN, max=INT32_MAX)
    return f"{initial_session} ERROR {Reason(reason).value}".encode("ascii")


# ----------------------------------------------------------------- duologue


def parse_echo(data: bytes) -> bytes | None:
    """Server side: the raw payload of a valid ``ECHO <payload>``, else None.

    Validity is judged on the decoded text (Java ``ECHO (.*)``); the returned payload
    is the original bytes after ``ECHO `` so the reply can be byte-identical.
    """
    if _ECHO_RE.fullmatch(decode(data)) is None:
        return None
    # The decoded text starts with ASCII "ECHO ", which can only come from those
    # exact five bytes, so the payload is everything after them.
    return bytes(data[len(ECHO_PREFIX):])


def format_echo(payload: bytes) -> bytes:
    """``ECHO <payload>`` (payload bytes appended verbatim)."""
    return ECHO_PREFIX + bytes(payload)


# ------------------------------------------------------------- client parsers


@dataclass(frozen=True)
class Connect:
    """The server accepted our HELLO: where the duologue is and the encrypted id."""

    data_port: int
    control_port: int
    crypt: int


@dataclass(frozen=True)
class Rejected:
    """The server answered ``ERROR <reason>`` (reason as sent, not validated)."""

    reason: str


@dataclass(frozen=True)
class Echoed:
    """A well-formed ``ECHO <payload>`` reply on the duologue."""

    payload: bytes


@dataclass(frozen=True)
class Ignored:
    """A message that is not for us or not understood; ``why`` says which."""

    text: str
    why: str


InitialReply = Connect | Rejected | Ignored
DuologueReply = Echoed | Rejected | Ignored


def parse_initial_reply(data: bytes, own_session: int) -> InitialReply:
    """Client side: classify a broadcast from the all-clients channel.

    Follows the reference client: split at the first space, ignore other sessions'
    messages (prefix compared as signed decimal text), Java-trim the rest, then
    ``ERROR (.*)`` or ``CONNECT ([0-9]+) ([0-9]+) ([0-9A-F]+)``; anything else ignored.
    """
    require_int("own session", own_session, min=INT32_MIN, max=INT32_MAX)
    text = decode(data)
    space = text.find(" ")
    if space < 0:
        return Ignored(text, "no session prefix")
    if text[:space] != str(own_session):
        return Ignored(text, "for another session")
    rest = java_trim(text[space:])
    if (error := _ERROR_RE.fullmatch(rest)) is not None:
        return Rejected(error.group(1))
    connect = _CONNECT_RE.fullmatch(rest)
    if connect is None:
        return Ignored(text, "unrecognised message")
    data_port, control_port = _port_or_zero(connect.group(1)), _port_or_zero(connect.group(2))
    crypt_value = int(connect.group(3), 16)
    if data_port == 0 or control_port == 0:
        return Ignored(text, "CONNECT port outside [1, 65535]")
    if crypt_value > UINT32_MAX:
        return Ignored(text, "CONNECT crypt wider than 32 bits")
    return Connect(data_port, control_port, crypt_value)


def _port_or_zero(digits: str) -> int:
    """An ASCII decimal port in [1, 65535], or 0 when out of range (any length)."""
    digits = digits.lstrip("0")
    return int(digits) if digits and len(digits) <= 5 and int(digits) <= 65535 else 0


def parse_duologue_reply(data: bytes) -> DuologueReply:
    """Client side: classify a message received on the duologue subscription."""
    text = decode(data)
    if (error := _ERROR_RE.fullmatch(text)) is not None:
        return Rejected(error.group(1))
    if _ECHO_RE.fullmatch(text) is not None:
        return Echoed(bytes(data[len(ECHO_PREFIX):]))
    return Ignored(text, "neither ECHO nor ERROR")


# --------------------------------------------------------------- addresses


def image_source(identity: str) -> tuple[str, int]:
    """The source an image counts under and its UDP port: ``(ip, port)`` as
    :func:`split_source_identity` splits it, or ``(IPC_SOURCE, 0)`` for an IPC publication's."""
    if identity == IPC_SOURCE_IDENTITY:
        return IPC_SOURCE, 0
    return split_source_identity(identity)


def split_source_identity(identity: str) -> tuple[str, int]:
    """Split an Aeron source identity (``a.b.c.d:port`` / ``[v6]:port``) at the LAST colon.

    Returns ``(ip, port)`` with IPv6 brackets removed.  Raises ValueError quoting
    the identity when it is not an IP address followed by a port in [1, 65535].
    """
    host, sep, port_text = identity.rpartition(":")
    if not sep or not host:
        raise ValueError(f"source identity {identity!r} is not host:port")
    if host.startswith("[") != host.endswith("]") or (host.startswith("[") and len(host) < 3):
        raise ValueError(f"source identity {identity!r} has unbalanced IPv6 brackets")
    if host.startswith("["):
        host = host[1:-1]
    port = _port_or_zero(port_text) if port_text.isascii() and port_text.isdigit() else 0
    if port == 0:
        raise ValueError(f"source identity {identity!r} has no port in [1, 65535]")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise ValueError(f"source identity {identity!r} does not start with an IP address") from None
    return host, port
