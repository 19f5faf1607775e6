"""Echo 2.0: the duologue server and clients of ``docs/spec/echo2.md``, over Aeron.

Echo is the first application of the duologue layer (:mod:`aeron_py.duologue`), which
holds the handshake, admission, limits and glue; each folder here is one layer of Echo's
own part:

* :mod:`.core` - Echo's sans-I/O rule (``ECHO <payload>`` back, anything else a bad message);
* :mod:`.server` - :func:`~aeron_py.echo.server.echo_server` (the duologue server with
  Echo's application) and its command line;
* :mod:`.client` - the Echo clients (step-driven and asyncio) and their command line;
* :mod:`.load` - the load generator, its hold mode and the HELLO flood tool.

This module re-exports the protocol's public names (from :mod:`aeron_py.duologue.core`).
"""

from __future__ import annotations

from ..duologue.core.client import (
    DEFAULT_CLIENT_TIMEOUT,
    ClientState,
    EchoClientCore,
    Failed,
    OpenDuologue,
    random_key,
    random_payload,
)
from ..duologue.core.per_ip import PerIpCounter, canonical_ip
from ..duologue.core.ports import AllocationError, PortAllocator
from ..duologue.core.protocol import (
    ERROR_BAD_MESSAGE_DUOLOGUE,
    STREAM_ID,
    Connect,
    CoreUsageError,
    Echoed,
    Ignored,
    Reason,
    Rejected,
    crypt,
    decode,
    format_connect,
    format_echo,
    format_error,
    format_hello,
    java_trim,
    parse_duologue_reply,
    parse_echo,
    parse_hello,
    parse_initial_reply,
    session_from_crypt,
    split_source_identity,
)
from ..duologue.core.server import (
    DEFAULT_MAX_IMAGE_TERM_LENGTH,
    Broadcast,
    CloseDuologue,
    CloseReason,
    CreateDuologue,
    DuologueInfo,
    DuologueServerCore,
    Event,
    RejectImage,
    SendDuologue,
    ServerConfig,
    ServerStats,
)
from ..duologue.core.secure_handshake import ServerSecrets
from ..duologue.core.sessions import DEFAULT_SESSION_MAX, DEFAULT_SESSION_MIN, SessionAllocator

__all__ = [
    "DEFAULT_CLIENT_TIMEOUT", "DEFAULT_MAX_IMAGE_TERM_LENGTH", "DEFAULT_SESSION_MAX",
    "DEFAULT_SESSION_MIN", "ERROR_BAD_MESSAGE_DUOLOGUE", "STREAM_ID",
    "AllocationError", "Broadcast", "ClientState", "CloseDuologue", "CloseReason", "Connect",
    "CoreUsageError", "CreateDuologue", "DuologueInfo", "EchoClientCore", "DuologueServerCore",
    "Echoed", "Event", "Failed", "Ignored", "OpenDuologue", "PerIpCounter", "PortAllocator",
    "Reason", "RejectImage", "Rejected", "SendDuologue", "ServerConfig", "ServerSecrets", "ServerStats",
    "SessionAllocator",
    "canonical_ip", "crypt", "decode", "format_connect", "format_echo",
    "format_error", "format_hello", "java_trim", "parse_duologue_reply", "parse_echo",
    "parse_hello", "parse_initial_reply", "random_key", "random_payload", "session_from_crypt",
    "split_source_identity",
]

