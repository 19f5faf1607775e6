"""Echo 2.0: the duologue server and clients of ``docs/spec/echo2.md``, over Aeron.

The package is layered; each folder is one layer:

* :mod:`.core` - the sans-I/O protocol core: wire format, the server's and the
  client's state machines, allocators, per-IP limits, deadlines.  No Aeron, sockets,
  threads or clocks;
* :mod:`.server` - the server glue (:class:`~aeron_py.echo.server.DuologueServer`, :func:`~aeron_py.echo.server.echo_server`) and
  its command line;
* :mod:`.client` - the clients (step-driven and asyncio) and their command line;
* :mod:`.load` - the load generator, its hold mode and the HELLO flood tool;
* :mod:`.blocklist` - the blocklist file the server enforces and the analytics write.

This module re-exports the core's public names.
"""

from __future__ import annotations

from .core.client import (
    DEFAULT_CLIENT_TIMEOUT,
    ClientState,
    EchoClientCore,
    Failed,
    OpenDuologue,
    random_key,
    random_payload,
)
from .core.per_ip import PerIpCounter, canonical_ip
from .core.ports import AllocationError, PortAllocator
from .core.protocol import (
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
from .core.server import (
    DEFAULT_MAX_IMAGE_TERM_LENGTH,
    Broadcast,
    CloseDuologue,
    CloseReason,
    CreateDuologue,
    DuologueInfo,
    EchoServerCore,
    Event,
    RejectImage,
    SendDuologue,
    ServerConfig,
    ServerStats,
)
from .core.secure_handshake import ServerSecrets
from .core.sessions import DEFAULT_SESSION_MAX, DEFAULT_SESSION_MIN, SessionAllocator

__all__ = [
    "DEFAULT_CLIENT_TIMEOUT", "DEFAULT_MAX_IMAGE_TERM_LENGTH", "DEFAULT_SESSION_MAX",
    "DEFAULT_SESSION_MIN", "ERROR_BAD_MESSAGE_DUOLOGUE", "STREAM_ID",
    "AllocationError", "Broadcast", "ClientState", "CloseDuologue", "CloseReason", "Connect",
    "CoreUsageError", "CreateDuologue", "DuologueInfo", "EchoClientCore", "EchoServerCore",
    "Echoed", "Event", "Failed", "Ignored", "OpenDuologue", "PerIpCounter", "PortAllocator",
    "Reason", "RejectImage", "Rejected", "SendDuologue", "ServerConfig", "ServerSecrets", "ServerStats",
    "SessionAllocator",
    "canonical_ip", "crypt", "decode", "format_connect", "format_echo",
    "format_error", "format_hello", "java_trim", "parse_duologue_reply", "parse_echo",
    "parse_hello", "parse_initial_reply", "random_key", "random_payload", "session_from_crypt",
    "split_source_identity",
]

