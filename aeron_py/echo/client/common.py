"""What both Echo clients share: how a run ended, the exit codes, the channels and checks.

:class:`EchoResult` (and its :attr:`~EchoResult.exit_code`) is what :class:`~.sync.EchoClient`
and :class:`~.async_client.AsyncEchoClient` return; :func:`publication_channel` makes a
client publication's URI, sending from a chosen local address through a manual-MDC
publication when ``interface`` is given (Aeron's own ``interface=`` only accepts addresses
configured on a network interface); :func:`check_pacing` and :func:`source_ip` are the
checks and the view both clients use.
"""
from __future__ import annotations

import socket
from dataclasses import dataclass

from ...channel import ChannelUri
from ...validation import require_int

__all__ = ["DEFAULT_TERM_LENGTH", "EXIT_AUTHENTICATION", "EXIT_FAILED", "EXIT_OK", "EXIT_SERVER_ERROR",
           "EchoClientError", "EchoResult", "check_pacing", "publication_channel", "source_ip"]

#: Term length of a client's publications (Aeron's minimum; messages are <= 1 KiB).
DEFAULT_TERM_LENGTH = 64 * 1024
#: Exit codes of :attr:`EchoResult.exit_code` (4: secure mode could not authenticate the server).
EXIT_OK, EXIT_SERVER_ERROR, EXIT_FAILED, EXIT_AUTHENTICATION = 0, 1, 3, 4


@dataclass(frozen=True)
class EchoResult:
    """How a client run ended.  Times are seconds."""

    ok: bool
    echoes: int
    rtts: tuple[float, ...] = ()
    handshake: float | None = None  # first HELLO sent -> CONNECT received
    reason: str | None = None
    server_reason: str | None = None  # the server's ERROR text
    session_id: int | None = None  # the duologue session
    source_ip: str | None = None
    secure: bool = False  # a secure-mode client
    authentication_failed: bool = False  # secure mode: the server's key was wrong or refused

    @property
    def exit_code(self) -> int:
        if self.ok:
            return EXIT_OK
        if self.authentication_failed:
            return EXIT_AUTHENTICATION
        return EXIT_SERVER_ERROR if self.server_reason is not None else EXIT_FAILED


class EchoClientError(Exception):
    """A client run failed; ``result`` says how."""

    def __init__(self, result: EchoResult) -> None:
        super().__init__(result.reason)
        self.result = result


def publication_channel(address: str, port: int, *, session_id: int | None = None, interface: str | None = None,
                        term_length: int | None = None) -> tuple[ChannelUri, ChannelUri | None]:
    """A client publication to ``address:port``: its URI, and the destination to add to
    it when it sends from ``interface`` (a manual-MDC publication)."""
    if interface is None:
        return ChannelUri.udp(endpoint=(address, port), reliable=True, session_id=session_id,
                              term_length=term_length), None
    uri = ChannelUri.udp(control=(interface, 0), control_mode="manual", reliable=True, session_id=session_id,
                         term_length=term_length)
    return uri, ChannelUri.udp(endpoint=(address, port))


def check_pacing(count: int, interval: float, hello_interval: float) -> None:
    """A client's echo count and pauses, checked the same way by every client (ValueError)."""
    require_int("count", count, min=0)
    for name, value in (("interval", interval), ("hello_interval", hello_interval)):
        if not value >= 0:
            raise ValueError(f"{name} must be >= 0 seconds, got {value!r}")


def source_ip(address: str, port: int, interface: str | None = None) -> str:
    """The address a server at ``address:port`` sees: ``interface``, else the kernel's route choice."""
    if interface is not None:
        return interface
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:  # connect() sends nothing
        probe.connect((address, port))
        return str(probe.getsockname()[0])
