"""Append-only, size-rotated JSON Lines writer for telemetry events.

Files are named ``<prefix>-<start-ts>-<n>.jsonl`` where ``<start-ts>`` is the writer's
start time in epoch milliseconds and ``<n>`` a zero-padded rotation counter, so a
plain name sort gives the order one writer wrote them in. Every event is one line,
written and flushed whole (unless ``flush_each_event=False``); a crash can therefore
tear at most the last line of the last file, which :mod:`aeron_py.telemetry.reader`
tolerates.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from aeron_py.telemetry.events import make_event

__all__ = ["EventWriter", "EventWriterError", "DEFAULT_MAX_BYTES"]

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
_MAX_NAME_ATTEMPTS = 10_000


class EventWriterError(OSError):
    """The telemetry directory or file cannot be written."""


class EventWriter:
    """Thread-safe writer of validated events into ``directory``.

    ``emit(kind, **fields)`` validates with :func:`make_event`, fills in ``source`` and
    ``server_id`` and appends one line. A single event larger than ``max_bytes`` is
    still written, alone in its file.
    """

    def __init__(
        self,
        directory: str | Path,
        *,
        source: str,
        server_id: str,
        max_bytes: int = DEFAULT_MAX_BYTES,
        prefix: str = "events",
        flush_each_event: bool = True,
    ) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, got {max_bytes}")
        if not prefix or "/" in prefix or prefix.startswith("."):
            raise ValueError(f"prefix must be a plain file-name part, got {prefix!r}")
        self._dir = Path(directory)
        self._source = source
        self._server_id = server_id
        self._max_bytes = max_bytes
        self._prefix = prefix
        self._flush = flush_each_event
        self._start_ms = int(time.time() * 1000)
        self._lock = threading.Lock()
        self._file: IO[bytes] | None = None
        self._size = 0
        self._next_n = 0
        self._closed = False
        self._files: list[Path] = []
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EventWriterError(
                f"cannot create telemetry directory {self._dir}: {exc.strerror or exc}"
            ) from exc
        self._open_next()

    @property
    def directory(self) -> Path:
        """The directory events are written to."""
        return self._dir

    @property
    def files(self) -> list[Path]:
        """Every file this writer has created, oldest first."""
        with self._lock:
            return list(self._files)

    def emit(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Validate, write and (by default) flush one event; return the event written."""
        event = make_event(kind, source=self._source, server_id=self._server_id, **fields)
        self.write_event(event)
        return event

    def write_event(self, event: dict[str, Any]) -> None:
        """Append an already-built event (from :func:`make_event`) as one line."""
        line = (
            json.dumps(event, separators=(",", ":"), ensure_ascii=False, allow_nan=False) + "\n"
        ).encode("utf-8")
        with self._lock:
            if self._closed:
                raise ValueError(f"EventWriter for {self._dir} is closed")
            if self._size > 0 and self._size + len(line) > self._max_bytes:
                self._close_file()
                self._open_next()
            assert self._file is not None
            try:
                self._file.write(line)
                if self._flush:
                    self._file.flush()
            except OSError as exc:
                raise EventWriterError(
                    f"cannot write telemetry file {self._files[-1]}: {exc.strerror or exc}"
                ) from exc
            self._size += len(line)

    def flush(self) -> None:
        """Flush buffered lines (only needed with ``flush_each_event=False``)."""
        with self._lock:
            if self._file is not None:
                self._file.flush()

    def close(self) -> None:
        """Flush and close the current file; later calls do nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._close_file()

    def __enter__(self) -> "EventWriter":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _close_file(self) -> None:
        if self._file is not None:
            try:
                self._file.close()
            finally:
                self._file = None

    def _open_next(self) -> None:
        """Create the next file exclusively (never append to someone else's file)."""
        for _ in range(_MAX_NAME_ATTEMPTS):
            path = self._dir / f"{self._prefix}-{self._start_ms}-{self._next_n:06d}.jsonl"
            self._next_n += 1
            try:
                self._file = open(path, "xb")  # noqa: SIM115 - closed in _close_file
            except FileExistsError:
                continue
            except OSError as exc:
                raise EventWriterError(
                    f"cannot create telemetry file {path}: {exc.strerror or exc}"
                ) from exc
            self._size = 0
            self._files.append(path)
            log.debug("telemetry file %s opened", path)
            return
        raise EventWriterError(
            f"cannot find a free file name for prefix {self._prefix!r} in {self._dir}"
        )
