"""What both Echo clients share: how a run ended, the exit codes, the pacing check.

:class:`EchoResult` (and its :attr:`~EchoResult.exit_code`) is what :class:`~.sync.EchoClient`
and :class:`~.async_client.AsyncEchoClient` return; :func:`check_pacing` checks their
echo count and pauses. Their channels are the duologue layer's
(:mod:`aeron_py.duologue.client_channels`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...validation import require_int

__all__ = ["EXIT_AUTHENTICATION", "EXIT_FAILED", "EXIT_OK", "EXIT_SERVER_ERROR", "EchoClientError", "EchoResult",
           "check_pacing"]

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


def check_pacing(count: int, interval: float, hello_interval: float) -> None:
    """A client's echo count and pauses, checked the same way by every client (ValueError)."""
    require_int("count", count, min=0)
    for name, value in (("interval", interval), ("hello_interval", hello_interval)):
        if not value >= 0:
            raise ValueError(f"{name} must be >= 0 seconds, got {value!r}")
