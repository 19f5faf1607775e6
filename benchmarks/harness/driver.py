"""One Aeron C media driver (``aeronmd``) shared by every measurement of a benchmark run.

The driver is Aeron's own ``aeronmd`` from the benchmark build (``c_tools``), configured
only through its environment variables: a unique ``AERON_DIR`` under ``/dev/shm``, SHARED
threading (one driver thread: this machine has 2 cores) and the ``backoff`` idle strategy,
with the directory deleted on start and on shutdown.  Both the C tools (``-p <dir>``) and
the Python clients (``Client(dir=...)``) connect to that directory, so every number in a
run comes from the very same driver process and settings.
"""
from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from aeron_py import _aeron

from .children import aeron_free_env, install_signal_cleanup, orphan_guard
from .paths import LOG_DIR

log = logging.getLogger("benchmarks.harness.driver")

START_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 10.0
HEARTBEAT_FRESH_MS = 5_000

# The settings every measurement shares; AERON_DIR is added per run.
DRIVER_SETTINGS: dict[str, str] = {
    "AERON_THREADING_MODE": "SHARED",
    "AERON_SHARED_IDLE_STRATEGY": "backoff",
    "AERON_DIR_DELETE_ON_START": "true",
    "AERON_DIR_DELETE_ON_SHUTDOWN": "true",
}


class DriverError(RuntimeError):
    """The shared media driver could not be started or died."""


class SharedDriver:
    """Start ``aeronmd`` on a fresh ``/dev/shm`` directory; stop it (bounded) on exit.

    Use as a context manager.  ``client_env()`` is the environment for C tools and Python
    client subprocesses: it carries ``AERON_DIR`` and nothing else Aeron-specific.
    """

    def __init__(self, aeronmd: Path, log_dir: Path) -> None:
        if not aeronmd.is_file():
            raise DriverError(f"aeronmd not found at {aeronmd}: build it with python -m benchmarks.c_tools")
        self.aeronmd = aeronmd
        self.dir = f"/dev/shm/aeron-py-bench-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.settings = dict(DRIVER_SETTINGS, AERON_DIR=self.dir)
        self.log_path = log_dir / f"aeronmd-{Path(self.dir).name}.log"
        self._proc: subprocess.Popen[bytes] | None = None
        log_dir.mkdir(parents=True, exist_ok=True)

    def client_env(self) -> dict[str, str]:
        """Environment for client processes: no inherited AERON_* except this AERON_DIR."""
        return dict(aeron_free_env(), AERON_DIR=self.dir)

    def start(self) -> None:
        """Launch the driver and wait (bounded) until its CnC heartbeat is live."""
        env = dict(aeron_free_env(), **self.settings)
        with open(self.log_path, "wb") as out:
            self._proc = subprocess.Popen(
                orphan_guard([str(self.aeronmd)]), env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self._proc.poll() is not None:
                raise DriverError(f"aeronmd exited with {self._proc.returncode}: {self._log_tail()}")
            if Path(self.dir, "cnc.dat").exists() and self._heartbeat_is_ours():
                log.info("aeronmd pid %d up on %s", self._proc.pid, self.dir)
                return
            time.sleep(0.05)
        self.stop()
        raise DriverError(f"aeronmd not active on {self.dir} within {START_TIMEOUT_S}s: {self._log_tail()}")

    def _heartbeat_is_ours(self) -> bool:
        """True once the CnC file is ready, written by our process and heartbeating."""
        assert self._proc is not None
        try:
            cnc = _aeron.Cnc(self.dir, 200)
        except _aeron.AeronError:
            return False
        try:
            fresh = _aeron.epoch_clock() - cnc.to_driver_heartbeat() < HEARTBEAT_FRESH_MS
            return fresh and cnc.constants()["pid"] == self._proc.pid
        finally:
            cnc.close()

    def check_alive(self) -> None:
        """Raise if the driver process has died."""
        if self._proc is None or self._proc.poll() is not None:
            code = None if self._proc is None else self._proc.returncode
            raise DriverError(f"aeronmd is not running (exit code {code}): {self._log_tail()}")

    def stop(self) -> None:
        """SIGTERM (aeronmd shuts down cleanly and deletes its dir), SIGKILL after a timeout."""
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                log.warning("aeronmd pid %d ignored SIGTERM for %ss: killing it", proc.pid, STOP_TIMEOUT_S)
                proc.kill()
                proc.wait(timeout=STOP_TIMEOUT_S)
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir, ignore_errors=True)

    def _log_tail(self, lines: int = 20) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no driver log)"

    def __enter__(self) -> "SharedDriver":
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()


def run_standalone(measure: Callable[[Any, Any], dict[str, Any]]) -> int:
    """Run one benchmark on its own: build the C tools, start the shared driver, print JSON.

    ``measure(tools, driver)`` does the work (e.g. ``run_pingpong`` with its options bound).
    """
    from benchmarks import c_tools

    install_signal_cleanup()
    tools = c_tools.build_c_tools()
    with SharedDriver(tools.aeronmd, LOG_DIR) as driver:
        result = measure(tools, driver)
    print(json.dumps(result, indent=1))
    return 0
