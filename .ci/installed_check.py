"""Smoke test of an installed aeron_py, run from outside the source tree (.ci/wheels, .ci/sdist).

    cd /tmp && /path/to/venv/bin/python /path/to/.ci/installed_check.py LABEL

Checks that the package comes from the venv's site-packages (not a source tree), that a
message round-trips over UDP on loopback through an embedded driver, that the linked-in
libsodium gives a known answer (aeron_py.crypto), that the Archive client is linked in
(aeron_py.archive: a connect with no Archive there times out, typed; and, where java and
mvn are installed, a recording made and replayed against Aeron's Java Archive by a client
process with no PATH, so no JDK on it), that the interpreter exits cleanly while daemon
threads poll and idle in the extension, and that the Echo 2.0 server's modules and CLI need
no optional dependency (the venv has none installed).
"""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

OPTIONAL = ("pyspark", "matplotlib", "tqdm")


def archive_client(driver_dir: str, control: str) -> int:
    """The client side of the archive check, in a child with no PATH (so no JDK on it): record
    ten messages through the installed aeron_py.archive, replay them, compare."""
    from aeron_py import Aeron
    from aeron_py.archive import AeronArchive, ArchiveTimeoutError

    assert shutil.which("java") is None, "the archive client check must run with no java on PATH"
    with Aeron(dir=driver_dir) as aeron:
        deadline = time.monotonic() + 60
        while True:
            try:
                archive = AeronArchive.connect(aeron, control_channel=control, message_timeout=2.0,
                                               response_channel="aeron:udp?endpoint=127.0.0.1:0")
                break
            except ArchiveTimeoutError:
                assert time.monotonic() < deadline, "the Java Archive did not answer within 60 s"
        with archive:
            subscription_id = archive.start_recording("aeron:ipc", 77)
            pub = aeron.add_exclusive_publication("aeron:ipc", 77)
            last = [pub.offer_until(b"recorded %d" % i, timeout=10) for i in range(10)][-1]
            recording_id = None
            while recording_id is None or archive.recording_position(recording_id) < last:
                assert time.monotonic() < deadline + 30, "the recording did not catch up"
                recording_id = archive.find_last_matching_recording("aeron:ipc", 77, pub.session_id)
                time.sleep(0.001)
            archive.stop_recording(subscription_id)
            replay = archive.replay(recording_id, "aeron:ipc", 78)
            got: list[bytes] = []
            while len(got) < 10 and time.monotonic() < deadline + 60:
                if replay.poll(lambda data, header: got.append(bytes(data)), 10) == 0:
                    time.sleep(0.001)
            assert got == [b"recorded %d" % i for i in range(10)], got
    return 0


