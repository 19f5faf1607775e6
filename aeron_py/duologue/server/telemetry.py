"""Telemetry of the Echo 2.0 server glue (schema: :mod:`aeron_py.telemetry.events`).

:class:`ServerTelemetry` turns the core's :class:`~.server_core.Event` actions into
schema events (field names differ; the HELLO source port and ``key_valid`` come from
the glue and from the ``reject`` event of the same action list) and writes a
``driver_snapshot`` every ``interval`` seconds: selected system counters plus the
loss-report and error-log entries that are new or updated since the last snapshot.
Telemetry never stops the server: an event the schema refuses is logged and skipped.

Off the loop thread: the loop only translates and rate-limits; the events go through
a bounded :class:`~.event_queue.EventQueue` to a writer thread (a full queue drops and
counts, never blocks), and the snapshot's driver reads (counters, loss report, error
log) run on that thread too.  Only the glue's own counters are read on the loop.

Bounded: each kind but ``driver_snapshot`` has a rate budget (``event_rate`` per
second, bursts of the same size); events over it are counted, not written.  The
writer keeps at most ``max_files`` files and ``max_total_bytes`` bytes (oldest
deleted).  Every snapshot's ``counters`` carry what was dropped, cumulatively:
``dropped events`` (budget, full queue and schema refusals), ``deleted telemetry files`` /
``deleted telemetry bytes`` (retention), plus the glue's own counters
(``extra_counters``: outbox drops, coalesced refusals, folded log lines, filter drops).
"""
from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from typing import Any

from ...stat import DriverStat
from ...telemetry import EventWriter
from ...telemetry.events import REJECT_REASONS
from .event_queue import DEFAULT_QUEUE_CAPACITY, EventQueue
from .blocklist_watch import BlocklistChange
from ..core.contract import Action, Event

logger = logging.getLogger(__name__)

#: Wire reason of an ``ERROR`` -> ``reject.reason`` in the schema.
WIRE_REASONS = {wire: name for name, wire in REJECT_REASONS.items()}
_BAD_HELLO_CAUSES = ("malformed", "oversize")
#: Core events that become exactly one schema event of the same kind (checked against
#: their rate before they are translated).
_ONE_TO_ONE = frozenset({"hello", "blocklist_hit", "duologue_created", "client_connected", "bad_message",
                         "duologue_closed"})
#: System counters in every ``driver_snapshot`` ("Errors: version=..." is keyed "Errors").
SNAPSHOT_COUNTERS = ("Bytes sent", "Bytes received", "NAKs sent", "NAKs received",
                     "Retransmits sent", "Errors", "Bytes currently mapped")


DEFAULT_EVENT_RATE = 200.0
DEFAULT_MAX_FILES = 1024  # with 2 s rotation; the byte cap (16 MiB) still bounds a flood
DEFAULT_MAX_TOTAL_BYTES = 16 * 1024 * 1024


class _Budget:
    """A token bucket: ``rate`` events per second, bursts of ``rate``."""

    def __init__(self, rate: float, now: float) -> None:
        self.rate, self.tokens, self.at = rate, rate, now

    def available(self, now: float) -> bool:
        """Whether :meth:`take` would succeed now (nothing is taken)."""
        self.tokens = min(self.rate, self.tokens + (now - self.at) * self.rate)
        self.at = now
        return self.tokens >= 1.0

    def take(self, now: float) -> bool:
        if self.available(now):
            self.tokens -= 1.0
            return True
        return False


