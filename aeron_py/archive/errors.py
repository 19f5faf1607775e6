"""The Archive's typed exceptions.

An Archive refuses a request with an error code (``ArchiveException`` in Aeron's Java
archive; ``ARCHIVE_ERROR_CODE_*`` in its C client, which reports it as
``aeron_errcode() == -(200 + code)``). Each code has its own exception here, all
subclasses of :class:`ArchiveError` (itself an :class:`~aeron_py.errors.AeronError`), with
``archive_code`` and the Archive's message. A request the Archive did not answer within
the message timeout raises :class:`ArchiveTimeoutError`.
"""
from __future__ import annotations

import errno
from collections.abc import Callable
from typing import TypeVar

from ..errors import AeronError, AeronTimeoutError, ClientClosedError

T = TypeVar("T")

#: aeron_errcode() of an Archive error is -(ARCHIVE_CODE_OFFSET + code) (C client's mapping).
ARCHIVE_CODE_OFFSET = 200


class ArchiveError(AeronError):
    """The Archive refused a request; ``archive_code`` says why (None when it gave no code)."""

    archive_code: int | None = None


class ArchiveTimeoutError(ArchiveError, AeronTimeoutError):
    """The Archive did not answer within the message timeout (or is not there)."""


class ArchiveClosedError(ArchiveError, ClientClosedError):
    """The archive connection, or the Aeron client under it, is closed."""


class GenericArchiveError(ArchiveError):
    """GENERIC (0): the Archive's catch-all."""

    archive_code = 0


class ActiveListingError(ArchiveError):
    """ACTIVE_LISTING (1): a listing is already in progress on this session."""

    archive_code = 1


class ActiveRecordingError(ArchiveError):
    """ACTIVE_RECORDING (2): the recording is active (stop it first)."""

    archive_code = 2


class ActiveSubscriptionError(ArchiveError):
    """ACTIVE_SUBSCRIPTION (3): that channel and stream are already being recorded."""

    archive_code = 3


class UnknownSubscriptionError(ArchiveError):
    """UNKNOWN_SUBSCRIPTION (4): no recording subscription by that id, channel or stream."""

    archive_code = 4


class UnknownRecordingError(ArchiveError):
    """UNKNOWN_RECORDING (5): no recording by that id."""

    archive_code = 5


class UnknownReplayError(ArchiveError):
    """UNKNOWN_REPLAY (6): no replay session by that id."""

    archive_code = 6


class MaxReplaysError(ArchiveError):
    """MAX_REPLAYS (7): the Archive runs as many replays as it allows."""

    archive_code = 7


class MaxRecordingsError(ArchiveError):
    """MAX_RECORDINGS (8): the Archive holds as many recordings as it allows."""

    archive_code = 8


class InvalidExtensionError(ArchiveError):
    """INVALID_EXTENSION (9): the recording cannot be extended so."""

    archive_code = 9


class AuthenticationRejectedError(ArchiveError):
    """AUTHENTICATION_REJECTED (10): the Archive refused this client's credentials."""

    archive_code = 10


class StorageSpaceError(ArchiveError):
    """STORAGE_SPACE (11): the Archive's disk is (nearly) full."""

    archive_code = 11


class UnknownReplicationError(ArchiveError):
    """UNKNOWN_REPLICATION (12): no replication by that id."""

    archive_code = 12


class UnauthorisedActionError(ArchiveError):
    """UNAUTHORISED_ACTION (13): this client may not do that."""

    archive_code = 13


class ReplicationConnectionFailureError(ArchiveError):
    """REPLICATION_CONNECTION_FAILURE (14): the source archive could not be reached."""

    archive_code = 14


class EmptyRecordingError(ArchiveError):
    """EMPTY_RECORDING (15): the recording holds nothing."""

    archive_code = 15


class InvalidPositionError(ArchiveError):
    """INVALID_POSITION (16): the position is outside the recording or not on a frame."""

    archive_code = 16


_BY_CODE: dict[int, type[ArchiveError]] = {
    cls.archive_code: cls
    for cls in (GenericArchiveError, ActiveListingError, ActiveRecordingError, ActiveSubscriptionError,
                UnknownSubscriptionError, UnknownRecordingError, UnknownReplayError, MaxReplaysError,
                MaxRecordingsError, InvalidExtensionError, AuthenticationRejectedError, StorageSpaceError,
                UnknownReplicationError, UnauthorisedActionError, ReplicationConnectionFailureError,
                EmptyRecordingError, InvalidPositionError)
    if cls.archive_code is not None
}


def typed(call: Callable[[], T]) -> T:
    """``call()``, an AeronError it raises replaced by its typed exception (:func:`translate`)."""
    try:
        return call()
    except AeronError as exc:
        raise translate(exc) from None


def translate(exc: AeronError) -> AeronError:
    """The typed exception for an error the archive binding raised (others come back as they are)."""
    code = exc.errcode
    message = str(exc)
    cls: type[ArchiveError] | None = None
    if isinstance(code, int) and code <= -ARCHIVE_CODE_OFFSET:
        cls = _BY_CODE.get(-code - ARCHIVE_CODE_OFFSET, ArchiveError)
    elif code in (errno.ETIMEDOUT, -errno.ETIMEDOUT) or exc.cause_code == errno.ETIMEDOUT:
        cls = ArchiveTimeoutError  # cause_code: also the connect's "connect timeout" (its code is -1)
    elif code == errno.EPIPE:
        cls = ArchiveClosedError
    if cls is None:
        return exc
    typed = cls(message)
    typed.errcode, typed.cause_code = code, exc.cause_code
    return typed


__all__ = [
    "ARCHIVE_CODE_OFFSET",
    "ActiveListingError",
    "ActiveRecordingError",
    "ActiveSubscriptionError",
    "ArchiveClosedError",
    "ArchiveError",
    "ArchiveTimeoutError",
    "AuthenticationRejectedError",
    "EmptyRecordingError",
    "GenericArchiveError",
    "InvalidExtensionError",
    "InvalidPositionError",
    "MaxRecordingsError",
    "MaxReplaysError",
    "ReplicationConnectionFailureError",
    "StorageSpaceError",
    "UnauthorisedActionError",
    "UnknownRecordingError",
    "UnknownReplayError",
    "UnknownReplicationError",
    "UnknownSubscriptionError",
]
