"""The duologue layer's errors, the same on both sides: :class:`DuologueError` and its kinds.

A client's :func:`~aeron_py.duologue.connect` raises :class:`DuologueRefused` or
:class:`DuologueTimeout`; a :class:`~aeron_py.duologue.ClientDuologue` and a server
application's :class:`~aeron_py.duologue.Duologue` raise :class:`DuologueClosed` once the
duologue is closed.
"""
from __future__ import annotations

__all__ = ["CLOSED_HERE", "SERVER_GONE", "DuologueClosed", "DuologueError", "DuologueRefused", "DuologueTimeout"]

#: Why a duologue closed by this side is closed.
CLOSED_HERE = "closed by this client"
#: Why a duologue whose channels went away is closed.
SERVER_GONE = "the server closed the duologue"


class DuologueError(Exception):
    """A duologue could not be opened, or cannot go on."""


class DuologueRefused(DuologueError):
    """The server refused the handshake: ``reason`` is the text of its ``ERROR``
    (``server full``, ``too many connections for IP address``, ``wrong server key``, ...)."""

    def __init__(self, reason: str, message: str | None = None) -> None:
        super().__init__(message if message is not None else f"the server refused the duologue: {reason}")
        self.reason = reason


class DuologueTimeout(DuologueError, TimeoutError):
    """Something did not come in time: ``waiting_for`` says what."""

    def __init__(self, message: str, waiting_for: str) -> None:
        super().__init__(message)
        self.waiting_for = waiting_for


class DuologueClosed(DuologueError):
    """The duologue is closed: ``reason`` is the server's ``ERROR`` text (``bad message``),
    :data:`SERVER_GONE` when its channels went away, :data:`CLOSED_HERE`, or, on the server
    side, why the duologue closed (a :class:`~.core.contract.CloseReason`'s value)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"duologue closed: {reason}")
        self.reason = reason
