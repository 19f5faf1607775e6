"""Child processes of a benchmark, and their cleanup (stdlib only).

Every wait here has a deadline and every child process is tracked so it can be stopped
(by its own pid) when the benchmark ends, fails or is interrupted.
"""
from __future__ import annotations

import atexit
import contextlib
import itertools
import logging
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .paths import BENCH_DIR, LOG_DIR

log = logging.getLogger("benchmarks.harness")

_stream_ids = itertools.count(7001)
_children: list["Child"] = []
_children_lock = threading.Lock()


class BenchError(RuntimeError):
    """A benchmark step failed (a process died, timed out or printed nothing usable)."""


def next_stream_id() -> int:
    """A stream id not used before in this run (lingering publications never collide)."""
    return next(_stream_ids)


def free_udp_ports(count: int) -> list[int]:
    """``count`` distinct UDP ports on 127.0.0.1 that were free a moment ago."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def wait_until(predicate: Callable[[], object], timeout_s: float, what: str, step_s: float = 0.001) -> object:
    """Poll ``predicate`` until it returns a truthy value; raise ``BenchError`` at the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise BenchError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(step_s)


def aeron_free_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """This process's environment without inherited ``AERON_*`` settings (the C driver
    context reads them), plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AERON_")}
    env.update(extra or {})
    return env


@dataclass
class Line:
    """One stdout line of a child and when (monotonic seconds) it arrived."""

    t: float
    text: str


def orphan_guard(argv: list[str]) -> list[str]:
    """Prefix ``argv`` so the child gets SIGTERM if this process dies without cleaning up
    (``setpriv --pdeathsig``; left as is where setpriv is unavailable)."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", *argv] if setpriv else argv


