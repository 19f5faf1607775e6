"""Telemetry written off the loop thread: a bounded queue and one writer thread.

The server loop never waits for a disk.  :meth:`EventQueue.put` hands an event (kind,
fields, wall-clock ``ts`` taken at the call) to a bounded queue without blocking; a
full queue drops the event and counts it (:attr:`EventQueue.dropped`).  The thread
``echo-telemetry`` writes each event through :class:`~aeron_py.telemetry.EventWriter`
(``emit``), so validation, rotation and retention stay the writer's; an event the
schema refuses is counted in :attr:`EventQueue.refused` and logged.  A *job* (a
callable, e.g. reading the driver's counters for a snapshot) runs on the thread too
and returns the events to write.

:meth:`EventQueue.close` lets the thread write what is queued, bounded by a timeout,
then closes the writer on the thread that used it.
"""
from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from ...telemetry import EventError, EventWriter

__all__ = ["DEFAULT_QUEUE_CAPACITY", "EventQueue", "Job"]

logger = logging.getLogger(__name__)

DEFAULT_QUEUE_CAPACITY = 8192
#: Work for the writer thread: returns (kind, fields) events to write.
Job = Callable[[], list[tuple[str, dict[str, Any]]]]
_Item = tuple[str, dict[str, Any]] | Job | None  # None: stop


class EventQueue:
    """A bounded, never-blocking queue of telemetry events in front of an :class:`EventWriter`."""

    def __init__(self, writer: EventWriter, capacity: int = DEFAULT_QUEUE_CAPACITY) -> None:
        if capacity < 1:
            raise ValueError(f"EventQueue capacity must be >= 1, got {capacity}")
        self._writer = writer
        self._queue: queue.Queue[_Item] = queue.Queue(capacity)
        self.dropped = 0  # queue full (loop thread)
        self.refused = 0  # schema refusals and write errors (writer thread)
        self._thread = threading.Thread(target=self._run, name="echo-telemetry", daemon=True)
        self._thread.start()

    def put(self, kind: str, fields: dict[str, Any]) -> bool:
        """Queue one event (its ``ts`` is now); False (counted) when the queue is full."""
        return self._offer((kind, {"ts": time.time(), **fields}))

    def put_job(self, job: Job) -> bool:
        """Queue work for the writer thread; False (counted) when the queue is full."""
        return self._offer(job)

    def _offer(self, item: _Item) -> bool:
        try:
            self._queue.put_nowait(item)
        except queue.Full:
            self.dropped += 1
            return False
        return True

    @property
    def backlog(self) -> int:
        """Items waiting for the writer thread."""
        return self._queue.qsize()

    def _run(self) -> None:
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    return
                if callable(item):
                    try:
                        events = item()
                    except Exception:  # noqa: BLE001 - a job must never end the writer thread
                        logger.exception("telemetry: job failed")
                        continue
                else:
                    events = [item]
                for kind, fields in events:
                    self._write(kind, fields)
        finally:
            try:
                self._writer.close()
            except OSError as exc:
                logger.error("telemetry: closing the event writer failed: %s", exc)

    def _write(self, kind: str, fields: dict[str, Any]) -> None:
        try:
            self._writer.emit(kind, **fields)
        except EventError as exc:  # e.g. a value the schema does not list
            self.refused += 1
            logger.warning("telemetry: %s event not written: %s", kind, exc)
        except OSError as exc:
            self.refused += 1
            logger.error("telemetry: cannot write %s event: %s", kind, exc)

    def close(self, timeout: float = 5.0, final: Callable[[], object] | None = None) -> None:
        """Write what is queued (up to ``timeout`` seconds), run ``final`` on the thread,
        stop it, close the writer (on the thread)."""
        deadline = time.monotonic() + timeout
        items: list[_Item] = [None]
        if final is not None:
            def run_final() -> list[tuple[str, dict[str, Any]]]:
                final()
                return []
            items.insert(0, run_final)
        try:
            for item in items:
                self._queue.put(item, timeout=max(0.0, deadline - time.monotonic()))
        except queue.Full:
            logger.error("telemetry: %d events still queued after %.1f s; not waiting for them",
                         self._queue.qsize(), timeout)
            return
        self._thread.join(max(0.0, deadline - time.monotonic()))
        if self._thread.is_alive():
            logger.error("telemetry: the writer thread did not finish within %.1f s", timeout)
