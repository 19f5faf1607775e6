"""Aeron Archive from Python: record streams to disk, list the recordings, replay them.

:class:`AeronArchive` is Aeron's C archive client (``aeron_archive.h``), linked into the
extension, over an :class:`~aeron_py.Aeron` client; the Archive it talks to is Aeron's
Java ``Archive``. See ``docs/archive.md``.
"""
from __future__ import annotations

from .. import _aeron

if not hasattr(_aeron, "archive"):
    raise ImportError(
        "aeron_py was built without the Aeron Archive client (AERON_PY_ARCHIVE=OFF): rebuild it with "
        "the archive on (the default; unset AERON_PY_ARCHIVE)",
        name=__name__,
    )

from .client import FOLLOW, AeronArchive  # noqa: E402
from .segments import segment_file_base_position  # noqa: E402
from . import errors as _errors  # noqa: E402
from .errors import *  # noqa: E402,F403
from .records import (RecordingDescriptor, RecordingSignal, RecordingSignalEvent,  # noqa: E402
                      RecordingSubscription, SourceLocation)
from .persistent import FROM_LIVE, FROM_START, PersistentCounters, PersistentState, PersistentSubscription  # noqa: E402
from .replay_merge import ReplayMerge  # noqa: E402
from .recording_events import (RecordingEvent, RecordingEventError, RecordingEvents,  # noqa: E402
                               RecordingProgress, RecordingStarted, RecordingStopped, decode_recording_event)

__all__ = [
    "FOLLOW",
    "FROM_LIVE",
    "FROM_START",
    "AeronArchive",
    "PersistentCounters",
    "PersistentState",
    "PersistentSubscription",
    "RecordingDescriptor",
    "RecordingEvent",
    "RecordingEventError",
    "RecordingEvents",
    "RecordingProgress",
    "RecordingSignal",
    "RecordingSignalEvent",
    "RecordingStarted",
    "RecordingStopped",
    "RecordingSubscription",
    "ReplayMerge",
    "SourceLocation",
    "decode_recording_event",
    "segment_file_base_position",
]
__all__ += _errors.__all__
