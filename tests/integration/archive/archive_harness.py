"""A real Aeron Archive for the archive tests: Aeron's Java ``Archive`` (from the Java interop
jar, which shades Aeron's Java release) attached to our embedded C media driver.

Not a conftest.py: pytest would import it as the module ``conftest`` and displace the root
one (see tests/integration/asyncio/conftest.py). Test modules import it and define fixtures
with :func:`running_archive`."""
from __future__ import annotations

import contextlib
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "interop"))
from run_java import JVM_FLAGS, JavaProcess, build_jar, java_env  # noqa: E402

from conftest import free_udp_port  # noqa: E402  (tests/conftest.py)


#: How long a starting Archive gets to answer a connect (JVM start included).
START_TIMEOUT_S = 60.0


class JavaArchive:
    """A running Java Archive on ``driver_dir``, answering on ``control_channel``."""

    def __init__(self, driver_dir: str, archive_dir: Path, archive_id: int = 7,
                 recording_events: tuple[str, int] | None = None,
                 extra_properties: dict[str, str] | None = None) -> None:
        self.driver_dir = driver_dir
        self.archive_dir = archive_dir
        self.archive_id = archive_id
        self.control_port = free_udp_port()
        self.control_channel = f"aeron:udp?endpoint=127.0.0.1:{self.control_port}"
        properties = {
            "aeron.dir": driver_dir,
            "aeron.archive.dir": str(archive_dir),
            "aeron.archive.id": str(archive_id),
            "aeron.archive.control.channel": self.control_channel,
            "aeron.archive.replication.channel": "aeron:udp?endpoint=127.0.0.1:0",
            "aeron.archive.threading.mode": "SHARED",  # 2 cores: one agent thread, backing off when idle
            "aeron.archive.idle.strategy": "org.agrona.concurrent.BackoffIdleStrategy",
            "aeron.archive.segment.file.length": str(1 << 20),
            "aeron.archive.file.sync.level": "0",
        }
        self.recording_events = recording_events  # (channel, stream id) when the Archive publishes them
        if recording_events is not None:
            properties.update({"aeron.archive.recording.events.enabled": "true",
                               "aeron.archive.recording.events.channel": recording_events[0],
                               "aeron.archive.recording.events.stream.id": str(recording_events[1])})
        properties.update(extra_properties or {})  # e.g. an authenticator supplier
        self.command = ["java", *JVM_FLAGS, "-Xmx256m", *(f"-D{k}={v}" for k, v in properties.items()),
                        "-cp", str(build_jar()), "io.aeron.archive.Archive"]
        self.process = JavaProcess(self.command, stop_timeout=10.0, env=java_env())

    def start(self) -> "JavaArchive":
        self.process.start()
        return self

    def stop(self) -> None:
        self.process.__exit__(None, None, None)

    def output(self) -> str:
        return "\n".join(self.process.stdout_lines + self.process.stderr_lines)


def connect(aeron: object, archive: JavaArchive, timeout: float = START_TIMEOUT_S, **options: object) -> object:
    """An AeronArchive connected to ``archive``, retried (with a short message timeout) until
    the JVM answers or ``timeout`` passes."""
    from aeron_py.archive import AeronArchive, ArchiveTimeoutError

    deadline = time.monotonic() + timeout
    while True:
        try:
            return AeronArchive.connect(aeron, control_channel=archive.control_channel,  # type: ignore[arg-type]
                                        response_channel="aeron:udp?endpoint=127.0.0.1:0",
                                        message_timeout=options.pop("message_timeout", 2.0), **options)  # type: ignore[arg-type]
        except ArchiveTimeoutError:
            if time.monotonic() >= deadline or archive.process.returncode is not None:
                raise AssertionError(f"the Java Archive did not answer within {timeout} s:\n{archive.output()}")


@contextlib.contextmanager
def running_archive(driver_dir: str, archive_dir: Path, recording_events: tuple[str, int] | None = None, *,
                    archive_id: int = 7, extra_properties: dict[str, str] | None = None) -> Iterator[JavaArchive]:
    """A Java Archive on ``driver_dir``, stopped (and its files removed) at the end;
    ``recording_events``: the (channel, stream id) it publishes its recording events on;
    ``extra_properties``: more ``-D`` settings of the Archive."""
    archive = JavaArchive(driver_dir, archive_dir, archive_id, recording_events, extra_properties).start()
    try:
        yield archive
    finally:
        archive.stop()
        shutil.rmtree(archive_dir, ignore_errors=True)
