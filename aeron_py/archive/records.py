"""What an Archive reports: recording descriptors, recording subscriptions, recording signals."""
from __future__ import annotations

import enum
from dataclasses import dataclass


class SourceLocation(enum.IntEnum):
    """Where the recorded publication is, seen from the Archive (``aeron_archive_source_location_t``).

    LOCAL: on the Archive's own media driver (``aeron:ipc``, or a UDP publication added on
    that driver): the Archive records from the publication's log. REMOTE: anywhere else:
    the Archive subscribes to it over the network."""

    LOCAL = 0
    REMOTE = 1


class RecordingSignal(enum.IntEnum):
    """The transitions of a recording (``aeron_archive_client_recording_signal_t``)."""

    START = 0
    STOP = 1
    EXTEND = 2
    REPLICATE = 3
    MERGE = 4
    SYNC = 5
    DELETE = 6
    REPLICATE_END = 7


@dataclass(frozen=True)
class RecordingDescriptor:
    """One recording in the Archive's catalog (``aeron_archive_recording_descriptor_t``).

    ``stop_position`` is -1 while the recording is active; ``*_timestamp`` are the Archive's
    epoch milliseconds (``stop_timestamp`` -1 while active)."""

    control_session_id: int
    correlation_id: int
    recording_id: int
    start_timestamp: int
    stop_timestamp: int
    start_position: int
    stop_position: int
    initial_term_id: int
    segment_file_length: int
    term_buffer_length: int
    mtu_length: int
    session_id: int
    stream_id: int
    stripped_channel: str
    original_channel: str
    source_identity: str

    @property
    def is_active(self) -> bool:
        """True while the Archive is still recording it (no stop position yet)."""
        return self.stop_position == -1


@dataclass(frozen=True)
class RecordingSubscription:
    """A subscription the Archive records from (``aeron_archive_recording_subscription_descriptor_t``)."""

    control_session_id: int
    correlation_id: int
    subscription_id: int
    stream_id: int
    stripped_channel: str


@dataclass(frozen=True)
class RecordingSignalEvent:
    """A recording changed state (``aeron_archive_recording_signal_t``); ``signal`` is None
    for a code this version does not know (``code`` keeps it)."""

    control_session_id: int
    recording_id: int
    subscription_id: int
    position: int
    code: int

    @property
    def signal(self) -> RecordingSignal | None:
        try:
            return RecordingSignal(self.code)
        except ValueError:
            return None


__all__ = ["RecordingDescriptor", "RecordingSignal", "RecordingSignalEvent", "RecordingSubscription",
           "SourceLocation"]
