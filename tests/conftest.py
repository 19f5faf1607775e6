"""Shared fixtures: a real embedded media driver and client per test, loopback ports; and the
check that the run leaves /dev/shm as it found it (no driver directory of a dead process)."""
from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from processes import SHM_DIR, Leftover, aeron_entries, dead_leftovers, remove_leftovers

T = TypeVar("T")
LOG = logging.getLogger(__name__)

_SHM_BASELINE = pytest.StashKey[frozenset[str]]()
_SHM_FIRST_SEEN = pytest.StashKey[dict[str, str]]()
_SHM_CURRENT = pytest.StashKey[tuple[str, frozenset[str]]]()  # the running test, and the entries before it
_IN_SESSIONFINISH = pytest.StashKey[bool]()


# -- /dev/shm left as found ----------------------------------------------------------------
# A media driver's directory takes tens of MB of /dev/shm; a killed process cannot remove its
# own. Where tests kill a child they remove what it left (processes.remove_dead_driver_dirs,
# which ChildProcess and run_process call). This checks they did: the aeron* entries present
# when the session started are recorded; at its end, a new one whose owner process is dead
# fails the run (then it is removed), named with its size and the test it appeared during.
# Entries of live processes (a driver the test process still has open, closed at exit; another
# run on this machine) never count. Entries that appear are noted per test, for the message.

def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_SHM_BASELINE] = aeron_entries()
    session.config.stash[_SHM_FIRST_SEEN] = {}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    before = aeron_entries()
    item.config.stash[_SHM_CURRENT] = (item.nodeid, before)
    try:
        return (yield)
    finally:
        first_seen = item.config.stash.setdefault(_SHM_FIRST_SEEN, {})
        for name in aeron_entries() - before:
            first_seen.setdefault(name, item.nodeid)
        del item.config.stash[_SHM_CURRENT]


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    # Session fixtures still set up now (an interrupted or stopped run) are torn down by the
    # runner's pytest_sessionfinish, after this one: the check must not raise there.
    session.config.stash[_IN_SESSIONFINISH] = True


@pytest.fixture(scope="session", autouse=True)
def _dev_shm_left_as_found(request: pytest.FixtureRequest) -> Iterator[None]:
    """Set up before, so torn down after, every other session fixture (autouse, root conftest)."""
    config = request.config
    baseline = config.stash.setdefault(_SHM_BASELINE, aeron_entries())
    yield
    leftovers = dead_leftovers(baseline)
    if not leftovers:
        return
    recorded: dict[str, str] = config.stash.get(_SHM_FIRST_SEEN, {})
    first_seen = dict(recorded)
    current = config.stash.get(_SHM_CURRENT, None)  # the last test, whose teardown this is
    if current is not None:
        first_seen.update({leftover.path.name: current[0] for leftover in leftovers
                           if leftover.path.name not in current[1] and leftover.path.name not in first_seen})
    kept = remove_leftovers(leftovers)
    message = _leftovers_message(leftovers, first_seen, kept)
    LOG.info("%s", message)  # pytest reports it (below)
    if not config.stash.get(_IN_SESSIONFINISH, False):
        pytest.fail(message, pytrace=False)
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.ensure_newline()
        reporter.write_sep("=", "driver directories of dead processes left in /dev/shm", red=True)
        reporter.write_line(message)
    if request.session.exitstatus == pytest.ExitCode.OK:
        request.session.exitstatus = pytest.ExitCode.TESTS_FAILED


def _leftovers_message(leftovers: list[Leftover], first_seen: dict[str, str], kept: list[Path]) -> str:
    lines = [f"the test run left {len(leftovers)} driver director{'y' if len(leftovers) == 1 else 'ies'} "
             f"of dead processes in {SHM_DIR} ({'removed now' if not kept else 'could not remove them all'}). "
             "A test that kills a child, or whose child can die, must remove what it left: run it with "
             "processes.ChildProcess or processes.run_process, or call "
             "processes.remove_dead_driver_dirs(pid, dirs) once it is reaped."]
    for leftover in leftovers:
        nodeid = first_seen.get(leftover.path.name)
        where = (f"appeared during {nodeid} (test family: {nodeid.split('::', 1)[0]})" if nodeid
                 else "appeared outside any test (at collection, or from another run on this machine)")
        lines.append(f"  {leftover.describe()}: {where}{' - NOT removed' if leftover.path in kept else ''}")
    return "\n".join(lines)


# -- tests of the tricks themselves --------------------------------------------------------
# @pytest.mark.tricks: the test asserts a speed trick itself (a reused object, an adopted
# descriptor, the 4 MiB conductor ring), not the contract it keeps; skipped when
# AERON_PY_NO_TRICKS=1 turned the tricks off (aeron_py._aeron.TRICKS is False), so that the
# rest of the suite shows the contract holds on the public-API fallbacks.

def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    marked = [item for item in items if item.get_closest_marker("tricks") is not None]
    if not marked:
        return
    from aeron_py import _aeron  # only when such a test runs: the extension must be built then

    if _aeron.TRICKS:
        return
    skip = pytest.mark.skip(reason="asserts a speed trick; AERON_PY_NO_TRICKS=1 turned them off")
    for item in marked:
        item.add_marker(skip)


# -- helpers and fixtures ------------------------------------------------------------------


def wait_until(condition: Callable[[], T], timeout: float = 5.0, what: str = "condition",
               step: float = 0.001) -> T:
    """Poll ``condition`` until truthy or raise AssertionError after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(step)


def free_udp_port(host: str = "127.0.0.1") -> int:
    """A UDP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@pytest.fixture
def driver() -> Iterator["object"]:
    from aeron_py import MediaDriver

    with MediaDriver(publication_linger_timeout_ns=0) as d:
        yield d


@pytest.fixture
def aeron(driver: "object") -> Iterator["object"]:
    from aeron_py import Aeron

    with Aeron(driver=driver) as client:
        yield client


@pytest.fixture
def udp_port() -> int:
    return free_udp_port()
