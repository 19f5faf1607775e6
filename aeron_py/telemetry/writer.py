"""Append-only JSON Lines writer for telemetry events that publishes only complete files.

A file is written under a hidden temporary name, ``.<name>.tmp``, and renamed to its
public name ``<prefix>-<start-ts>-<n>.jsonl`` once it is complete: on rotation and on
:meth:`EventWriter.close`. ``<start-ts>`` is the writer's start time in epoch
milliseconds and ``<n>`` a zero-padded rotation counter, so a plain name sort gives the
order one writer wrote them in. Readers (:mod:`aeron_py.telemetry.reader`, Spark's file
source with ``pathGlobFilter=*.jsonl``) never list the temporary names: Spark hides
names starting with ``.`` or ``_`` and neither matches ``*.jsonl``. A public file
therefore never grows and never ends in a partial line.

Rotation: by size (``max_bytes``) and by time: a file holding data is published at the
latest ``rotate_seconds`` (default 2 s) after its first line, by a small background
thread that sleeps while there is nothing to publish. An empty file is never published
(closing deletes it).

Crashes: the writer holds an exclusive ``flock`` on its temporary file. A new writer in
the same directory publishes *orphaned* temporary files (no lock held: their writer
died) after cutting off a torn last line, so a crash loses at most that line.

Mirror: ``mirror(line)`` is called with every line written (its UTF-8 bytes, newline
included), after the file has it: e.g. to publish the events on an Aeron stream as well
(:mod:`aeron_py.duologue.server.telemetry_recording`). It must not block.

Retention: with ``max_files`` and/or ``max_total_bytes`` the writer deletes its own
oldest published files when it starts a new file. The byte cap is strict: one writer
never holds (beyond the current file's last line) more than ``max_total_bytes`` bytes,
which is what keeps a flood from filling a disk. The file cap deletes only files
published at least ``count_cap_min_age`` seconds ago (default 120 s), so time rotation
never deletes data a reader (the streaming job, a batch job) has just listed: one writer
holds at most ``max_files`` files plus those published in the last ``count_cap_min_age``
seconds (at most one per ``rotate_seconds``); :attr:`EventWriter.deleted_files` and
:attr:`EventWriter.deleted_bytes` count what retention threw away.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from pathlib import Path
from types import TracebackType
from collections.abc import Callable
from typing import IO, Any

from aeron_py.telemetry.events import make_event

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_ROTATE_SECONDS",
    "EventWriter",
    "EventWriterError",
    "TEMP_SUFFIX",
    "is_temporary",
    "publish_orphans",
]

log = logging.getLogger(__name__)

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_ROTATE_SECONDS = 2.0
#: ``max_files`` deletes only files published at least this long ago (seconds).
DEFAULT_COUNT_CAP_MIN_AGE = 120.0
TEMP_SUFFIX = ".tmp"
_MAX_NAME_ATTEMPTS = 10_000


class EventWriterError(OSError):
    """The telemetry directory or file cannot be written."""


def is_temporary(path: Path) -> bool:
    """True for a name readers must skip: hidden (``.`` / ``_``) or a temporary file."""
    return path.name.startswith((".", "_")) or path.name.endswith(TEMP_SUFFIX)


def _temp_name(public: str) -> str:
    return f".{public}{TEMP_SUFFIX}"


def _public_name(temp: str) -> str | None:
    if temp.startswith(".") and temp.endswith(".jsonl" + TEMP_SUFFIX):
        return temp[1 : -len(TEMP_SUFFIX)]
    return None


def _try_lock(handle: IO[bytes]) -> bool:
    """Take an exclusive, non-blocking lock on ``handle``; False if someone holds it."""
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def publish_orphans(directory: str | Path) -> list[Path]:
    """Publish the temporary files of dead writers in ``directory``; return the new names.

    A temporary file is orphaned when no writer holds its lock. Its torn last line
    (no newline) is cut off; an empty orphan is left alone (it may be a writer's new
    file that is not locked yet). A public name that already
    exists is never overwritten (the orphan is then left alone and logged).
    """
    published: list[Path] = []
    for temp in sorted(Path(directory).glob(".*.jsonl" + TEMP_SUFFIX)):
        public = _public_name(temp.name)
        if public is None:
            continue
        try:
            with open(temp, "r+b") as handle:
                if not _try_lock(handle):
                    continue  # a live writer owns it
                data = handle.read()
                if not data:
                    continue  # maybe a writer between creating and locking it: leave it
                keep = data.rfind(b"\n") + 1
                if keep < len(data):
                    handle.truncate(keep)
                    log.warning("telemetry: %s: cut a torn last line (%d bytes)", temp, len(data) - keep)
                target = temp.with_name(public)
                if keep == 0:
                    log.warning("telemetry: orphan %s holds no complete line", temp)
                elif target.exists():
                    log.warning("telemetry: orphan %s not published: %s exists", temp, target)
                else:
                    os.rename(temp, target)  # still locked: no one else can take it
                    published.append(target)
                    log.info("telemetry: published orphaned file %s", target)
        except FileNotFoundError:
            continue  # published or deleted by someone else meanwhile
        except OSError as exc:
            log.warning("telemetry: cannot recover %s: %s", temp, exc.strerror or exc)
    return published


class EventWriter:
    """Thread-safe writer of validated events into ``directory``.

    ``emit(kind, **fields)`` validates with :func:`make_event`, fills in ``source`` and
    ``server_id`` and appends one line. A single event larger than ``max_bytes`` is
    still written, alone in its file. ``rotate_seconds=None`` turns time rotation off
    (files are then published only when full and on :meth:`close`).
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
        rotate_seconds: float | None = DEFAULT_ROTATE_SECONDS,
        count_cap_min_age: float = DEFAULT_COUNT_CAP_MIN_AGE,
        mirror: Callable[[bytes], object] | None = None,
    ) -> None:
        if max_bytes < 1:
            raise ValueError(f"max_bytes must be positive, got {max_bytes}")
        if max_files is not None and max_files < 1:
            raise ValueError(f"max_files must be None or >= 1, got {max_files}")
        if max_total_bytes is not None and max_total_bytes < 1:
            raise ValueError(f"max_total_bytes must be None or positive, got {max_total_bytes}")
        if rotate_seconds is not None and not rotate_seconds > 0:
            raise ValueError(f"rotate_seconds must be None or positive, got {rotate_seconds}")
        if max_total_bytes is not None:
            max_bytes = min(max_bytes, max_total_bytes)
        if not prefix or "/" in prefix or prefix.startswith((".", "_")):
            raise ValueError(f"prefix must be a plain file-name part, got {prefix!r}")
        self._dir = Path(directory)
        self._source = source
        self._server_id = server_id
        self._max_bytes = max_bytes
        self._prefix = prefix
        self._flush = flush_each_event
        self._rotate_s = rotate_seconds
        self._mirror = mirror
        self._start_ms = int(time.time() * 1000)
        self._lock = threading.Condition(threading.Lock())
        self._file: IO[bytes] | None = None
        self._temp: Path | None = None  # the temporary name of _file
        self._public: Path | None = None  # the name _file gets when published
        self._opened_at = 0.0  # monotonic time of the current file's first line
        self._size = 0
        self._next_n = 0
        self._closed = False
        self._files: list[Path] = []  # published files kept by retention, oldest first
        self._sizes: list[int] = []
        self._published_at: list[float] = []  # monotonic publish time of each of _files
        self._count_cap_min_age = count_cap_min_age
        self._max_files = max_files
        self._max_total = max_total_bytes
        self.deleted_files = 0
        self.deleted_bytes = 0
        self.published_files = 0
        try:
            self._dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise EventWriterError(
                f"cannot create telemetry directory {self._dir}: {exc.strerror or exc}"
            ) from exc
        if not os.access(self._dir, os.W_OK | os.X_OK):
            raise EventWriterError(f"cannot write into telemetry directory {self._dir}: permission denied")
        publish_orphans(self._dir)
        self._publisher: threading.Thread | None = None
        if rotate_seconds is not None:
            self._publisher = threading.Thread(
                target=self._publish_when_due, name=f"telemetry-publisher-{prefix}", daemon=True
            )
            self._publisher.start()

    @property
    def directory(self) -> Path:
        """The directory events are written to."""
        return self._dir

    @property
    def files(self) -> list[Path]:
        """The published files of this writer that retention has kept, oldest first."""
        with self._lock:
            return list(self._files)

    @property
    def current_file(self) -> Path | None:
        """The temporary file being written (hidden from readers), or None."""
        with self._lock:
            return self._temp

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
            if self._file is not None and self._size + len(line) > self._max_bytes:
                self._publish_current()
            if self._file is None:
                self._open_next(len(line))
                self._lock.notify_all()  # the publisher starts timing this file
            assert self._file is not None
            try:
                self._file.write(line)
                if self._flush:
                    self._file.flush()
            except OSError as exc:
                raise EventWriterError(
                    f"cannot write telemetry file {self._temp}: {exc.strerror or exc}"
                ) from exc
            self._size += len(line)
        if self._mirror is not None:
            self._mirror(line)  # after the file has it; outside the lock

    def flush(self) -> None:
        """Flush buffered lines to the temporary file (only needed with ``flush_each_event=False``).

        Flushing does not make lines visible to readers: :meth:`publish` does.
        """
        with self._lock:
            if self._file is not None:
                self._file.flush()

    def publish(self) -> Path | None:
        """Publish the current file now if it holds data; return its public name."""
        with self._lock:
            return self._publish_current()

    def close(self) -> None:
        """Publish the current file (an empty one is deleted); later calls do nothing."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._lock.notify_all()
            try:
                self._publish_current()
            finally:
                self._discard_current()
        if self._publisher is not None and self._publisher is not threading.current_thread():
            self._publisher.join(timeout=5)

    def __enter__(self) -> "EventWriter":
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- internals (called with the lock held) -------------------------------------------

    def _publish_when_due(self) -> None:
        """Background thread: publish the current file ``rotate_seconds`` after its first line."""
        assert self._rotate_s is not None
        with self._lock:
            while not self._closed:
                if self._file is None or self._size == 0:
                    self._lock.wait()
                    continue
                left = self._opened_at + self._rotate_s - time.monotonic()
                if left > 0:
                    self._lock.wait(left)
                    continue
                try:
                    self._publish_current()
                except EventWriterError as exc:
                    log.error("telemetry: %s", exc)
                    self._discard_current()

    def _publish_current(self) -> Path | None:
        """Close the current file and rename it to its public name (if it holds data)."""
        if self._file is None or self._size == 0:
            return None
        assert self._temp is not None and self._public is not None
        temp, public, size = self._temp, self._public, self._size
        handle = self._file
        self._file, self._temp, self._public, self._size = None, None, None, 0
        try:
            handle.flush()
            os.rename(temp, public)  # still locked: no orphan scan can take it meanwhile
        except OSError as exc:
            raise EventWriterError(f"cannot publish telemetry file {temp}: {exc.strerror or exc}") from exc
        finally:
            handle.close()
        self._files.append(public)
        self._sizes.append(size)
        self._published_at.append(time.monotonic())
        self.published_files += 1
        log.debug("telemetry file %s published (%d bytes)", public, size)
        return public

    def _discard_current(self) -> None:
        """Close and delete an empty (or unpublishable) current file."""
        if self._file is not None:
            try:
                self._file.close()
            finally:
                self._file = None
        if self._temp is not None:
            try:
                self._temp.unlink()
            except OSError:
                pass
            self._temp, self._public, self._size = None, None, 0

    def _enforce_retention(self, incoming: int) -> None:
        """Delete this writer's oldest files beyond ``max_files`` / ``max_total_bytes``.

        Runs when a new file is started; the new file counts as one file of ``incoming`` bytes.
        """
        while self._files:
            too_many = (
                self._max_files is not None
                and len(self._files) + 1 > self._max_files
                and time.monotonic() - self._published_at[0] >= self._count_cap_min_age
            )
            too_big = self._max_total is not None and sum(self._sizes) + incoming > self._max_total
            if not (too_many or too_big):
                return
            path, size = self._files.pop(0), self._sizes.pop(0)
            self._published_at.pop(0)
            try:
                path.unlink()
            except FileNotFoundError:
                pass  # someone else cleaned up; it no longer counts either way
            except OSError as exc:
                log.warning("telemetry retention: cannot delete %s: %s", path, exc.strerror or exc)
            self.deleted_files += 1
            self.deleted_bytes += size

    def _open_next(self, incoming: int) -> None:
        """Create the next temporary file exclusively, locked; never reuse a public name."""
        self._enforce_retention(incoming)
        for _ in range(_MAX_NAME_ATTEMPTS):
            public = self._dir / f"{self._prefix}-{self._start_ms}-{self._next_n:06d}.jsonl"
            temp = public.with_name(_temp_name(public.name))
            self._next_n += 1
            try:
                handle = open(temp, "xb")  # noqa: SIM115 - closed when published
            except FileExistsError:
                continue
            except OSError as exc:
                raise EventWriterError(
                    f"cannot create telemetry file {temp}: {exc.strerror or exc}"
                ) from exc
            if public.exists() or not _try_lock(handle):
                handle.close()
                temp.unlink(missing_ok=True)
                continue
            self._file, self._temp, self._public = handle, temp, public
            self._size = 0
            self._opened_at = time.monotonic()
            log.debug("telemetry file %s opened", temp)
            return
        raise EventWriterError(
            f"cannot find a free file name for prefix {self._prefix!r} in {self._dir}"
        )
