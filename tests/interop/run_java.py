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
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from processes import ChildProcess, StrPath  # noqa: E402

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
#: The sanitizer job's variables (.ci/sanitize): a JVM must not load the ASan runtime.
SANITIZER_VARIABLES: tuple[str, ...] = ("LD_PRELOAD", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS")


def java_env() -> dict[str, str]:
    """This process's environment without the sanitizer job's preload and options: Java and
    Maven run as they would outside that job (only our extension is what it checks)."""
    return {key: value for key, value in os.environ.items() if key not in SANITIZER_VARIABLES}
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
                env=java_env(),
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


def java_command(jar: Path | str, *args: str, jvm: tuple[str, ...] = ()) -> list[str]:
    """The full command line running ``jar`` with ``args`` (``client ...`` or ``server ...``);
    ``jvm`` adds JVM options such as ``-Daeron.term.buffer.length=65536``."""
    return ["java", *JVM_FLAGS, *jvm, "-jar", str(jar), *(str(arg) for arg in args)]


#: The interop jar's modes whose first argument is the Aeron directory (``client DIR ...``).
_DIR_MODES: frozenset[str] = frozenset({"client", "server", "archive-record", "archive-replay"})


def peer_aeron_dirs(command: Sequence[str]) -> list[str]:
    """The Aeron directory a ``java ... -jar JAR MODE DIR ...`` command gives the interop peer
    (its embedded Java media driver's), if any. (``-Daeron.dir=`` is ChildProcess's own.)"""
    args = list(command)
    if "-jar" not in args:
        return []
    rest = args[args.index("-jar") + 2:]  # after the jar
    return [rest[1]] if len(rest) >= 2 and rest[0] in _DIR_MODES else []


class JavaProcess(ChildProcess):
    """A Java peer (or any command) as a :class:`ChildProcess`; if it dies by a signal, the
    Aeron directory its command names (the interop jar's DIR, ``-Daeron.dir=``) is removed
    unless a live driver owns it (processes.remove_dead_driver_dirs)."""

    def __init__(self, command: Sequence[str], stop_timeout: float = 5.0, cwd: str | os.PathLike[str] | None = None,
                 env: dict[str, str] | None = None, aeron_dirs: Iterable[StrPath] = ()) -> None:
        super().__init__(command, stop_timeout=stop_timeout, cwd=cwd, env=env,
                         aeron_dirs=[*aeron_dirs, *peer_aeron_dirs(command)])
