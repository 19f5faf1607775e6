"""Child processes for tests that run CLIs, scripts and Java peers, and what a dead one leaves.

>>> with ChildProcess([sys.executable, "-m", "aeron_py.echo_server"]) as server:
...     server.wait_for_line("READY", timeout=30)

A media driver's directory (``/dev/shm/aeron-py-<pid>-<hex>`` for an aeron_py driver with
no ``dir``, see aeron_py/driver.py) is removed by the driver when it closes; a process that
is killed cannot, and leaves tens of MB in /dev/shm. :func:`remove_dead_driver_dirs` removes
the directories of a dead process; :class:`ChildProcess` and :func:`run_process` call it when
their child died by a signal (killed by the test or a timeout, or crashed), and
tests/conftest.py fails the run when a dead process's directory is left over at its end
(:func:`aeron_entries`, :func:`dead_leftovers`). Stdlib only: tests/conftest.py imports it
even where the extension is not built.
"""
from __future__ import annotations

import logging
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Sequence, Union

LOG = logging.getLogger(__name__)

StrPath = Union[str, "os.PathLike[str]"]

#: Where Aeron drivers (ours with no ``dir``, Java's by default) make their directories.
SHM_DIR = Path("/dev/shm")
#: The directory an aeron_py MediaDriver makes when given no ``dir`` (aeron_py/driver.py).
_OWN_DIR = re.compile(r"aeron-py-(\d+)-")
#: The pid in a CnC file's header (``aeron_cnc_metadata_t``: six int32 lengths and version,
#: the client liveness timeout and start timestamp as int64, then the pid as int64).
_CNC_PID_OFFSET = 40
_CNC_HEADER = 48
#: An entry with no owner to check, changed this recently, may be a driver starting now.
_UNOWNED_GRACE_S = 10.0
#: How long a killed child gets to be reaped (SIGKILL cannot be caught; this bounds the wait).
KILL_WAIT_S = 30.0


class ChildProcess:
    """A child process whose stdout/stderr lines are collected by background reader threads.

    As a context manager it starts the command on entry and on exit terminates it, then kills it
    if it has not exited within ``stop_timeout`` seconds. Once it is reaped (:meth:`stop`,
    :meth:`wait`), if it died by a signal, the driver directories it left are removed
    (:func:`remove_dead_driver_dirs`: its own under /dev/shm and :attr:`aeron_dirs`).
    """

    def __init__(self, command: Sequence[str], stop_timeout: float = 5.0, cwd: str | os.PathLike[str] | None = None,
                 env: dict[str, str] | None = None, aeron_dirs: Iterable[StrPath] = ()) -> None:
        self.command: list[str] = list(command)
        #: Driver directories the child may leave if it dies by a signal, removed then if no live
        #: process owns them (besides its own ``/dev/shm/aeron-py-<pid>-*``): ``aeron_dirs`` and
        #: any ``-Daeron.dir=`` of a Java command (a directory of a live driver, such as the test
        #: process's own for a Java Archive, is kept: its CnC file names a live owner).
        self.aeron_dirs: list[str] = [os.fspath(d) for d in aeron_dirs] + [
            arg.split("=", 1)[1] for arg in self.command if arg.startswith("-Daeron.dir=")]
        self.env = env  # None: this process's environment
        self.stop_timeout = stop_timeout
        self.cwd = cwd
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []
        self._proc: subprocess.Popen[str] | None = None
        self._cond = threading.Condition()
        self._readers: list[threading.Thread] = []
        self._stdout_closed = False
        self._cleaned = False

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
                proc.wait(timeout=max(self.stop_timeout, KILL_WAIT_S))
        self._reaped()
        self._join_readers()
        return proc.returncode

    def _reaped(self) -> None:
        """Once the child is reaped: if it died by a signal, remove the driver directories it left."""
        proc = self._require()
        if self._cleaned or proc.returncode is None:
            return
        self._cleaned = True
        if died_by_signal(proc.returncode):
            remove_dead_driver_dirs(proc.pid, self.aeron_dirs)

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
        self._reaped()
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


