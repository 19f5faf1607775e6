"""What a dead process leaves in /dev/shm (tests/processes.py) and the run's check that none is
left (tests/conftest.py). Stdlib children that make a directory named as an aeron_py driver's
and die; no extension needed (tests/integration/bindings/test_killed_driver_dirs.py kills real
drivers)."""
from __future__ import annotations

import os
import select
import shutil
import signal
import struct
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

import processes
from processes import (
    SHM_DIR, ChildProcess, aeron_entries, cnc_pid, dead_leftovers, died_by_signal, directory_owner, pid_alive,
    remove_dead_driver_dirs, run_process,
)

pytestmark = pytest.mark.timeout(60)

TESTS = Path(__file__).resolve().parents[1]

#: Makes ``<argv[3]>/aeron-py-<its pid>-<argv[1]>`` holding 64 KiB, prints its path, then
#: dies by SIGKILL (``kill``), exits leaving it (``exit``) or waits to be killed (``wait``;
#: 60 s at most).
CHILD = r"""
import os, signal, sys, threading
path = os.path.join(sys.argv[3], f"aeron-py-{os.getpid()}-{sys.argv[1]}")
os.mkdir(path)
with open(os.path.join(path, "cnc.dat"), "wb") as f:
    f.write(b"\0" * 65536)  # version 0: not ready, so the name says whose it is
print(path, flush=True)
if sys.argv[2] == "kill":
    os.kill(os.getpid(), signal.SIGKILL)
if sys.argv[2] == "exit":
    sys.exit(0)
threading.Event().wait(60)
"""


