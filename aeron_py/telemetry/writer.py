"""Append-only, size-rotated JSON Lines writer for telemetry events.

Files are named ``<prefix>-<start-ts>-<n>.jsonl`` where ``<start-ts>`` is the writer's
start time in epoch milliseconds and ``<n>`` a zero-padded rotation counter, so a
plain name sort gives the order one writer wrote them in. Every event is one line,
written and flushed whole (unless ``flush_each_event=False``); a crash can therefore
tear at most the last line of the last file, which :mod:`aeron_py.telemetry.reader`
tolerates.

Retention: with ``max_files`` and/or ``max_total_bytes`` the writer deletes its own
oldest files when it rotates, so one writer never holds more than ``max_files``
files nor (beyond the current file's last line) ``max_total_bytes`` bytes;
:attr:`EventWriter.deleted_files` and :attr:`EventWriter.deleted_bytes` count what
retention threw away.
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
        max_files: int | None = None,
        max_total_bytes: int | None = None,
    ) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, got {max_bytes}")
        if max_files is not None and max_files < 1:
            raise ValueError(f"max_files must be None or >= 1, got {max_files}")
        if max_total_bytes is not None and max_total_bytes < 1:
            raise ValueError(f"max_total_bytes must be None or positive, got {max_total_bytes}")
        if max_total_bytes is not None:
            max_bytes = min(max_bytes, max_total_bytes)
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
        self._sizes: list[int] = []  # bytes written to each file in _files
        self._max_files = max_files
        self._max_total = max_total_bytes
        self.deleted_files = 0
        self.deleted_bytes = 0
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
        """The files this writer created and retention has kept, oldest first."""
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
                self._enforce_retention(len(line))
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
            self._sizes[-1] = self._size

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

    def _enforce_retention(self, incoming: int) -> None:
        """Delete this writer's oldest closed files beyond ``max_files`` / ``max_total_bytes``."""
        while len(self._files) > 1:
            too_many = self._max_files is not None and len(self._files) > self._max_files
            too_big = self._max_total is not None and sum(self._sizes) + incoming > self._max_total
            if not (too_many or too_big):
                return
            path, size = self._files.pop(0), self._sizes.pop(0)
            try:
                path.unlink()
            except FileNotFoundError:
                pass  # someone else cleaned up; it no longer counts either way
            except OSError as exc:
                log.warning("telemetry retention: cannot delete %s: %s", path, exc.strerror or exc)
            self.deleted_files += 1
            self.deleted_bytes += size

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
            self._sizes.append(0)
            log.debug("telemetry file %s opened", path)
            return
        raise EventWriterError(
            f"cannot find a free file name for prefix {self._prefix!r} in {self._dir}"
        )
