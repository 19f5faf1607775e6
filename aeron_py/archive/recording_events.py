"""The Archive's recording events: started, progress, stopped.

An Archive with recording events enabled (Java: ``aeron.archive.recording.events.enabled=true``)
publishes one message per change of a recording on its recording events channel
(``aeron.archive.recording.events.channel``, stream ``aeron.archive.recording.events.stream.id``;
the defaults are :data:`~aeron_py.archive.settings.DEFAULT_RECORDING_EVENTS_CHANNEL` and stream 30).
Each is an SBE message of the archive codecs (schema 101, little-endian): an 8-byte header
(block length, template id, schema id, version), the fixed block, then, for
``RecordingStarted``, two length-prefixed ASCII strings.

* :func:`decode_recording_event` - bytes to :class:`RecordingStarted`,
  :class:`RecordingProgress` or :class:`RecordingStopped` (no I/O; :class:`RecordingEventError`
  says what is wrong and where);
* :class:`RecordingEvents` - a subscription to that channel handing out decoded events:
  :meth:`~RecordingEvents.poll` with a callback, :meth:`~RecordingEvents.take` a batch,
  :meth:`~RecordingEvents.receive` one with a timeout, or iteration.
  ``aeron_py.asyncio.archive.RecordingEvents`` is its asyncio face.
"""
from __future__ import annotations

import struct
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from ..idle import BackoffIdleStrategy
from ..validation import require_int
from .settings import DEFAULT_RECORDING_EVENTS_CHANNEL, DEFAULT_RECORDING_EVENTS_STREAM_ID

if TYPE_CHECKING:
    from ..client import Aeron
    from ..subscription import Subscription

__all__ = ["RECORDING_EVENTS_SCHEMA_ID", "RecordingEvent", "RecordingEventError", "RecordingEvents",
           "RecordingProgress", "RecordingStarted", "RecordingStopped", "decode_recording_event"]

#: The archive codecs' SBE schema id.
RECORDING_EVENTS_SCHEMA_ID = 101
_HEADER = struct.Struct("<HHHH")  # block length, template id, schema id, version
_STARTED = struct.Struct("<qqii")  # recording id, start position, session id, stream id
_POSITIONS = struct.Struct("<qqq")  # recording id, start position, position / stop position
_VAR_LENGTH = struct.Struct("<I")
_STARTED_ID, _PROGRESS_ID, _STOPPED_ID = 101, 102, 103
#: The codecs' bound on a var-data length (``varAsciiEncoding``'s maxValue).
_MAX_VAR_LENGTH = 1 << 30


class RecordingEventError(ValueError):
    """A message on the recording events channel that is not a recording event this client reads."""


@dataclass(frozen=True, slots=True)
class RecordingStarted:
    """A recording began: its image's session and stream, its channel and the source's identity."""

    recording_id: int
    start_position: int
    session_id: int
    stream_id: int
    channel: str
    source_identity: str


@dataclass(frozen=True, slots=True)
class RecordingProgress:
    """A recording reached ``position``."""

    recording_id: int
    start_position: int
    position: int


@dataclass(frozen=True, slots=True)
class RecordingStopped:
    """A recording ended at ``stop_position``."""

    recording_id: int
    start_position: int
    stop_position: int


RecordingEvent = Union[RecordingStarted, RecordingProgress, RecordingStopped]


def decode_recording_event(data: bytes | bytearray | memoryview) -> RecordingEvent:
    """One message of the recording events channel, decoded (RecordingEventError: not one).

    A newer schema may lengthen the fixed block: the header's block length is honoured."""
    buf = bytes(data)
    if len(buf) < _HEADER.size:
        raise RecordingEventError(f"recording event of {len(buf)} bytes: shorter than its {_HEADER.size}-byte header")
    block_length, template_id, schema_id, version = _HEADER.unpack_from(buf)
    if schema_id != RECORDING_EVENTS_SCHEMA_ID:
        raise RecordingEventError(f"message of schema {schema_id} (template {template_id}) on the recording events "
                                  f"channel: the archive codecs are schema {RECORDING_EVENTS_SCHEMA_ID}")
    fixed = _STARTED if template_id == _STARTED_ID else _POSITIONS
    if template_id not in (_STARTED_ID, _PROGRESS_ID, _STOPPED_ID):
        raise RecordingEventError(f"template {template_id} (schema version {version}) is not a recording event: "
                                  f"expected {_STARTED_ID} started, {_PROGRESS_ID} progress or {_STOPPED_ID} stopped")
    if block_length < fixed.size or len(buf) < _HEADER.size + block_length:
        raise RecordingEventError(f"template {template_id}: block of {block_length} bytes in a message of "
                                  f"{len(buf)} (needs {fixed.size} after the {_HEADER.size}-byte header)")
    if template_id != _STARTED_ID:
        recording_id, start, position = _POSITIONS.unpack_from(buf, _HEADER.size)
        kind = RecordingProgress if template_id == _PROGRESS_ID else RecordingStopped
        return kind(recording_id, start, position)
    recording_id, start, session_id, stream_id = _STARTED.unpack_from(buf, _HEADER.size)
    channel, offset = _var_ascii(buf, _HEADER.size + block_length, "channel")
    source_identity, _ = _var_ascii(buf, offset, "sourceIdentity")
    return RecordingStarted(recording_id, start, session_id, stream_id, channel, source_identity)