def dead_pid() -> int:
    """The pid of a child that has exited and been reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(timeout=30)
    return proc.pid


def write_cnc(directory: Path, pid: int, version: int = 1) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    header = struct.pack("<6iqqq", version, 0, 0, 0, 0, 0, 0, 0, pid) + struct.pack("<i", 4096)
    (directory / "cnc.dat").write_bytes(header + b"\0" * 1024)


@pytest.fixture
def shm() -> Iterator[Path]:
    if not SHM_DIR.is_dir():
        pytest.skip(f"no {SHM_DIR} here")
    yield SHM_DIR


@pytest.fixture
def token() -> Iterator[str]:
    value = f"unit-{uuid.uuid4().hex[:12]}"
    yield value
    for path in SHM_DIR.glob(f"aeron-py-*-{value}*"):  # a failed test's, never a passing one's
        shutil.rmtree(path, ignore_errors=True)


# -- liveness and owners -------------------------------------------------------------------

def test_pid_alive_tells_live_dead_and_zombie_processes_apart() -> None:
    assert pid_alive(os.getpid())
    assert not pid_alive(dead_pid())
    assert not pid_alive(0) and not pid_alive(-1)
    if not hasattr(os, "pidfd_open"):
        pytest.skip("no pidfd_open: cannot wait for a child's exit without reaping it")
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        pidfd = os.pidfd_open(proc.pid)
    except OSError as exc:
        proc.wait(timeout=30)
        pytest.skip(f"pidfd_open: {exc}")
    try:
        readable, _, _ = select.select([pidfd], [], [], 30)  # readable once it exited (a zombie till reaped)
        assert readable, "the child did not exit within 30 s"
        assert not pid_alive(proc.pid)  # dead, though not reaped yet
    finally:
        os.close(pidfd)
        proc.wait(timeout=30)


def test_died_by_signal() -> None:
    assert died_by_signal(-signal.SIGKILL) and died_by_signal(128 + signal.SIGTERM)
    assert not died_by_signal(0) and not died_by_signal(1) and not died_by_signal(3)


def test_owner_is_the_cnc_pid_else_the_pid_in_the_name(tmp_path: Path) -> None:
    write_cnc(tmp_path / "java-style", 4321)
    assert cnc_pid(tmp_path / "java-style") == directory_owner(tmp_path / "java-style") == 4321
    write_cnc(tmp_path / "aeron-py-77-abc", 0, version=0)  # being made: the CnC file says nothing yet
    assert cnc_pid(tmp_path / "aeron-py-77-abc") is None and directory_owner(tmp_path / "aeron-py-77-abc") == 77
    write_cnc(tmp_path / "aeron-py-77-taken-over", 88)  # another driver took it over: it owns it now
    assert directory_owner(tmp_path / "aeron-py-77-taken-over") == 88
    (tmp_path / "aeron-short").mkdir()
    (tmp_path / "aeron-short" / "cnc.dat").write_bytes(b"\1\0\0\0")
    assert directory_owner(tmp_path / "aeron-short") is None


# -- remove_dead_driver_dirs ---------------------------------------------------------------

def test_removes_only_what_dead_processes_left(tmp_path: Path) -> None:
    dead, alive = dead_pid(), os.getpid()
    own_dead = tmp_path / f"aeron-py-{dead}-0123456789ab"
    own_alive = tmp_path / f"aeron-py-{alive}-0123456789ab"
    for path in (own_dead, own_alive):
        (path / "publications").mkdir(parents=True)
        (path / "publications" / "1.logbuffer").write_bytes(b"x" * 4096)
    taken_over = tmp_path / f"aeron-py-{dead}-ffffffffffff"
    write_cnc(taken_over, alive)  # a live driver (this process) took over a dead one's directory
    java_dead, java_live, never_started = tmp_path / "java-dead", tmp_path / "java-live", tmp_path / "no-cnc"
    write_cnc(java_dead, dead)
    write_cnc(java_live, alive)  # e.g. a Java Archive's -Daeron.dir: the test process's own driver
    never_started.mkdir()

    removed = remove_dead_driver_dirs(dead, [java_dead, java_live, never_started, tmp_path / "absent"],
                                      base=tmp_path)

    assert sorted(removed) == sorted([own_dead, java_dead, never_started])  # no CnC file: the given pid's
    assert not own_dead.exists() and not java_dead.exists() and not never_started.exists()
    assert own_alive.is_dir() and taken_over.is_dir() and java_live.is_dir()
    assert remove_dead_driver_dirs(alive, [java_live], base=tmp_path) == []  # alive: nothing of it goes
    assert remove_dead_driver_dirs(None, [tmp_path / "no-owner-at-all"], base=tmp_path) == []


def test_dead_leftovers_are_the_new_entries_of_dead_owners(tmp_path: Path) -> None:
    dead = dead_pid()
    (tmp_path / f"aeron-py-{dead}-old").mkdir()  # there before: not this run's
    baseline = aeron_entries(tmp_path)
    (tmp_path / f"aeron-py-{dead}-new").mkdir()
    (tmp_path / f"aeron-py-{os.getpid()}-live").mkdir()
    write_cnc(tmp_path / "aeron-java-dead", dead)
    (tmp_path / "aeron-unowned-fresh").mkdir()  # may be a driver starting now
    (tmp_path / "aeron-unowned-stale").mkdir()
    stale = time.time() - 3600
    os.utime(tmp_path / "aeron-unowned-stale", (stale, stale))
    (tmp_path / "not-aeron").mkdir()

    found = {leftover.path.name: leftover for leftover in dead_leftovers(baseline, tmp_path)}

    assert sorted(found) == sorted(["aeron-java-dead", "aeron-unowned-stale", f"aeron-py-{dead}-new"])
    assert found["aeron-java-dead"].owner == dead and found["aeron-unowned-stale"].owner is None
    assert found["aeron-java-dead"].size >= 1024
    assert f"pid {dead}, dead" in found[f"aeron-py-{dead}-new"].describe()
    assert processes.remove_leftovers(found.values()) == []
    assert dead_leftovers(baseline, tmp_path) == []


# -- the child runners clean up after a child that died ------------------------------------

def test_run_process_removes_the_directory_of_a_child_that_killed_itself(shm: Path, token: str) -> None:
    done = run_process([sys.executable, "-c", CHILD, token, "kill", str(shm)], capture_output=True, text=True,
                       timeout=30)
    assert done.returncode == -signal.SIGKILL, done.stderr
    path = Path(done.stdout.strip())
    assert path.name.startswith("aeron-py-") and path.name.endswith(token)
    assert not path.exists()


def test_run_process_removes_the_directory_of_a_child_killed_at_its_timeout(shm: Path, token: str) -> None:
    with pytest.raises(subprocess.TimeoutExpired) as caught:
        run_process([sys.executable, "-c", CHILD, token, "wait", str(shm)], capture_output=True, text=True,
                    timeout=5)
    out = caught.value.stdout
    printed = (out.decode() if isinstance(out, bytes) else out or "").strip()
    assert printed.endswith(token), f"the child did not make its directory within 5 s: {printed!r}"
    assert not Path(printed).exists()
    assert list(shm.glob(f"aeron-py-*-{token}")) == []


def test_run_process_keeps_a_cleanly_exited_childs_directory(shm: Path, token: str) -> None:
    """Only death by a signal is cleaned up: a child that exits leaving its directory is a leak
    its test (or the run's check) must see."""
    done = run_process([sys.executable, "-c", CHILD, token, "exit", str(shm)], capture_output=True, text=True,
                       timeout=30)
    assert done.returncode == 0, done.stderr
    path = Path(done.stdout.strip())
    assert path.is_dir()
    assert remove_dead_driver_dirs(int(path.name.split("-")[2])) == [path]


def test_child_process_removes_its_directory_when_stopped_by_sigkill(shm: Path, token: str) -> None:
    child = ChildProcess([sys.executable, "-c", CHILD, token, "wait", str(shm)], stop_timeout=10).start()
    try:
        path = Path(child.wait_for_line(token, timeout=30))
        assert path.is_dir() and path.name.startswith(f"aeron-py-{child.pid}-")
    finally:
        code = child.stop(signal.SIGKILL)
    assert code == -signal.SIGKILL
    assert not path.exists()


# -- the run's check (tests/conftest.py), in a nested pytest run ---------------------------

NESTED_TESTS = r'''
import os, signal, subprocess, sys
import pytest
from processes import remove_dead_driver_dirs

TOKEN = os.environ["LEAK_TOKEN"]
CHILD = os.environ["LEAK_CHILD"]


def die_leaving(tag):
    """A child that makes its aeron-py-<pid>-... directory and is killed; returns its pid."""
    proc = subprocess.Popen([sys.executable, "-c", CHILD, f"{TOKEN}-{tag}", "kill", "/dev/shm"],
                            stdout=subprocess.DEVNULL)
    assert proc.wait(timeout=30) == -signal.SIGKILL
    return proc.pid


@pytest.fixture(scope="session")
def session_child():
    pid = die_leaving("session")
    yield
    remove_dead_driver_dirs(pid)  # torn down after the tests; the check must come after this


def test_cleans_up(session_child):
    remove_dead_driver_dirs(die_leaving("cleaned"))


def test_leaks():
    die_leaving("leak")


def test_leaks_then_interrupted():
    die_leaving("interrupted")
    raise KeyboardInterrupt
'''


def nested_run(tmp_path: Path, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    for name in ("conftest.py", "processes.py"):
        shutil.copy(TESTS / name, tmp_path / name)
    (tmp_path / "test_nested.py").write_text(NESTED_TESTS)
    env = dict(os.environ, LEAK_TOKEN=token, LEAK_CHILD=CHILD)
    return run_process([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
                        "-c", os.devnull, "test_nested.py", *args], cwd=tmp_path, env=env, capture_output=True,
                       text=True, timeout=50)


def test_the_run_passes_when_tests_remove_what_they_left(shm: Path, tmp_path: Path, token: str) -> None:
    done = nested_run(tmp_path, token, "-k", "cleans_up")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "dead processes" not in done.stdout
    assert list(shm.glob(f"aeron-py-*-{token}-*")) == []


def test_the_run_fails_naming_what_a_test_left_and_removes_it(shm: Path, tmp_path: Path, token: str) -> None:
    done = nested_run(tmp_path, token, "-k", "cleans_up or leaks and not interrupted")
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "2 passed" in output and "1 error" in output, output
    assert f"-{token}-leak (64 KiB, pid " in output and ", dead): appeared during test_nested.py::test_leaks " \
        "(test family: test_nested.py)" in output, output
    assert f"{token}-session" not in output and f"{token}-cleaned" not in output, output
    assert list(shm.glob(f"aeron-py-*-{token}-*")) == []  # removed after being reported


def test_an_interrupted_run_still_reports_what_was_left(shm: Path, tmp_path: Path, token: str) -> None:
    done = nested_run(tmp_path, token, "-k", "cleans_up or interrupted")
    output = done.stdout + done.stderr
    assert done.returncode == 2, output  # interrupted, as without the check
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    assert "driver directories of dead processes left in /dev/shm" in output, output
    assert f"-{token}-interrupted (64 KiB" in output, output
    assert list(shm.glob(f"aeron-py-*-{token}-*")) == []
