"""EventQueue: telemetry leaves the loop thread; a stalled disk drops and counts, never blocks."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from aeron_py.duologue.server.event_queue import EventQueue
from aeron_py.telemetry import EventWriter
from aeron_py.telemetry.reader import read_events

pytestmark = pytest.mark.timeout(20)


class StalledWriter(EventWriter):
    """A real writer whose disk stalls until ``go`` is set (records the writing thread)."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory, source="server", server_id="t")
        self.go = threading.Event()
        self.threads: set[str] = set()

    def emit(self, kind: str, **fields: Any) -> dict[str, Any]:
        self.threads.add(threading.current_thread().name)
        assert self.go.wait(10), "test never released the writer"
        return super().emit(kind, **fields)


def test_full_queue_drops_and_counts_without_blocking_then_everything_queued_is_written(tmp_path: Path) -> None:
    writer = StalledWriter(tmp_path)
    q = EventQueue(writer, capacity=4)
    accepted = [q.put("blocklist_hit", {"ip": "10.0.0.1", "rule": f"10.0.0.{i}"}) for i in range(20)]
    # the writer thread may hold one taken event while stalled: 4 or 5 accepted, the rest dropped
    assert sum(accepted) in (4, 5) and q.dropped == 20 - sum(accepted)
    writer.go.set()
    q.close(timeout=10)
    events = list(read_events(tmp_path))
    assert len(events) == sum(accepted) and writer.threads == {"echo-telemetry"}
    assert [e["rule"] for e in events] == [f"10.0.0.{i}" for i in range(len(events))]


def test_refused_events_and_failing_jobs_are_counted_and_the_thread_goes_on(tmp_path: Path) -> None:
    q = EventQueue(EventWriter(tmp_path, source="server", server_id="t"))
    ran: list[str] = []

    def boom() -> list[tuple[str, dict[str, Any]]]:
        raise RuntimeError("job failed")

    assert q.put("duologue_closed", {"session": 1})  # missing fields: refused by the schema
    assert q.put_job(boom)
    assert q.put_job(lambda: [("blocklist_hit", {"ip": "10.0.0.2", "rule": "10.0.0.2"})])
    q.close(timeout=10, final=lambda: ran.append(threading.current_thread().name))
    assert q.refused == 1 and ran == ["echo-telemetry"]
    assert [e["kind"] for e in read_events(tmp_path)] == ["blocklist_hit"]
    with pytest.raises(ValueError, match="capacity"):
        EventQueue(EventWriter(tmp_path / "x", source="server", server_id="t"), capacity=0)