def _var_ascii(buf: bytes, offset: int, name: str) -> tuple[str, int]:
    """The length-prefixed ASCII field ``name`` at ``offset``, and the offset after it."""
    if len(buf) < offset + _VAR_LENGTH.size:
        raise RecordingEventError(f"RecordingStarted: {name} length at byte {offset} past the end ({len(buf)} bytes)")
    (length,) = _VAR_LENGTH.unpack_from(buf, offset)
    start = offset + _VAR_LENGTH.size
    if length > _MAX_VAR_LENGTH or len(buf) < start + length:
        raise RecordingEventError(f"RecordingStarted: {name} of {length} bytes at byte {start} past the end "
                                  f"({len(buf)} bytes)")
    try:
        return buf[start:start + length].decode("ascii"), start + length
    except UnicodeDecodeError as exc:
        raise RecordingEventError(f"RecordingStarted: {name} at byte {start} is not ASCII: {exc.reason}") from None


class RecordingEvents:
    """The recording events of an Archive, from a subscription of ``aeron`` to ``channel`` /
    ``stream_id`` (the Archive's ``aeron.archive.recording.events.*`` settings).

    A message that is not a recording event raises :class:`RecordingEventError` from the
    call that read it; the messages after it stay for the next call. Close it (or use
    ``with``) to free the subscription. One thread at a time, as a subscription."""

    def __init__(self, aeron: Aeron, channel: object | None = None, stream_id: int | None = None, *,
                 timeout: float | None = None) -> None:
        stream = DEFAULT_RECORDING_EVENTS_STREAM_ID if stream_id is None else require_int("stream_id", stream_id)
        self._aeron = aeron
        self._work = aeron.do_work if bool(aeron.settings().get("use_conductor_agent_invoker")) else None
        self.subscription: Subscription = aeron.add_subscription(
            DEFAULT_RECORDING_EVENTS_CHANNEL if channel is None else channel, stream, timeout=timeout)

    def poll(self, handler: Callable[[RecordingEvent], Any], limit: int = 10) -> int:
        """Hand up to ``limit`` waiting events to ``handler``; the number handed (never waits)."""
        limit = require_int("limit", limit, min=1)
        return self.subscription.poll(lambda data: handler(decode_recording_event(data)), limit, with_header=False)

    def take(self, limit: int = 10) -> list[RecordingEvent]:
        """Up to ``limit`` waiting events (never waits)."""
        events: list[RecordingEvent] = []
        self.poll(events.append, limit)
        return events

    def receive(self, timeout: float) -> RecordingEvent | None:
        """The next event, waiting at most ``timeout`` seconds (None: none came)."""
        if not timeout >= 0:
            raise ValueError(f"timeout must be >= 0 seconds, got {timeout!r}")
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)
        deadline = time.monotonic() + timeout
        while True:
            events = self.take(1)
            if events:
                return events[0]
            if time.monotonic() >= deadline:
                return None
            idle.idle(self._work() if self._work is not None else 0)

    def __iter__(self) -> Iterator[RecordingEvent]:
        """The events as they come, waiting between them; ends when the subscription is closed."""
        while not self.subscription.is_closed:
            event = self.receive(0.1)
            if event is not None:
                yield event

    def close(self) -> None:
        """Close the subscription. Idempotent."""
        self.subscription.close()

    def __enter__(self) -> "RecordingEvents":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
