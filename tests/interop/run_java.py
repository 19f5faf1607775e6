"""Helpers to build and run the Java Echo 2.0 interop peer (stdlib only).

Typical use from a pytest::

    jar = build_jar()
    with JavaProcess(java_command(jar, "server", str(tmp_path / "drv"), "127.0.0.1",
                                  "40123", "40124", "40200", "4")) as server:
        server.wait_for_line("READY", timeout=20)
        ...

The jar's client prints exactly one result line on stdout (``OK ...``, ``ERROR <reason>``,
``TIMEOUT <what>`` or ``FAIL <what>``) and exits 0 / 1 (server ERROR) / 2 (timeout) /
3 (protocol violation) / 4 (internal error) / 64 (usage). See README.md.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Sequence

LOG = logging.getLogger(__name__)

INTEROP_DIR: Path = Path(__file__).resolve().parent
JAR_PATH: Path = INTEROP_DIR / "target" / "echo2-interop.jar"

#: JVM flags Aeron/Agrona 1.51 need on JDK 17+ (Agrona uses jdk.internal.misc.Unsafe), plus a
#: single-threaded GC so a 2-core machine is not crowded by GC threads.
JVM_FLAGS: tuple[str, ...] = (
    "--add-opens",
    "java.base/jdk.internal.misc=ALL-UNNAMED",
    "-XX:+UseSerialGC",
)

BUILD_TIMEOUT_S: float = 600.0
_build_lock = threading.Lock()


class JavaBuildError(RuntimeError):
    """``mvn package`` failed or could not be run; the message carries its output."""


def _sources_newer_than(jar: Path) -> bool:
    """True if pom.xml or any Java source is newer than ``jar``."""
    jar_mtime = jar.stat().st_mtime
    sources = [INTEROP_DIR / "pom.xml", *(INTEROP_DIR / "src").rglob("*.java")]
    return any(path.stat().st_mtime > jar_mtime for path in sources)


def build_jar(timeout: float = BUILD_TIMEOUT_S) -> Path:
    """Return the runnable jar, building it with ``mvn -q -B package`` if missing or stale.

    Raises:
        JavaBuildError: Maven or Java is not installed, the build failed or timed out, or the
            build finished without producing the jar. The message includes Maven's output.
    """
    with _build_lock:
        if JAR_PATH.is_file() and not _sources_newer_than(JAR_PATH):
            return JAR_PATH
        mvn = shutil.which("mvn")
        if mvn is None:
            raise JavaBuildError("cannot build the Java interop jar: 'mvn' is not on PATH")
        if shutil.which("java") is None:
            raise JavaBuildError("cannot build the Java interop jar: 'java' is not on PATH")
        LOG.info("building %s with mvn -q -B package", JAR_PATH)
        start = time.monotonic()
        try:
            result = subprocess.run(
                [mvn, "-q", "-B", "package"],
                cwd=INTEROP_DIR,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=timeout,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            output = exc.stdout if isinstance(exc.stdout, str) else (exc.stdout or b"").decode(errors="replace")
            raise JavaBuildError(
                f"mvn -q -B package in {INTEROP_DIR} timed out after {timeout:.0f} s:\n{output}"
            ) from exc
        if result.returncode != 0:
            raise JavaBuildError(
                f"mvn -q -B package in {INTEROP_DIR} failed with exit code {result.returncode}:\n"
                f"{result.stdout}"
            )
        if not JAR_PATH.is_file():
            raise JavaBuildError(f"mvn -q -B package succeeded but {JAR_PATH} is missing:\n{result.stdout}")
        LOG.info("built %s in %.1f s", JAR_PATH, time.monotonic() - start)
        return JAR_PATH


def java_command(jar: Path | str, *args: str) -> list[str]:
    """The full command line running ``jar`` with ``args`` (``client ...`` or ``server ...``)."""
    return ["java", *JVM_FLAGS, "-jar", str(jar), *(str(arg) for arg in args)]


class JavaProcess:
    """A child process whose stdout/stderr lines are collected by background reader threads.

    As a context manager it starts the command on entry and on exit terminates it, then kills it
    if it has not exited within ``stop_timeout`` seconds.
    """

    def __init__(self, command: Sequence[str], stop_timeout: float = 5.0) -> None:
        self.command: list[str] = list(command)
        self.stop_timeout = stop_timeout
        self.stdout_lines: list[str] = []
        self.stderr_lines: list[str] = []
        self._proc: subprocess.Popen[str] | None = None
        self._cond = threading.Condition()
        self._readers: list[threading.Thread] = []
        self._stdout_closed = False

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> "JavaProcess":
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

    def __enter__(self) -> "JavaProcess":
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> int | None:
        """Terminate (SIGTERM), wait up to ``stop_timeout`` s, then kill; returns the exit code."""
        proc = self._proc
        if proc is None:
            return None
        if proc.poll() is None:
            proc.terminate()
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
