"""Telemetry event schema of the Echo 2.0 server (``SCHEMA_VERSION = 1``).

Telemetry is JSON Lines: one JSON object per line, UTF-8, ``\\n``-terminated. Every
event carries the common fields

==================  ==========  ===================================================
field               type        meaning
==================  ==========  ===================================================
``schema_version``  int         always :data:`SCHEMA_VERSION` for this module
``ts``              float       wall-clock time of the event, epoch seconds (UTC)
``kind``            str         one of the kinds below
``source``          str         who wrote it: ``"server"``, ``"load"`` (load client) …
``server_id``       str         which server instance the event is about
==================  ==========  ===================================================

plus the fields of its kind (all required; ``|null`` marks a field that must be present
but may be ``null``):

====================  ==============================================================
kind                  fields
====================  ==============================================================
``hello``             ``initial_session`` int, ``ip`` str, ``port`` int,
                      ``key_valid`` bool — a message arrived on the all-clients
                      channel; ``key_valid`` false when it is not a valid
                      ``HELLO <key>`` (malformed, oversize, key > 0xFFFFFFFF): then
                      a ``bad_message`` (``initial``) and a ``reject`` follow
``reject``            ``initial_session`` int, ``ip`` str, ``reason`` str — the server
                      answered ``<sid> ERROR …``; ``reason`` is one of
                      :data:`REJECT_REASONS`
``duologue_created``  ``session`` int, ``owner_ip`` str, ``data_port`` int,
                      ``control_port`` int, ``secure`` bool (optional: absent in
                      files written before secure mode, read as false) — the server
                      answered ``<sid> CONNECT …`` (``CONNECT-SECURE`` when secure)
``client_connected``  ``session`` int, ``ip`` str, ``wrong_ip`` bool — a client image
                      appeared on a duologue; ``wrong_ip`` true when its source IP is
                      not the owner's (it is then not served)
``bad_message``       ``session`` int|null, ``ip`` str, ``where`` str — a message that
                      is not valid protocol; ``where`` is ``"initial"`` (all-clients
                      channel, ``session`` = initial session; always after a
                      ``hello`` with ``key_valid`` false) or ``"duologue"``
``duologue_closed``   ``session`` int, ``owner_ip`` str, ``reason`` str (one of
                      :data:`CLOSE_REASONS`), ``lifetime_s`` float, ``msgs_in`` int,
                      ``msgs_out`` int, ``bytes_in`` int, ``bytes_out`` int
``blocklist_hit``     ``ip`` str, ``rule`` str — traffic from a blocklisted source was
                      dropped; ``rule`` is the matching blocklist entry (address or
                      prefix)
``driver_snapshot``   ``counters`` {name: int} (cumulative driver counters, and the
                      writer's own cumulative drop counts, e.g. ``dropped events``,
                      ``deleted telemetry files``, ``outbox drops``),
                      ``new_loss`` [loss record] and ``new_errors`` [error record]:
                      loss-report / distinct-error-log entries first seen or updated
                      since the previous snapshot
``blocklist_reload``  ``counters`` {name: int} (``version``, ``entries``, ``active``,
                      ``added``, ``removed``, ``duologues_closed``), ``reason`` str
                      (``file_changed`` or ``requested``) — the server put a new
                      version of its blocklist file in force; ``duologues_closed``
                      counts the duologues of newly blocked owners it closed
``rtt_sample``        ``client_ip`` str, ``rtt_us`` int, ``seq`` int — one measured
                      echo round trip (usually ``source="load"``)
====================  ==============================================================

A loss record holds ``observation_count`` int, ``total_bytes_lost`` int,
``first_observation_ts`` float, ``last_observation_ts`` float, ``session_id`` int,
``stream_id`` int, ``channel`` str, ``source`` str. An error record holds
``observation_count`` int, ``first_observation_ts`` float, ``last_observation_ts``
float, ``message`` str.

IP addresses are written without brackets, port or zone (``198.51.100.7``,
``2001:db8::1``). Readers must ignore fields they do not know; a new field is not a
version change, a changed meaning is.

Use :func:`make_event` to build an event; it rejects unknown kinds, missing, unknown
or mistyped fields with an :class:`EventError` that names the kind and the field.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

__all__ = [
    "SCHEMA_VERSION",
    "COMMON_FIELDS",
    "KIND_FIELDS",
    "KINDS",
    "REJECT_REASONS",
    "CLOSE_REASONS",
    "RELOAD_REASONS",
    "BAD_MESSAGE_PLACES",
    "EventError",
    "Field",
    "make_event",
]

SCHEMA_VERSION = 1

#: ``reject.reason`` values and the wire text of the ``ERROR`` each one stands for.
REJECT_REASONS: dict[str, str] = {
    "bad_message": "bad message",
    "server_full": "server full",
    "too_many_for_ip": "too many connections for IP address",
    "secure_mode_required": "secure mode required",
    "wrong_server_key": "wrong server key",
}
#: ``duologue_closed.reason`` values.
CLOSE_REASONS: tuple[str, ...] = (
    "expired",
    "bad_message",
    "client_gone",
    "send_deadline",
    "idle",
    "shutdown",
    "create_failed",
    "blocked",
    "reclaimed",
    "application",
)
#: ``blocklist_reload.reason`` values.
RELOAD_REASONS: tuple[str, ...] = ("file_changed", "requested")
#: ``bad_message.where`` values.
BAD_MESSAGE_PLACES: tuple[str, ...] = ("initial", "duologue")


class EventError(ValueError):
    """An event does not match the schema."""


_INT = (int,)
_NUM = (int, float)
_STR = (str,)
_BOOL = (bool,)


@dataclass(frozen=True)
class Field:
    """One field of an event (or of a nested record) and the values it accepts."""

    name: str
    types: tuple[type, ...]
    nullable: bool = False
    choices: tuple[str, ...] | None = None
    items: tuple["Field", ...] | None = None  # list of records with these fields
    values: tuple[type, ...] | None = None  # dict of str -> one of these types
    optional: bool = False  # may be absent (a field added after its kind: older files lack it)

    def check(self, value: Any, where: str) -> None:
        """Raise :class:`EventError` unless ``value`` is acceptable for this field."""
        label = f"{where}: field {self.name!r}"
        if value is None:
            if self.nullable:
                return
            raise EventError(f"{label} must not be null")
        if self.items is not None:
            if not isinstance(value, list):
                raise EventError(f"{label} must be a list, got {type(value).__name__}")
            for index, item in enumerate(value):
                _check_record(item, self.items, f"{label}[{index}]")
            return
        if self.values is not None:
            if not isinstance(value, dict):
                raise EventError(f"{label} must be an object, got {type(value).__name__}")
            for key, item in value.items():
                if not isinstance(key, str) or not _is_instance(item, self.values):
                    raise EventError(
                        f"{label}: entry {key!r} must map a string to "
                        f"{_type_names(self.values)}, got {type(item).__name__}"
                    )
            return
        if not _is_instance(value, self.types):
            raise EventError(
                f"{label} must be {_type_names(self.types)}, got {type(value).__name__} {value!r}"
            )
        if isinstance(value, float) and not math.isfinite(value):
            raise EventError(f"{label} must be finite, got {value!r}")
        if self.choices is not None and value not in self.choices:
            raise EventError(f"{label} must be one of {', '.join(self.choices)}; got {value!r}")


def _is_instance(value: Any, types: tuple[type, ...]) -> bool:
    # bool is an int subclass; a flag is never a number and a number never a flag.
    if isinstance(value, bool):
        return bool in types
    return isinstance(value, types)


def _type_names(types: tuple[type, ...]) -> str:
    return " or ".join("float" if t is float else t.__name__ for t in types)


def _check_record(record: Any, fields: tuple[Field, ...], where: str) -> None:
    if not isinstance(record, dict):
        raise EventError(f"{where} must be an object, got {type(record).__name__}")
    known = {f.name for f in fields}
    unknown = sorted(set(record) - known)
    if unknown:
        raise EventError(f"{where}: unknown field(s) {', '.join(unknown)}")
    for field in fields:
        if field.name not in record:
            if field.optional:
                continue
            raise EventError(f"{where}: missing field {field.name!r}")
        field.check(record[field.name], where)


#: Fields every event carries (``schema_version`` and ``ts`` are filled in by
#: :func:`make_event` when not given).
COMMON_FIELDS: tuple[Field, ...] = (
    Field("schema_version", _INT),
    Field("ts", _NUM),
    Field("kind", _STR),
    Field("source", _STR),
    Field("server_id", _STR),
)

LOSS_FIELDS: tuple[Field, ...] = (
    Field("observation_count", _INT),
    Field("total_bytes_lost", _INT),
    Field("first_observation_ts", _NUM),
    Field("last_observation_ts", _NUM),
    Field("session_id", _INT),
    Field("stream_id", _INT),
    Field("channel", _STR),
    Field("source", _STR),
)
ERROR_FIELDS: tuple[Field, ...] = (
    Field("observation_count", _INT),
    Field("first_observation_ts", _NUM),
    Field("last_observation_ts", _NUM),
    Field("message", _STR),
)

#: Per-kind fields, in the order they are written.
KIND_FIELDS: dict[str, tuple[Field, ...]] = {
    "hello": (
        Field("initial_session", _INT),
        Field("ip", _STR),
        Field("port", _INT),
        Field("key_valid", _BOOL),
    ),
    "reject": (
        Field("initial_session", _INT),
        Field("ip", _STR),
        Field("reason", _STR, choices=tuple(REJECT_REASONS)),
    ),
    "duologue_created": (
        Field("session", _INT),
        Field("owner_ip", _STR),
        Field("data_port", _INT),
        Field("control_port", _INT),
        Field("secure", _BOOL, optional=True),
    ),
    "client_connected": (
        Field("session", _INT),
        Field("ip", _STR),
        Field("wrong_ip", _BOOL),
    ),
    "bad_message": (
        Field("session", _INT, nullable=True),
        Field("ip", _STR),
        Field("where", _STR, choices=BAD_MESSAGE_PLACES),
    ),
    "duologue_closed": (
        Field("session", _INT),
        Field("owner_ip", _STR),
        Field("reason", _STR, choices=CLOSE_REASONS),
        Field("lifetime_s", _NUM),
        Field("msgs_in", _INT),
        Field("msgs_out", _INT),
        Field("bytes_in", _INT),
        Field("bytes_out", _INT),
    ),
    "blocklist_hit": (
        Field("ip", _STR),
        Field("rule", _STR),
    ),
    "blocklist_reload": (
        Field("counters", (dict,), values=_INT),
        Field("reason", _STR, choices=RELOAD_REASONS),
    ),
    "driver_snapshot": (
        Field("counters", (dict,), values=_INT),
        Field("new_loss", (list,), items=LOSS_FIELDS),
        Field("new_errors", (list,), items=ERROR_FIELDS),
    ),
    "rtt_sample": (
        Field("client_ip", _STR),
        Field("rtt_us", _INT),
        Field("seq", _INT),
    ),
}
KINDS: tuple[str, ...] = tuple(KIND_FIELDS)


def make_event(kind: str, **fields: Any) -> dict[str, Any]:
    """Build and validate one event of ``kind``.

    ``source`` and ``server_id`` are required; ``ts`` defaults to ``time.time()`` and
    ``schema_version`` to :data:`SCHEMA_VERSION` (any other version is refused).
    Raises :class:`EventError` naming the kind and the offending field.
    """
    if kind not in KIND_FIELDS:
        raise EventError(f"unknown event kind {kind!r}; known kinds: {', '.join(KINDS)}")
    event: dict[str, Any] = {
        "schema_version": fields.pop("schema_version", SCHEMA_VERSION),
        "ts": fields.pop("ts", None),
        "kind": kind,
    }
    if event["ts"] is None:
        event["ts"] = time.time()
    if event["schema_version"] != SCHEMA_VERSION:
        raise EventError(
            f"{kind} event: schema_version {event['schema_version']!r} is not "
            f"{SCHEMA_VERSION}, the only version this module writes"
        )
    record = {**event, **fields}
    _check_record(record, COMMON_FIELDS + KIND_FIELDS[kind], f"{kind} event")
    # Re-order: common fields first, then the kind's fields in schema order.
    return {f.name: record[f.name] for f in COMMON_FIELDS + KIND_FIELDS[kind] if f.name in record}