def run_python_script(script: str, *args: str, timeout: float) -> list[str]:
    """Run ``script`` in a fresh interpreter (``python -c``, then ``args``); assert it was not
    killed by a signal, exited 0 and printed ``DONE`` last; return its stdout lines."""
    with ChildProcess([sys.executable, "-c", script, *args], stop_timeout=10) as child:
        code = child.wait(timeout)
        output = child.output_tail(60)
        lines = list(child.stdout_lines)
    assert code >= 0, f"killed by signal {-code}\n{output}"
    assert code == 0, f"exit code {code}\n{output}"
    assert lines and lines[-1] == "DONE", output
    return lines


def run_process(args: Sequence[str], *, timeout: float, aeron_dirs: Iterable[StrPath] = (),
                input: str | bytes | None = None, capture_output: bool = False, check: bool = False,
                **popen: Any) -> subprocess.CompletedProcess[Any]:
    """``subprocess.run`` with a required ``timeout`` that also removes the driver directories
    its child leaves when it dies by a signal: killed at the timeout (TimeoutExpired is then
    raised, as by subprocess.run) or on any exception while waiting, or crashed.
    ``aeron_dirs``: directories given to the child (see :func:`remove_dead_driver_dirs`)."""
    if capture_output:
        if popen.get("stdout") is not None or popen.get("stderr") is not None:
            raise ValueError("stdout and stderr may not be given with capture_output")
        popen["stdout"] = popen["stderr"] = subprocess.PIPE
    if input is not None:
        if popen.get("stdin") is not None:
            raise ValueError("stdin may not be given with input")
        popen["stdin"] = subprocess.PIPE
    with subprocess.Popen(args, **popen) as proc:
        try:
            try:
                stdout, stderr = proc.communicate(input, timeout=timeout)
            except BaseException:
                proc.kill()
                proc.wait(timeout=KILL_WAIT_S)
                raise
        finally:
            if proc.returncode is not None and died_by_signal(proc.returncode):
                remove_dead_driver_dirs(proc.pid, aeron_dirs)
        code = proc.returncode
    completed: subprocess.CompletedProcess[Any] = subprocess.CompletedProcess(args, code, stdout, stderr)
    if check:
        completed.check_returncode()
    return completed


def died_by_signal(returncode: int) -> bool:
    """Whether an exit status means death by a signal: negative (Popen's -N), or 128 + N (the
    JVM's and shells' convention, e.g. 143 after SIGTERM)."""
    return returncode < 0 or 128 < returncode <= 128 + 64


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (dead, not yet reaped: it runs no
    code and will never remove anything)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by another user
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return not os.path.isdir("/proc/self")  # gone since (or no /proc to ask: it existed)
    except OSError:
        return True
    fields = stat[stat.rfind(")") + 1:].split()
    return not fields or fields[0] not in ("Z", "X")


def cnc_pid(directory: StrPath) -> int | None:
    """The pid a media driver wrote in ``directory``'s CnC file; None without a CnC file or
    before the driver made it ready (its version is set last)."""
    try:
        with open(os.path.join(directory, "cnc.dat"), "rb") as cnc:
            header = cnc.read(_CNC_HEADER)
    except OSError:
        return None
    if len(header) < _CNC_HEADER or struct.unpack_from("<i", header, 0)[0] == 0:
        return None
    pid = struct.unpack_from("<q", header, _CNC_PID_OFFSET)[0]
    return pid if pid > 0 else None


def directory_owner(path: StrPath) -> int | None:
    """The process a driver directory belongs to: the pid in its CnC file, else the pid in an
    ``aeron-py-<pid>-...`` name, else None."""
    pid = cnc_pid(path) if os.path.isdir(path) else None
    if pid is None:
        match = _OWN_DIR.match(os.path.basename(os.fspath(path)))
        pid = int(match.group(1)) if match else None
    return pid


def disk_usage(path: StrPath) -> int:
    """Bytes ``path`` takes (allocated blocks, as ``du`` counts them; tmpfs pages in /dev/shm)."""
    try:
        top = os.lstat(path)
    except OSError:
        return 0
    total = top.st_blocks * 512
    if os.path.isdir(path) and not os.path.islink(path):
        for root, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                try:
                    total += os.lstat(os.path.join(root, name)).st_blocks * 512
                except OSError:
                    pass  # removed meanwhile
    return total


