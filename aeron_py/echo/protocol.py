"""Echo 2.0 wire format.

Moved to :mod:`aeron_py.echo.core.protocol`; this import path stays for existing code.
"""
from __future__ import annotations

from .core.protocol import (  # noqa: F401
    ECHO_PREFIX, ERROR_BAD_MESSAGE_DUOLOGUE, INT32_MAX, INT32_MIN, JAVA_LINE_TERMINATORS, STREAM_ID,
    UINT32_MAX, Connect, CoreUsageError, DuologueReply, Echoed, Ignored, InitialReply, Reason,
    Rejected, crypt, decode, format_connect, format_echo, format_error, format_hello, java_trim,
    parse_duologue_reply, parse_echo, parse_hello, parse_initial_reply, session_from_crypt,
    split_source_identity, to_signed32,
)

__all__ = [
    "ECHO_PREFIX", "ERROR_BAD_MESSAGE_DUOLOGUE", "INT32_MAX", "INT32_MIN", "JAVA_LINE_TERMINATORS",
    "STREAM_ID", "UINT32_MAX", "Connect", "CoreUsageError", "DuologueReply", "Echoed", "Ignored",
    "InitialReply", "Reason", "Rejected", "crypt", "decode", "format_connect", "format_echo",
    "format_error", "format_hello", "java_trim", "parse_duologue_reply", "parse_echo",
    "parse_hello", "parse_initial_reply", "session_from_crypt", "split_source_identity",
    "to_signed32",
]
