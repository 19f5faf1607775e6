"""A killed process's media driver directory (``/dev/shm/aeron-py-<pid>-...``) outlives it;
tests/processes.py removes it once the process is dead, and never a live driver's. Real
drivers in real child processes, killed with SIGKILL."""
from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aeron_py import Aeron, MediaDriver
from processes import ChildProcess, remove_dead_driver_dirs

pytestmark = [pytest.mark.timeout(90), pytest.mark.integration]

#: A driver in its own fresh directory (no ``dir``); prints the directory, then waits to be
#: killed (60 s at most). Extra arguments are ignored (a Java peer's ``-Daeron.dir=``).
CHILD = ("import threading; from aeron_py import MediaDriver; d = MediaDriver(); "
         "print(d.dir, flush=True); threading.Event().wait(60)")


def read_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    """The child's first stdout line, waited for up to ``timeout`` seconds."""
    assert proc.stdout is not None
    fd, data = proc.stdout.fileno(), b""
    deadline = time.monotonic() + timeout
    while b"\n" not in data:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no line from the child within {timeout} s (got {data!r})"
        readable, _, _ = select.select([fd], [], [], remaining)
        if readable:
            chunk = os.read(fd, 4096)
            assert chunk, f"the child closed stdout (exit code {proc.poll()}) after {data!r}"
            data += chunk
    return data.split(b"\n", 1)[0].decode()


def test_a_sigkilled_childs_driver_directory_is_left_and_then_removed() -> None:
    proc = subprocess.Popen([sys.executable, "-c", CHILD], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        driver_dir = Path(read_line(proc, timeout=60))
        assert driver_dir.parent == Path("/dev/shm") and driver_dir.name.startswith(f"aeron-py-{proc.pid}-")
        assert (driver_dir / "cnc.dat").is_file()
        assert remove_dead_driver_dirs(proc.pid) == []  # alive: its driver's directory is kept
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(timeout=30) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        assert proc.stdout is not None
        proc.stdout.close()
        removed = remove_dead_driver_dirs(proc.pid)
    assert removed == [driver_dir]  # the killed driver could not remove it; the helper did
    assert not driver_dir.exists()


def test_child_process_removes_the_directory_of_a_child_it_kills() -> None:
    child = ChildProcess([sys.executable, "-c", CHILD], stop_timeout=10).start()
    try:
        driver_dir = Path(child.wait_for_line("/dev/shm/aeron-py-", timeout=60))
        assert driver_dir.is_dir()
    finally:
        code = child.stop(signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert not driver_dir.exists()


def test_a_live_drivers_directory_given_to_a_killed_child_is_kept() -> None:
    """As a Java Archive given this process's driver (``-Daeron.dir=``): when the child is
    killed, the directory it was given still belongs to a live driver and stays."""
    with MediaDriver(publication_linger_timeout_ns=0) as driver, Aeron(driver=driver) as aeron:
        child = ChildProcess([sys.executable, "-c", CHILD, f"-Daeron.dir={driver.dir}"], stop_timeout=10).start()
        try:
            own_dir = Path(child.wait_for_line("/dev/shm/aeron-py-", timeout=60))
        finally:
            assert child.stop(signal.SIGKILL) == -signal.SIGKILL
        assert child.aeron_dirs == [driver.dir]
        assert not own_dir.exists() and Path(driver.dir, "cnc.dat").is_file()
        assert remove_dead_driver_dirs(os.getpid(), [driver.dir]) == []  # its owner (this process) is alive
        sub = aeron.add_subscription("aeron:ipc", 9)
        pub = aeron.add_publication("aeron:ipc", 9)
        assert pub.offer_until(b"still here", timeout=5) > 0 and sub is not None
