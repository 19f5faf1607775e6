"""A driver directory owned by a live driver, left stale by a killed one, or free
(:mod:`aeron_py.driver_dir`): real drivers, a real killed child process."""
from __future__ import annotations

import logging
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import aeron_py
from aeron_py import Aeron, AeronError, MediaDriver
from processes import remove_dead_driver_dirs

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

CHILD = ("import sys, time; from aeron_py import MediaDriver; d = MediaDriver(sys.argv[1]); "
         "print('up', flush=True); time.sleep(120)")


@pytest.fixture
def driver_dir(tmp_path: Path) -> str:
    return str(tmp_path / "driver")


def test_a_live_driver_of_this_process_is_named_not_clobbered(driver_dir: str) -> None:
    with MediaDriver(driver_dir) as first, Aeron(driver=first) as aeron:
        assert aeron_py.driver_active(driver_dir)
        with pytest.raises(AeronError, match=r"a live media driver \(pid \d+, this process.*already owns"):
            MediaDriver(driver_dir)
        assert aeron.add_publication("aeron:ipc", 7) is not None  # the first one is untouched
    assert not aeron_py.driver_active(driver_dir)


def test_a_killed_drivers_directory_is_taken_over_and_a_live_ones_is_refused(
        driver_dir: str, caplog: pytest.LogCaptureFixture) -> None:
    child = subprocess.Popen([sys.executable, "-c", CHILD, driver_dir], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "up"
        with pytest.raises(AeronError, match=rf"pid {child.pid}, heartbeat .* already owns"):
            MediaDriver(driver_dir)  # alive in another process
        child.send_signal(signal.SIGKILL)
        child.wait(10)
    finally:
        child.kill()
        child.wait(10)
        remove_dead_driver_dirs(child.pid)  # driver_dir itself (in tmp_path) is what this test takes over
    with caplog.at_level(logging.WARNING, logger="aeron_py.driver_dir"):
        with MediaDriver(driver_dir) as driver, Aeron(driver=driver) as aeron:  # Aeron alone: busy for 10 s
            sub = aeron.add_subscription("aeron:ipc", 8)
            pub = aeron.add_publication("aeron:ipc", 8)
            assert pub.offer_until(b"after", timeout=5) > 0 and sub is not None
    assert f"stale directory {driver_dir} of a media driver that died (pid {child.pid}" in caplog.text


def test_driver_active_is_false_without_a_driver(driver_dir: str) -> None:
    assert not aeron_py.driver_active(driver_dir)
    assert not aeron_py.driver_active(driver_dir, timeout=0.1)
