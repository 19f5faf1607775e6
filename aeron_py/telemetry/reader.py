"""Tolerant reader of telemetry JSON Lines directories.

``read_events(directory)`` yields every event of every ``*.jsonl`` file in the
directory (not recursive), files in name order, lines in file order. Hidden names
(``.`` or ``_`` first, as Spark's file sources skip them) and the writer's temporary
files (``.<name>.jsonl.tmp``: not complete yet) are never read. Nothing in the input is
fatal:

* the LAST line of a file that is not newline-terminated and does not parse is a torn
  write (a crash mid-line): counted in ``ReadStats.torn_last_lines`` and skipped;
  a last line without newline that does parse is a normal event;
* any other line that is not UTF-8, not JSON, not a JSON object, or lacks a string
  ``kind`` or a numeric ``ts`` (blank lines included) is counted in
  ``ReadStats.malformed_lines`` and skipped, with a DEBUG log naming file and line.

Events are not checked against the per-kind schema: readers must accept fields and
kinds they do not know.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aeron_py.telemetry.writer import is_temporary

__all__ = ["ReadStats", "read_events", "event_files"]

log = logging.getLogger(__name__)


@dataclass
class ReadStats:
    """Counters filled in while :func:`read_events` is consumed."""

    files: int = 0
    lines: int = 0
    events: int = 0
    torn_last_lines: int = 0
    malformed_lines: int = 0


def event_files(directory: str | Path) -> list[Path]:
    """The published ``*.jsonl`` files of ``directory`` in name order (hidden names skipped).

    Raises ``FileNotFoundError`` / ``NotADirectoryError`` naming the path.
    """
    path = Path(directory)
    if not path.exists():
        raise FileNotFoundError(f"telemetry directory not found: {path}")
    if not path.is_dir():
        raise NotADirectoryError(f"telemetry path is not a directory: {path}")
    return sorted(p for p in path.glob("*.jsonl") if p.is_file() and not is_temporary(p))


def _parse(raw: bytes) -> dict[str, Any] | None:
    """The event in one line, or None when the line is not an event."""
    try:
        value = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(value, dict):
        return None
    ts = value.get("ts")
    if not isinstance(value.get("kind"), str) or isinstance(ts, bool):
        return None
    if not isinstance(ts, (int, float)):
        return None
    return value


def read_events(
    directory: str | Path, stats: ReadStats | None = None
) -> Iterator[dict[str, Any]]:
    """Yield the events in ``directory``; count what was read into ``stats``."""
    counts = stats if stats is not None else ReadStats()
    for file in event_files(directory):
        counts.files += 1
        with open(file, "rb") as handle:
            line_no = 0
            for raw in handle:
                line_no += 1
                counts.lines += 1
                event = _parse(raw)
                if event is not None:
                    counts.events += 1
                    yield event
                elif not raw.endswith(b"\n"):
                    # Only the last line of a file can lack its newline.
                    counts.torn_last_lines += 1
                    log.debug("%s:%d: torn last line skipped", file, line_no)
                else:
                    counts.malformed_lines += 1
                    log.debug("%s:%d: malformed line skipped", file, line_no)