def archive_replay(label: str) -> str:
    """Record and replay through the installed package against Aeron's Java Archive (started
    here, from the repository's Java interop jar); the client runs with no JDK on PATH."""
    if shutil.which("java") is None or shutil.which("mvn") is None:
        return "archive replay skipped (no java/mvn here)"
    interop = Path(__file__).resolve().parents[1] / "tests" / "interop"
    sys.path.insert(0, str(interop))
    from run_java import JVM_FLAGS, build_jar, java_env

    import aeron_py

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        control = f"aeron:udp?endpoint=127.0.0.1:{probe.getsockname()[1]}"
    with tempfile.TemporaryDirectory() as work, aeron_py.MediaDriver() as driver:
        command = ["java", *JVM_FLAGS, f"-Daeron.dir={driver.dir}", f"-Daeron.archive.dir={work}/archive",
                   f"-Daeron.archive.control.channel={control}", "-Daeron.archive.id=1",
                   "-Daeron.archive.replication.channel=aeron:udp?endpoint=127.0.0.1:0",
                   "-Daeron.archive.threading.mode=SHARED", "-cp", str(build_jar()), "io.aeron.archive.Archive"]
        java = subprocess.Popen(command, env=java_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            child = subprocess.run([sys.executable, __file__, "--archive-client", driver.dir, control],
                                   env={"PATH": "", "HOME": work}, cwd=work, capture_output=True, text=True,
                                   timeout=180)
        finally:
            java.terminate()
            java.wait(timeout=30)
    assert child.returncode == 0, f"{label}: archive replay failed:\n{child.stdout}{child.stderr}"
    return "archive record + replay ok (client with no JDK on PATH)"


def gil_after_import(free_threaded: bool, caught: list[warnings.WarningMessage]) -> str:
    """On a free-threaded CPython: the GIL stayed off through the import (the extension declares
    itself GIL-free: docs/safety.md, "Free-threaded Python"), and CPython warned of nothing."""
    if not free_threaded:
        return ""
    said = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert not sys._is_gil_enabled(), f"importing aeron_py turned the GIL on: {said}"
    assert not any("GIL" in text for text in said), said
    return ", free-threaded CPython: the GIL stayed off"


EXIT_SCRIPT = """
import threading, time, aeron_py, aeron_py.crypto
driver = aeron_py.MediaDriver()
aeron = aeron_py.Aeron(driver=driver)
sub = aeron.add_subscription("aeron:ipc", 7)
try:
    aeron.add_subscription("not a channel", 7)
except aeron_py.AeronError:
    print("RAISED", flush=True)
loops = [0]
def poller(idle):
    while True:
        loops[0] += 1
        try:
            idle.idle(sub.poll(lambda data, header: None, 10))
        except Exception:
            idle.idle(0)
def hasher():
    big = bytes(1 << 20)
    while True:
        aeron_py.crypto.sha256(big)
        loops[0] += 1
for idle in (aeron_py.SleepingIdleStrategy(1_000_000), aeron_py.BackoffIdleStrategy()):
    threading.Thread(target=poller, args=(idle,), daemon=True).start()
threading.Thread(target=hasher, daemon=True).start()
deadline = time.monotonic() + 10
while loops[0] < 200 and time.monotonic() < deadline:
    time.sleep(0.001)
aeron.close()
driver.close()
print("DONE", flush=True)
"""


def exit_with_daemon_threads() -> str:
    """An exception crosses the extension, then two daemon threads poll and idle and a third
    hashes (the GIL released) while the client, the driver and the interpreter shut down:
    CPython ends a thread that takes the GIL back then with pthread_exit, a forced unwind; the
    extension parks it (gil.hpp) with one unwinder (.ci/wheels). Two runs, each must exit 0
    (without those fixes every run crashed)."""
    for _ in range(2):
        done = subprocess.run([sys.executable, "-c", EXIT_SCRIPT], capture_output=True, text=True, timeout=60)
        lines = done.stdout.split()
        assert done.returncode == 0 and lines == ["RAISED", "DONE"], (done.returncode, done.stdout, done.stderr[-600:])
    return "exit with polling daemon threads ok"


def main() -> int:
    if len(sys.argv) == 4 and sys.argv[1] == "--archive-client":
        return archive_client(sys.argv[2], sys.argv[3])
    label = sys.argv[1] if len(sys.argv) > 1 else "installed aeron_py"
    free_threaded = sys.version_info >= (3, 13) and not sys._is_gil_enabled()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        import aeron_py
    gil = gil_after_import(free_threaded, caught)
    import aeron_py.echo.server  # noqa: F401  the server's modules: must not need an extra
    import aeron_py.echo.server.cli  # noqa: F401

    where = os.path.dirname(aeron_py.__file__)
    assert "site-packages" in where, f"aeron_py imported from {where}, not from site-packages"
    pulled = [name for name in OPTIONAL if name in sys.modules]
    assert not pulled, f"the echo server's imports pull optional packages: {pulled}"

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:  # a free loopback UDP port
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    channel = f"aeron:udp?endpoint=127.0.0.1:{port}"
    got: list[bytes] = []
    with aeron_py.MediaDriver() as driver, aeron_py.Aeron(driver=driver) as aeron:
        sub = aeron.add_subscription(channel, 11)
        pub = aeron.add_publication(channel, 11)
        pub.offer_until(f"{label} ok".encode(), timeout=10)
        idle = aeron_py.SleepingIdleStrategy(1_000_000)
        deadline = time.monotonic() + 10
        while not got and time.monotonic() < deadline:
            idle.idle(sub.poll(lambda data, header: got.append(bytes(data)), 10))
    assert got == [f"{label} ok".encode()], got

    from aeron_py import crypto  # libsodium, compiled in: a known answer (SHA-256 of "abc")
    assert crypto.sha256(b"abc").hex().startswith("ba7816bf8f01cfea"), crypto.sha256(b"abc").hex()

    # the archive client is linked in and runs: with no Archive there, connect times out, typed
    from aeron_py.archive import AeronArchive, ArchiveTimeoutError
    with aeron_py.MediaDriver() as driver, aeron_py.Aeron(driver=driver) as aeron:
        try:
            AeronArchive.connect(aeron, control_channel=f"aeron:udp?endpoint=127.0.0.1:{port}", message_timeout=0.3)
        except ArchiveTimeoutError:
            pass
        else:
            raise AssertionError("an archive connect with no Archive there succeeded")

    cli = subprocess.run(
        [sys.executable, "-m", "aeron_py.echo_server", "--help"],
        capture_output=True, text=True, timeout=60,
    )
    assert cli.returncode == 0 and "usage" in cli.stdout.lower(), cli
    print(
        f"{label}: aeron_py {aeron_py.__version__} (Aeron {aeron_py.aeron_version()}) on Python "
        f"{sys.version.split()[0]} from {where}: UDP round trip ok, libsodium {crypto.libsodium_version()} ok, "
        f"archive client ok, {archive_replay(label)}, {exit_with_daemon_threads()}, "
        f"echo server needs no extras{gil}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
