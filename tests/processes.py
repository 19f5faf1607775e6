"""A child process whose output lines are collected, for tests that run CLIs and Java peers.

>>> with ChildProcess([sys.executable, "-m", "aeron_py.echo_server"]) as server:
...     server.wait_for_line("READY", timeout=30)
"""
from __future__ import annotations

import logging
import os
import signal
import subprocess
import threading
import time
from types import TracebackType
from typing import IO, Sequence

LOG = logging.getLogger(__name__)


class ChildProcess:
    """A child process whose stdout/stderr lines are collected by background reader threads.

    As a context manager it starts the command on entry and on exit terminates it, then kills it
    if it has not exited within ``stop_timeout`` seconds.
    """

    def __init__(self, command: Sequence[str], stop_timeout: float = 5.0, cwd: str | os.PathLike[str] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.command: list[str] = list(command)
        self.env = env  # None: this process's environment
        self.stop_timeout = stop_timeout
        self.cwd = cwd
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []
        self._proc: subprocess.Popen[str] | None = None
        self._cond = threading.Condition()
        self._readers: list[threading.Thread] = []
        self._stdout_closed = False

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> "ChildProcess":
        """Start the command; stdin is closed, stdout/stderr are read line by line."""
        if self._proc is not None:
            raise RuntimeError(f"process already started: {self.command}")
        LOG.info("starting %s", " ".join(self.command))
        self._proc = subprocess.Popen(
            self.command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            bufsize=1,
            cwd=self.cwd,
            env=self.env,
        )
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._readers = [
            threading.Thread(target=self._read, args=(self._proc.stdout, self.stdout_lines, True), daemon=True),
            threading.Thread(target=self._read, args=(self._proc.stderr, self.stderr_lines, False), daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        return self

    def _read(self, stream: IO[str], sink: list[str], is_stdout: bool) -> None:
        for line in stream:
            with self._cond:
                sink.append(line.rstrip("\r\n"))
                self._cond.notify_all()
        with self._cond:
            if is_stdout:
                self._stdout_closed = True
            self._cond.notify_all()

    def __enter__(self) -> "ChildProcess":
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        """Send ``sig``, wait up to ``stop_timeout`` s, then kill; returns the exit code."""
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.send_signal(sig)
            try:
                proc.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                LOG.warning("%s did not stop within %.1f s; killing it", self.command[-1:], self.stop_timeout)
                proc.kill()
                proc.wait(timeout=self.stop_timeout)
        self._join_readers()
        return proc.returncode

    def _join_readers(self) -> None:
        for reader in self._readers:
            reader.join(timeout=self.stop_timeout)

    # -- observation -------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        """Process id of the started child."""
        return self._require().pid

    @property
    def returncode(self) -> int | None:
        """Exit code, or None while running."""
        return self._require().poll()

    def _require(self) -> subprocess.Popen[str]:
        if self._proc is None:
            raise RuntimeError(f"process not started: {self.command}")
        return self._proc

    def wait(self, timeout: float) -> int:
        """Wait for the process to exit; returns its exit code.

        Raises:
            TimeoutError: it is still running after ``timeout`` seconds (it is left running).
        """
        proc = self._require()
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise TimeoutError(f"{self._describe()} still running after {timeout:.1f} s") from exc
        self._join_readers()
        return code

    def wait_for_line(self, text: str, timeout: float) -> str:
        """Return the first stdout line equal to or containing ``text``.

        Raises:
            TimeoutError: no such line within ``timeout`` seconds, or stdout closed (the process
                exited) before one appeared. The message includes the process output.
        """
        proc = self._require()
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for line in self.stdout_lines:
                    if text in line:
                        return line
                if self._stdout_closed:
                    break
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"{self._describe()} did not print {text!r} within {timeout:.1f} s\n{self.output_tail()}"
                    )
                self._cond.wait(timeout=remaining)
        try:
            code: int | None = proc.wait(timeout=max(0.1, min(2.0, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:
            code = None
        raise TimeoutError(
            f"{self._describe()} closed stdout (exit code {code}) before printing {text!r}\n{self.output_tail()}"
        )

    def output_tail(self, lines: int = 30) -> str:
        """The last ``lines`` lines of stdout and stderr, for error messages."""
        with self._cond:
            out = "\n".join(self.stdout_lines[-lines:])
            err = "\n".join(self.stderr_lines[-lines:])
        return f"--- stdout ---\n{out}\n--- stderr ---\n{err}"

    def _describe(self) -> str:
        return f"{' '.join(self.command[-8:])!r}"


#: Helpers for child-process scripts (the misuse tests' preludes): ``until`` polls a
#: condition to a deadline, ``expect`` returns the exception a call must raise; both end
#: the child with SystemExit and a message otherwise. The script must import ``time``.
CHILD_HELPERS = '''
def until(condition, timeout=10.0, what="condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.001)

def expect(exc_type, call, *args, **kwargs):
    try:
        call(*args, **kwargs)
    except exc_type as exc:
        return exc
    raise SystemExit(f"{call} did not raise {exc_type.__name__}")
'''
