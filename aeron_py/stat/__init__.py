"""Introspection of a running media driver through its CnC file (``aeron_cnc_*``).

What Aeron's AeronStat, LossStat and ErrorStat tools show, as Python objects::

    with DriverStat("/dev/shm/aeron-me") as stat:
        stat.system_counters()["Bytes sent"]
        stat.loss_report(); stat.errors(); stat.heartbeat_age()
        stat.backlog()   # per stream, like BacklogStat (aeron_py.stat.backlog)

Command line (:mod:`aeron_py.stat.__main__`):
``python -m aeron_py.stat --dir DIR [--watch SECONDS] [--json] [--backlog]``.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from typing import Any

from .. import _aeron
from .backlog import StreamBacklog, backlog_from_rows

#: Counter type id of the driver's system counters (bytes sent, NAKs, errors, ...).
SYSTEM_COUNTER_TYPE_ID = 0

#: ``aeron_cnc_constants_t`` fields (as the extension returns them) renamed to carry their unit.
_CONSTANT_NAMES = {
    "client_liveness_timeout": "client_liveness_timeout_ns",
    "start_timestamp": "start_timestamp_ms",
}


@dataclass(frozen=True)
class Counter:
    """One allocated counter (AeronStat row)."""

    id: int
    type_id: int
    label: str
    value: int


@dataclass(frozen=True)
class LossEntry:
    """One loss report entry (LossStat row). Timestamps are epoch milliseconds."""

    observation_count: int
    total_bytes_lost: int
    first_observation_ms: int
    last_observation_ms: int
    session_id: int
    stream_id: int
    channel: str
    source: str


@dataclass(frozen=True)
class ErrorEntry:
    """One distinct error in the driver's error log (ErrorStat row)."""

    observation_count: int
    first_observation_ms: int
    last_observation_ms: int
    message: str


def counters_from(reader: _aeron.CountersReader) -> list[Counter]:
    """Every allocated counter of an ``_aeron.CountersReader``."""
    return [Counter(id, type_id, label, value) for id, type_id, label, value, _key in reader.counters()]


class DriverStat:
    """A read-only view of a driver's CnC file; waits up to ``timeout`` s for it to appear."""

    def __init__(self, dir: str | os.PathLike[str], *, timeout: float = 1.0) -> None:
        self.dir = str(dir)
        if not os.path.isdir(self.dir):
            raise FileNotFoundError(f"no Aeron driver directory at {self.dir!r}")
        try:
            self._cnc = _aeron.Cnc(self.dir, int(timeout * 1000))
        except _aeron.AeronError as exc:
            raise type(exc)(f"cannot read the CnC file in {self.dir!r}: {exc}") from None

    def constants(self) -> dict[str, int]:
        """CnC header: version, buffer lengths, driver pid, start timestamp (``aeron_cnc_constants``).

        Keys are the C struct's field names, with the unit appended where it has one
        (``client_liveness_timeout_ns``, ``start_timestamp_ms``).
        """
        return {_CONSTANT_NAMES.get(key, key): value for key, value in self._cnc.constants().items()}

    def counters(self) -> list[Counter]:
        """Every allocated counter with its current value."""
        return counters_from(self._cnc.counters_reader())

    def counters_reader(self) -> _aeron.CountersReader:
        """The raw ``_aeron.CountersReader`` (``aeron_cnc_counters_reader``): ``value(id)``,
        ``label(id)``, ``type_id(id)``... raise IndexError outside ``0..max_counter_id``."""
        return self._cnc.counters_reader()

    def counter_value(self, counter_id: int) -> int:
        """The current value of one counter; IndexError when ``counter_id`` is out of range."""
        return int(self._cnc.counters_reader().value(counter_id))

    def system_counters(self) -> dict[str, int]:
        """The driver's system counters by label ("Bytes sent", "NAKs received", "Errors", ...)."""
        return {c.label: c.value for c in self.counters() if c.type_id == SYSTEM_COUNTER_TYPE_ID}

    def loss_report(self) -> list[LossEntry]:
        """Loss observations per stream (``aeron_cnc_loss_reporter_read``)."""
        return [LossEntry(*row) for row in self._cnc.loss_report()]

    def errors(self, since_ms: int = 0) -> list[ErrorEntry]:
        """Distinct errors observed since ``since_ms`` epoch ms (``aeron_cnc_error_log_read``)."""
        return [ErrorEntry(*row) for row in self._cnc.error_log(since_ms)]

    def backlog(self) -> list[StreamBacklog]:
        """Per stream: publisher, sender, receiver and subscriber positions and what each has
        still to do (:mod:`aeron_py.stat.backlog`, like Aeron's BacklogStat)."""
        return backlog_from_rows(self._cnc.counters_reader().counters())

    def heartbeat_age(self) -> float:
        """Seconds since the driver last heartbeated (``aeron_cnc_to_driver_heartbeat``)."""
        return max(0.0, (_aeron.epoch_clock() - self._cnc.to_driver_heartbeat()) / 1000.0)

    def close(self) -> None:
        """``aeron_cnc_close``. Idempotent."""
        self._cnc.close()

    def __enter__(self) -> "DriverStat":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def snapshot(stat: DriverStat) -> dict[str, Any]:
    """Everything AeronStat/LossStat/ErrorStat print, as one JSON-ready dict."""
    constants = stat.constants()
    return {
        "dir": stat.dir,
        "pid": constants["pid"],
        "heartbeat_age_s": round(stat.heartbeat_age(), 3),
        "counters": [asdict(c) for c in stat.counters()],
        "loss": [asdict(e) for e in stat.loss_report()],
        "errors": [asdict(e) for e in stat.errors()],
        "backlog": [b.as_dict() for b in stat.backlog()],
    }