class Child:
    """A tracked child process whose stdout lines are collected, with arrival times, by a thread.

    stderr goes to ``log_path`` (default: a file under ``benchmarks/.build/logs``).  With
    ``stdin=True`` the child gets a pipe (:meth:`send`); closing it is the first way
    :meth:`stop` asks it to end.  Then SIGINT (all children here stop cleanly on it),
    then SIGKILL, each after a timeout.
    """

    def __init__(self, name: str, argv: list[str], env: dict[str, str], line_buffered: bool = False,
                 stdin: bool = False, log_path: Path | None = None) -> None:
        if line_buffered:  # C stdio buffers a pipe fully; stdbuf makes report lines arrive live
            stdbuf = shutil.which("stdbuf")
            if stdbuf is None:
                raise BenchError("stdbuf (coreutils) is needed to read C tool reports as they happen")
            argv = [stdbuf, "-oL", *argv]
        argv = orphan_guard(argv)
        self.name = name
        self.argv = argv
        if log_path is None:
            LOG_DIR.mkdir(parents=True, exist_ok=True)
            log_path = LOG_DIR / f"{name}-{os.getpid()}-{next(_stream_ids)}.stderr"
        self.stderr_path = log_path
        self.lines: list[Line] = []
        self._changed = threading.Condition()
        self._stderr = open(self.stderr_path, "wb")
        log.debug("start %s: %s", name, shlex.join(argv))
        self.proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=self._stderr,
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL, start_new_session=True, text=True, bufsize=1,
        )
        self.started = time.monotonic()
        self._reader = threading.Thread(target=self._read, name=f"read-{name}", daemon=True)
        self._reader.start()
        with _children_lock:
            _children.append(self)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for text in self.proc.stdout:
            with self._changed:
                self.lines.append(Line(time.monotonic(), text.rstrip("\n")))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    def snapshot(self) -> list[Line]:
        """The lines received so far."""
        with self._changed:
            return list(self.lines)

    def text(self) -> str:
        """All stdout so far, one string."""
        return "\n".join(line.text for line in self.snapshot())

    def stderr_tail(self, lines: int = 15) -> str:
        """The last lines of the child's stderr log."""
        if not self._stderr.closed:
            self._stderr.flush()
        try:
            return "\n".join(self.stderr_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def next_line(self, start: int, predicate: Callable[[str], bool], timeout_s: float,
                  what: str) -> tuple[int, Line]:
        """The first stdout line from index ``start`` on matching ``predicate``, with its
        index; BenchError when the child's stdout ends first or at the deadline."""
        deadline = time.monotonic() + timeout_s
        index = start
        with self._changed:
            while True:
                while index < len(self.lines):
                    if predicate(self.lines[index].text):
                        return index, self.lines[index]
                    index += 1
                if not self._reader.is_alive():
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    raise BenchError(f"{self.name}: no {what} within {timeout_s:.0f}s; "
                                     f"stdout: {self._text_locked()[-800:]} {self.stderr_tail()}")
                self._changed.wait(min(left, 1.0))
        try:
            code = self.proc.wait(timeout=5.0)
        except subprocess.TimeoutExpired:
            code = None
        raise BenchError(f"{self.name} exited ({code}) before {what}: {self.text()[-800:]} {self.stderr_tail()}")

    def _text_locked(self) -> str:
        return "\n".join(line.text for line in self.lines)

    def wait_for_line(self, predicate: Callable[[str], bool], timeout_s: float, what: str) -> Line:
        """The first stdout line matching ``predicate``; BenchError on exit or deadline."""
        return self.next_line(0, predicate, timeout_s, what)[1]

    def send(self, text: str) -> None:
        """Write one line to the child's stdin (``stdin=True``); BenchError if it is gone."""
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(text + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:
            raise BenchError(f"{self.name}: cannot write to its stdin: {exc}; log: {self.stderr_tail()}") from None

    def wait(self, timeout_s: float) -> int:
        """Wait for a normal exit; on timeout stop it and raise."""
        try:
            code = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.stop()
            raise BenchError(f"{self.name} did not finish within {timeout_s:.0f}s; "
                             f"stdout: {self.text()[-800:]}") from None
        self._finish()
        return code

    def stop(self, grace_s: float = 5.0, kill_s: float = 5.0, first_signal: signal.Signals = signal.SIGINT) -> int:
        """Close stdin (if it has one) and wait ``grace_s``; then ``first_signal`` (and wait
        ``grace_s`` when there was no stdin, else ``kill_s``), then SIGKILL.  Returns the exit code."""
        steps: list[tuple[signal.Signals | None, float]] = [(first_signal, grace_s), (signal.SIGKILL, kill_s)]
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()
            steps = [(None, grace_s), (first_signal, kill_s), (signal.SIGKILL, kill_s)]
        for sig, wait_s in steps:
            if self.proc.poll() is not None:
                break
            if sig is not None:
                if sig != steps[0][0]:
                    log.warning("%s (pid %d) still running: sending %s", self.name, self.proc.pid, sig.name)
                with contextlib.suppress(ProcessLookupError):
                    self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                continue
        self._finish()
        return self.proc.returncode

    def _finish(self) -> None:
        self._reader.join(timeout=2.0)
        self._stderr.close()
        with _children_lock:
            if self in _children:
                _children.remove(self)


def stop_all_children() -> None:
    """Stop every child still running (at exit, on error or on a signal)."""
    with _children_lock:
        children = list(_children)
    for child in children:
        try:
            child.stop(grace_s=2.0)
        except Exception:  # noqa: BLE001 - best effort while tearing down
            log.exception("could not stop %s", child.name)


atexit.register(stop_all_children)


def python_child_argv(script: str, *args: str) -> list[str]:
    """argv to run ``benchmarks/<script>`` with this interpreter, unbuffered, the way this
    process was started: ``-m benchmarks.<name>`` (same working directory, so the same
    ``benchmarks`` and ``aeron_py`` are imported) or by file path."""
    main = sys.modules.get("__main__")
    if getattr(main, "__spec__", None) is not None:
        return [sys.executable, "-u", "-m", f"benchmarks.{Path(script).stem}", *args]
    return [sys.executable, "-u", str(BENCH_DIR / script), *args]


def install_signal_cleanup() -> None:
    """Turn SIGTERM into SystemExit so ``finally`` blocks and atexit stop the children."""
    def _on_term(signum: int, _frame: object) -> None:
        log.warning("signal %d: stopping the benchmark and its processes", signum)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _on_term)


class StopFlag:
    """Set by SIGINT/SIGTERM so a measured loop can end cleanly and report."""

    def __init__(self) -> None:
        self.stopped = False
        signal.signal(signal.SIGINT, self._set)
        signal.signal(signal.SIGTERM, self._set)

    def _set(self, _signum: int, _frame: object) -> None:
        self.stopped = True
