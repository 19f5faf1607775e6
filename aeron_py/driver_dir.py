"""Is a media driver alive in a directory, and what to do with one left by a dead driver.

A driver directory holds the CnC file, which names the driver's process id and carries
its heartbeat (the conductor stamps it every duty cycle). Aeron refuses to start a driver
in a directory whose heartbeat is younger than the driver timeout (10 s): after a driver
was killed, its directory blocks a new one for those seconds with "Device or resource
busy". :func:`check_driver_dir` tells the cases apart before the driver starts:

* a **live** driver (its process exists, or its heartbeat still moves - a process in
  another pid namespace sharing ``/dev/shm``): :class:`~aeron_py.errors.AeronError`
  naming the process and what to do;
* a **stale** directory (its process is gone and its heartbeat stands still): the new
  driver replaces it (logged);
* no CnC file, an unreadable one, or a heartbeat older than the timeout: Aeron's own
  rules apply.

:func:`driver_active` is ``aeron_is_driver_active``: whether a driver answers in ``dir``.
"""
from __future__ import annotations

import logging
import os
import time

from . import _aeron
from .errors import AeronError

__all__ = ["check_driver_dir", "driver_active"]

logger = logging.getLogger(__name__)

#: Aeron's default driver timeout: a heartbeat older than this is not a live driver's.
DRIVER_TIMEOUT_S = 10.0
#: How long a heartbeat is watched for a move (a quiet driver's duty cycle is at most 1 s).
_WATCH_S = 1.5


def driver_active(dir: str | os.PathLike[str], timeout: float = DRIVER_TIMEOUT_S) -> bool:
    """Whether a media driver in ``dir`` heartbeated within ``timeout`` seconds
    (``aeron_is_driver_active``; False when there is no CnC file)."""
    return bool(_aeron.is_driver_active(str(dir), int(timeout * 1000)))


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, owned by someone else
    return True


def _heartbeat_ms(cnc: _aeron.Cnc) -> int:
    return int(cnc.to_driver_heartbeat())


def check_driver_dir(dir: str) -> bool:
    """Before a driver starts in ``dir``: raise AeronError if a live driver owns it; True when
    it holds a dead driver's stale CnC file (start with ``dir_delete_on_start``), else False."""
    if not os.path.exists(os.path.join(dir, "cnc.dat")):
        return False
    try:
        cnc = _aeron.Cnc(dir, 0)
    except AeronError:
        return False  # being created, or not a CnC file: Aeron's own checks decide
    try:
        pid = int(cnc.constants()["pid"])
        first = _heartbeat_ms(cnc)
        age = (_aeron.epoch_clock() - first) / 1000.0
        if age >= DRIVER_TIMEOUT_S:
            return False  # Aeron treats it as inactive and replaces it
        if pid == os.getpid() or _process_exists(pid):
            raise _live(dir, pid, age, "this process" if pid == os.getpid() else None)
        if _heartbeat_moves(cnc, first):
            raise _live(dir, pid, age, "a process this one cannot see (another pid namespace?)")
    finally:
        cnc.close()
    logger.warning("replacing the stale directory %s of a media driver that died (pid %d, last heartbeat %.1f s ago)",
                   dir, pid, age)
    return True


def _heartbeat_moves(cnc: _aeron.Cnc, first: int) -> bool:
    deadline = time.monotonic() + _WATCH_S
    while time.monotonic() < deadline:
        if _heartbeat_ms(cnc) != first:
            return True
        time.sleep(0.05)  # a duty cycle is at most 1 s, even for a quiet driver
    return False


def _live(dir: str, pid: int, age: float, whose: str | None = None) -> AeronError:
    owner = f"pid {pid}" + (f", {whose}" if whose else "")
    return AeronError(f"a live media driver ({owner}, heartbeat {age:.1f} s ago) already owns {dir}: "
                      "give this driver another directory (or none: a fresh one under /dev/shm), "
                      "or stop that driver first")
