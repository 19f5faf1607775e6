"""Typed exceptions.

Every exception raised by aeron_py derives from :class:`AeronError`, which is the
extension's own type: failures inside the C library carry ``errcode``
(``aeron_errcode()``), ``cause_code`` (the most specific code: the media driver's own,
e.g. 98 for EADDRINUSE, when the client reports only "generic error") and Aeron's message
text (``aeron_errmsg()``). The extension raises the failures code acts on as subclasses,
chosen by those codes (never by the text): :class:`AddressInUseError`,
:class:`DriverTimeoutError` and :class:`RetryLaterError`.
"""
from __future__ import annotations

from . import _aeron

AeronError = _aeron.AeronError
AddressInUseError = _aeron.AddressInUseError
DriverTimeoutError = _aeron.DriverTimeoutError
RetryLaterError = _aeron.RetryLaterError


class AeronTimeoutError(AeronError, TimeoutError):
    """A bounded wait (add publication/subscription, driver start, connect) ran out."""


class ClientClosedError(AeronError):
    """The client, or the handle's owner, is closed (by you, or by the driver's timeout).

    Raised from C by ``Claim.commit()``/``abort()`` when the client closed while the claim
    was pending (the claim was aborted before the log was unmapped).
    """


class OfferError(AeronError):
    """An offer or claim failed; ``code`` is the C result (``AERON_PUBLICATION_*``)."""

    retryable = False

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class NotConnectedError(OfferError):
    """NOT_CONNECTED (-1): no subscriber yet. Retryable."""

    retryable = True


class BackPressuredError(OfferError):
    """BACK_PRESSURED (-2): subscribers are behind. Retryable."""

    retryable = True


class AdminActionError(OfferError):
    """ADMIN_ACTION (-3): the log is rotating. Retry at once."""

    retryable = True


class PublicationClosedError(OfferError):
    """CLOSED (-4): the publication is closed. Terminal."""


class MaxPositionExceededError(OfferError):
    """MAX_POSITION_EXCEEDED (-5): the stream reached its maximum position. Terminal."""


class PublicationError(OfferError):
    """ERROR (-6): the C client reported an error. Terminal."""


_BY_CODE: dict[int, type[OfferError]] = {
    _aeron.NOT_CONNECTED: NotConnectedError,
    _aeron.BACK_PRESSURED: BackPressuredError,
    _aeron.ADMIN_ACTION: AdminActionError,
    _aeron.PUBLICATION_CLOSED: PublicationClosedError,
    _aeron.MAX_POSITION_EXCEEDED: MaxPositionExceededError,
    _aeron.PUBLICATION_ERROR: PublicationError,
}

RESULT_NAMES: dict[int, str] = {
    _aeron.NOT_CONNECTED: "NOT_CONNECTED",
    _aeron.BACK_PRESSURED: "BACK_PRESSURED",
    _aeron.ADMIN_ACTION: "ADMIN_ACTION",
    _aeron.PUBLICATION_CLOSED: "CLOSED",
    _aeron.MAX_POSITION_EXCEEDED: "MAX_POSITION_EXCEEDED",
    _aeron.PUBLICATION_ERROR: "ERROR",
}


def offer_error(code: int, where: str) -> OfferError:
    """The typed exception for a negative offer/claim result ``code``.

    Registered with the extension at import (``aeron_py.publication``): the C fast paths
    (``offer``, ``offer_batch``, ``try_claim``, ``Claim.commit``) call it to build the
    exception they raise, so names and classes stay defined here.
    """
    name = RESULT_NAMES.get(code, "UNKNOWN")
    cls = _BY_CODE.get(code, OfferError)
    return cls(f"{where}: offer failed with {name} ({code})", code)


def aeron_cause(exc: BaseException) -> str:
    """The informative line of an Aeron error trace: its first ``(code) text`` line that
    is not the C client's "generic error, see message" (e.g. ``(98) Address already in
    use``), else the first line."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for line in lines:
        if line.startswith("(") and "generic error" not in line:
            return line
    return lines[0] if lines else type(exc).__name__


def error_summary(exc: BaseException) -> str:
    """One line for logs and failure reasons: the failed call and the informative line of
    the trace (``aeron_async_add_poll: (98) Address already in use``), not the first
    line alone, which for an error the driver reported says only "generic error"."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    cause = aeron_cause(exc)
    if cause == lines[0]:
        return cause
    call = lines[0].split(": (", 1)[0] if ": (" in lines[0] else ""
    return f"{call}: {cause}" if call else cause