class ServerTelemetry:
    """Turns the core's :class:`Event` actions into schema events and snapshots the driver."""

    def __init__(self, directory: str, server_id: str, driver_dir: str, interval: float, *,
                 event_rate: float = DEFAULT_EVENT_RATE, max_files: int = DEFAULT_MAX_FILES,
                 max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
                 extra_counters: Callable[[], dict[str, int]] | None = None,
                 queue_capacity: int = DEFAULT_QUEUE_CAPACITY,
                 mirror: Callable[[bytes], object] | None = None) -> None:
        self._writer = EventWriter(directory, source="server", server_id=server_id, max_files=max_files,
                                   max_bytes=max(1, max_total_bytes // max_files), max_total_bytes=max_total_bytes,
                                   mirror=mirror)
        self._stat = DriverStat(driver_dir)  # read on the writer thread only (snapshot jobs)
        self._queue = EventQueue(self._writer, queue_capacity)
        self._interval = interval
        self._event_rate = event_rate
        self._budgets: dict[str, _Budget] = {}
        self.dropped_events = 0
        self._extra = extra_counters
        self._next_snapshot = time.monotonic() + interval
        self._loss_seen: dict[tuple[Any, ...], tuple[int, int]] = {}
        self._errors_since_ms = 0

    def record(self, actions: Iterable[Action], source_port: Callable[[int | None], int]) -> None:
        actions = list(actions)
        now = time.monotonic()
        causes: set[Any] | None = None
        for action in actions:
            if not isinstance(action, Event):
                continue
            if action.kind in _ONE_TO_ONE and not self._budget(action.kind, now).available(now):
                self.dropped_events += 1  # over its rate: not even translated (a flood's HELLOs)
                continue
            if causes is None:
                causes = {a.fields.get("cause") for a in actions if isinstance(a, Event) and a.kind == "reject"}
            for kind, fields in self._translate(action, causes, source_port):
                self._emit(kind, fields)

    @staticmethod
    def _translate(event: Event, causes: set[Any], source_port: Callable[[int | None], int]
                   ) -> list[tuple[str, dict[str, Any]]]:
        f = event.fields
        if event.kind == "hello":
            return [("hello", {"initial_session": f["session_id"], "ip": f["ip"],
                               "port": source_port(f.get("image_id")),
                               "key_valid": not causes.intersection(_BAD_HELLO_CAUSES)})]
        if event.kind == "reject":
            if f.get("reason") is None:  # an image rejection, not an ERROR answer
                return []
            out = [("reject", {"initial_session": f["session_id"], "ip": f["ip"],
                               "reason": WIRE_REASONS[f["reason"]]})]
            if f.get("cause") in _BAD_HELLO_CAUSES:
                out.insert(0, ("bad_message", {"session": f["session_id"], "ip": f["ip"], "where": "initial"}))
            return out
        if event.kind == "blocklist_hit":
            return [("blocklist_hit", {"ip": f["ip"], "rule": str(f.get("detail"))})]
        if event.kind == "duologue_created":
            return [("duologue_created", {"session": f["session_id"], "owner_ip": f["ip"],
                                          "data_port": f["data_port"], "control_port": f["control_port"],
                                          "secure": bool(f.get("secure", False))})]
        if event.kind == "client_connected":
            return [("client_connected", {"session": f["session_id"], "ip": f["ip"], "wrong_ip": f["wrong_ip"]})]
        if event.kind == "bad_message":
            return [("bad_message", {"session": f["session_id"], "ip": f["ip"], "where": "duologue"})]
        if event.kind == "duologue_closed":
            keys = ("lifetime_s", "msgs_in", "msgs_out", "bytes_in", "bytes_out")
            return [("duologue_closed", {"session": f["session_id"], "owner_ip": f["ip"],
                                         "reason": f["reason"], **{k: f[k] for k in keys}})]
        logger.debug("no telemetry mapping for core event %s", event.kind)
        return []

    def blocklist_reload(self, change: BlocklistChange, *, active: int, duologues_closed: int) -> None:
        """A ``blocklist_reload`` event: a new blocklist version is in force."""
        counters = {"version": change.version, "entries": len(change.blocklist), "active": active,
                    "added": change.added, "removed": change.removed, "duologues_closed": duologues_closed}
        self._emit("blocklist_reload", {"counters": counters,
                                        "reason": "requested" if change.requested else "file_changed"})

    @property
    def dropped(self) -> int:
        """Events not written: over the rate budget, queue full, or refused by the schema."""
        return self.dropped_events + self._queue.dropped + self._queue.refused

    def _emit(self, kind: str, fields: dict[str, Any]) -> None:
        """Rate-limit (not ``driver_snapshot``) and queue for the writer thread."""
        now = time.monotonic()
        if not self._budget(kind, now).take(now):
            self.dropped_events += 1
            return
        self._queue.put(kind, fields)

    def _budget(self, kind: str, now: float) -> _Budget:
        budget = self._budgets.get(kind)
        if budget is None:
            budget = self._budgets[kind] = _Budget(self._event_rate, now)
        return budget

    def snapshot_if_due(self, now: float, force: bool = False) -> None:
        """Queue a ``driver_snapshot`` when due: the glue's counters now, the driver's on the thread."""
        if not force and now < self._next_snapshot:
            return
        self._next_snapshot = now + self._interval
        extra: dict[str, int] = {}
        if self._extra is not None:
            try:
                extra = self._extra()
            except Exception:  # noqa: BLE001 - a counter source must never stop the snapshot
                logger.exception("telemetry: extra counters failed")
        ts = time.time()
        self._queue.put_job(lambda: [("driver_snapshot", self._snapshot_fields(ts, extra))])

    def _snapshot_fields(self, ts: float, extra: dict[str, int]) -> dict[str, Any]:
        """(writer thread) The driver's counters, new loss and errors, and every drop count."""
        counters = {}
        for label, value in self._stat.system_counters().items():
            name = label.split(":", 1)[0]  # "Errors: version=..." -> "Errors"
            if name in SNAPSHOT_COUNTERS:
                counters[name] = value
        counters.update({"dropped events": self.dropped,
                         "deleted telemetry files": self._writer.deleted_files,
                         "deleted telemetry bytes": self._writer.deleted_bytes, **extra})
        return {"ts": ts, "counters": counters, "new_loss": self._new_loss(), "new_errors": self._new_errors()}

    def _new_loss(self) -> list[dict[str, Any]]:
        fresh = []
        for e in self._stat.loss_report():
            key = (e.session_id, e.stream_id, e.channel, e.source)
            state = (e.observation_count, e.total_bytes_lost)
            if self._loss_seen.get(key) == state:
                continue
            self._loss_seen[key] = state
            fresh.append({"observation_count": e.observation_count, "total_bytes_lost": e.total_bytes_lost,
                          "first_observation_ts": e.first_observation_ms / 1000.0,
                          "last_observation_ts": e.last_observation_ms / 1000.0,
                          "session_id": e.session_id, "stream_id": e.stream_id,
                          "channel": e.channel, "source": e.source})
        return fresh

    def _new_errors(self) -> list[dict[str, Any]]:
        entries = self._stat.errors(self._errors_since_ms)
        if entries:
            self._errors_since_ms = max(e.last_observation_ms for e in entries) + 1
        return [{"observation_count": e.observation_count, "first_observation_ts": e.first_observation_ms / 1000.0,
                 "last_observation_ts": e.last_observation_ms / 1000.0, "message": e.message} for e in entries]

    def close(self, timeout: float = 5.0) -> None:
        """A last snapshot, then the writer thread writes what is queued (bounded) and stops.

        The driver's counters are unmapped on the writer thread, after its last read
        (left mapped if the thread cannot finish in time: never pulled from under it)."""
        self.snapshot_if_due(time.monotonic(), force=True)
        self._queue.close(timeout, final=self._stat.close)
