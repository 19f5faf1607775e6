"""Telemetry of the Echo 2.0 server: event schema, JSON Lines writer and reader.

See :mod:`aeron_py.telemetry.events` for the schema (one table per event kind).
"""

from aeron_py.telemetry.events import (
    KINDS,
    SCHEMA_VERSION,
    EventError,
    make_event,
)
from aeron_py.telemetry.reader import ReadStats, read_events
from aeron_py.telemetry.writer import EventWriter, EventWriterError

__all__ = [
    "KINDS",
    "SCHEMA_VERSION",
    "EventError",
    "EventWriter",
    "EventWriterError",
    "ReadStats",
    "make_event",
    "read_events",
]