def format_size(size: int) -> str:
    return f"{size / (1 << 20):.1f} MiB" if size >= 1 << 20 else f"{size / 1024:.0f} KiB"


def remove_dead_driver_dirs(pid: int | None = None, dirs: Iterable[StrPath] = (), *,
                            base: StrPath = SHM_DIR) -> list[Path]:
    """Remove the media driver directories a dead process left; return those removed.

    ``pid``: its ``<base>/aeron-py-<pid>-*`` directories (what an aeron_py MediaDriver with no
    ``dir`` makes in that process). ``dirs``: directories given to it (a Java peer's
    ``-Daeron.dir``, a CLI's DIR argument). Each is removed only when its owner - the pid its
    CnC file names, else the pid in its name, else ``pid`` - is dead, so a directory a live
    driver uses (or took over) is kept. Call it once the process is reaped (or known dead)."""
    candidates: dict[Path, None] = {}
    if pid is not None:
        candidates.update(dict.fromkeys(sorted(Path(base).glob(f"aeron-py-{pid}-*"))))
    candidates.update(dict.fromkeys(Path(d) for d in dirs))
    removed: list[Path] = []
    for path in candidates:
        if not os.path.lexists(path):
            continue
        owner = directory_owner(path)
        owner = pid if owner is None else owner
        if owner is None:
            LOG.warning("not removing %s: neither a CnC file nor its name says whose it is", path)
            continue
        if pid_alive(owner):
            LOG.info("keeping %s: its owner, pid %d, is alive", path, owner)
            continue
        size = disk_usage(path)
        if _remove(path):
            removed.append(path)
            LOG.info("removed %s (%s) left by dead pid %d", path, format_size(size), owner)
    return removed


def _remove(path: Path) -> bool:
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink()
    except FileNotFoundError:
        pass  # removed meanwhile
    except OSError as exc:
        LOG.warning("could not remove %s: %s", path, exc)
        return False
    return True


def aeron_entries(base: StrPath = SHM_DIR) -> frozenset[str]:
    """Names of the ``aeron*`` entries in ``base`` (Aeron's directories: ours ``aeron-py-...``,
    Java's ``aeron-<user>``...); empty when ``base`` does not exist."""
    try:
        with os.scandir(base) as entries:
            return frozenset(entry.name for entry in entries if entry.name.startswith("aeron"))
    except OSError:
        return frozenset()


@dataclass(frozen=True)
class Leftover:
    """An ``aeron*`` entry whose process is dead: what a killed process left."""

    path: Path
    owner: int | None  # None: no CnC file or name says whose it is
    size: int

    def describe(self) -> str:
        whose = f"pid {self.owner}, dead" if self.owner is not None else "no owner recorded"
        return f"{self.path} ({format_size(self.size)}, {whose})"


def dead_leftovers(baseline: Iterable[str], base: StrPath = SHM_DIR) -> list[Leftover]:
    """The ``aeron*`` entries of ``base`` not in ``baseline`` whose owner is dead (an entry
    no CnC file or name gives an owner counts once unchanged for a few seconds: a driver
    starting now has not written its CnC file yet). A live owner's are not leftovers."""
    out: list[Leftover] = []
    for name in sorted(aeron_entries(base) - frozenset(baseline)):
        path = Path(base) / name
        owner = directory_owner(path)
        if owner is None:
            try:
                if time.time() - path.lstat().st_mtime < _UNOWNED_GRACE_S:
                    continue
            except OSError:
                continue  # gone meanwhile
        elif pid_alive(owner):
            continue
        out.append(Leftover(path, owner, disk_usage(path)))
    return out


def remove_leftovers(leftovers: Iterable[Leftover]) -> list[Path]:
    """Remove what :func:`dead_leftovers` found; return what could not be removed."""
    return [leftover.path for leftover in leftovers if not _remove(leftover.path)]


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
