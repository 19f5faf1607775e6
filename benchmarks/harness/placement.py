"""Thread placement of a server and a load process on a 2-core machine (stdlib only).

On two cores, an Echo run at 1,000 duologues has four busy threads: each process's media
driver agent (about 80 % of a core each) and its Python thread. Where the kernel puts them
decides the echo RTT: with each Python thread on the same core as its own driver, every
hand-over between them (an offer to send, a received message to poll) waits for the other
thread's turn on that core, and the RTT p50 is about 8 ms; with each Python thread on the
other process's driver's core, about 4-5 ms (round 11 in docs/benchmarks.md). The kernel
settles on either one per run, which made the RTT p50 bimodal from run to run.

:class:`Placement` pins the threads of the given processes (re-applied every half
second, so threads started later are pinned too):

* ``kernel``: no pinning (what a user gets);
* ``crossed``: the server's driver and the load's Python threads on CPU 1, the load's
  driver and the server's Python threads on CPU 0;
* ``own``: each process on its own CPU (server on 1, load on 0), its driver and its Python
  threads together.
"""
from __future__ import annotations

import logging
import os
import threading
from collections.abc import Mapping
from types import TracebackType

log = logging.getLogger("benchmarks.harness.placement")

MODES = ("kernel", "crossed", "own")
REAPPLY_S = 0.5


def is_driver_thread(name: str) -> bool:
    """The media driver's agent thread (SHARED: ``[conductor, sender, receiver]``, cut to 15
    characters by the kernel) or one of its agents in the other threading modes."""
    return name.startswith(("[conductor", "conductor", "sender", "receiver", "aeron-"))


def cpu_for(mode: str, role: str, name: str) -> int:
    """The CPU of thread ``name`` of the process playing ``role`` ("server" or "load")."""
    on_server_cpu = role == "server"
    if mode == "crossed":
        on_server_cpu = (role == "server") == is_driver_thread(name)
    return 1 if on_server_cpu else 0


def _threads(pid: int) -> list[tuple[int, str]]:
    out = []
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm", encoding="utf-8") as f:
                out.append((int(tid), f.read().strip()))
        except OSError:
            continue  # the thread ended
    return out


class Placement:
    """Pins the threads of ``pids`` ({"server": pid, "load": pid}) by ``mode`` while open."""

    def __init__(self, mode: str, pids: Mapping[str, int]) -> None:
        if mode not in MODES:
            raise ValueError(f"placement must be one of {', '.join(MODES)}, got {mode!r}")
        if mode != "kernel" and (os.cpu_count() or 1) < 2:
            raise ValueError(f"placement {mode!r} needs 2 CPUs")
        self.mode, self.pids = mode, dict(pids)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def apply(self) -> int:
        """Pins every current thread once; returns how many were pinned."""
        pinned = 0
        for role, pid in self.pids.items():
            for tid, name in _threads(pid):
                try:
                    os.sched_setaffinity(tid, {cpu_for(self.mode, role, name)})
                    pinned += 1
                except OSError:
                    continue  # the thread ended meanwhile
        return pinned

    def _run(self) -> None:
        while not self._stop.wait(REAPPLY_S):
            self.apply()

    def __enter__(self) -> Placement:
        if self.mode != "kernel":
            log.info("placement %s: %d threads pinned", self.mode, self.apply())
            self._thread = threading.Thread(target=self._run, name="placement", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
