"""Echo 2.0 protocol as a sans-I/O core (no Aeron, sockets, threads or clocks).

See ``/work/shared/spec/echo2.md``.  Modules: :mod:`.protocol` (wire format),
:mod:`.ports`, :mod:`.sessions`, :mod:`.per_ip` (allocators and counters),
:mod:`.server_core` and :mod:`.client_core` (state machines).
"""

from __future__ import annotations

from .client_core import (
    DEFAULT_CLIENT_TIMEOUT,
    ClientState,
    EchoClientCore,
    Failed,
    OpenDuologue,
    random_key,
    random_payload,
)
from .per_ip import PerIpCounter, address_key, canonical_ip
from .ports import AllocationError, PortAllocator
from .protocol import (
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
from .server_core import (
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
from .sessions import DEFAULT_SESSION_MAX, DEFAULT_SESSION_MIN, SessionAllocator

__all__ = [
    "DEFAULT_CLIENT_TIMEOUT", "DEFAULT_MAX_IMAGE_TERM_LENGTH", "DEFAULT_SESSION_MAX",
    "DEFAULT_SESSION_MIN", "ERROR_BAD_MESSAGE_DUOLOGUE", "STREAM_ID",
    "AllocationError", "Broadcast", "ClientState", "CloseDuologue", "CloseReason", "Connect",
    "CoreUsageError", "CreateDuologue", "DuologueInfo", "EchoClientCore", "EchoServerCore",
    "Echoed", "Event", "Failed", "Ignored", "OpenDuologue", "PerIpCounter", "PortAllocator",
    "Reason", "RejectImage", "Rejected", "SendDuologue", "ServerConfig", "ServerStats",
    "SessionAllocator",
    "address_key", "canonical_ip", "crypt", "decode", "format_connect", "format_echo",
    "format_error", "format_hello", "java_trim", "parse_duologue_reply", "parse_echo",
    "parse_hello", "parse_initial_reply", "random_key", "random_payload", "session_from_crypt",
    "split_source_identity",
]
