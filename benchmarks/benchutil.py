"""Shared helpers for the aeron_py-vs-C benchmarks: child processes, ids, statistics.

Every wait here has a deadline and every child process is tracked so it can be stopped
(by its own pid) when the benchmark ends, fails or is interrupted.
"""
from __future__ import annotations

import atexit
import itertools
import json
import logging
import math
import os
import platform
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger("benchmarks.util")

BENCH_DIR = Path(__file__).resolve().parent
LOG_DIR = BENCH_DIR / ".build" / "logs"
RESULTS_DIR = BENCH_DIR / "results"

# Idle modes compared: "spin" = Aeron's busy-spin (the stock C samples' hard-coded idle),
# "yield" = Aeron's yielding idle (C samples rebuilt with the remap, see c_tools).
IDLE_MODES: tuple[str, ...] = ("spin", "yield")

_stream_ids = itertools.count(7001)
_children: list["Child"] = []
_children_lock = threading.Lock()


class BenchError(RuntimeError):
    """A benchmark step failed (a process died, timed out or printed nothing usable)."""


def next_stream_id() -> int:
    """A stream id not used before in this run (lingering publications never collide)."""
    return next(_stream_ids)


def free_udp_ports(count: int) -> list[int]:
    """``count`` distinct UDP ports on 127.0.0.1 that were free a moment ago."""
    socks: list[socket.socket] = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def wait_until(predicate: Callable[[], object], timeout_s: float, what: str, step_s: float = 0.001) -> object:
    """Poll ``predicate`` until it returns a truthy value; raise ``BenchError`` at the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise BenchError(f"timed out after {timeout_s}s waiting for {what}")
        time.sleep(step_s)


def percentiles_us(samples_ns: Sequence[int]) -> dict[str, float]:
    """p50/p90/p99/p99.9/max/mean (microseconds) of RTT samples, nearest-rank."""
    if not samples_ns:
        raise BenchError("no RTT samples to summarise")
    ordered = sorted(samples_ns)
    n = len(ordered)

    def rank(p: float) -> float:
        return ordered[min(n - 1, max(0, math.ceil(p * n) - 1))] / 1000.0

    return {
        "p50": rank(0.50), "p90": rank(0.90), "p99": rank(0.99), "p99_9": rank(0.999),
        "max": ordered[-1] / 1000.0, "mean": sum(ordered) / n / 1000.0, "count": float(n),
    }


def run_rounds(
    label: str, rounds: int, runners: dict[str, Callable[[], dict[str, Any]]], before: Callable[[], None]
) -> dict[str, list[dict[str, Any]]]:
    """Run every implementation ``rounds`` times, alternating them; a failed run is recorded
    as ``{"error": ...}`` instead of aborting the whole benchmark."""
    out: dict[str, list[dict[str, Any]]] = {impl: [] for impl in runners}
    for r in range(rounds):
        for impl, run in runners.items():
            log.info("%s: %s round %d/%d", label, impl, r + 1, rounds)
            try:
                before()
                result = run()
            except BenchError as exc:
                log.error("%s: %s round %d failed: %s", label, impl, r + 1, exc)
                result = {"error": str(exc)}
            out[impl].append(result)
    return out


def median_by_key(dicts: Sequence[dict[str, float]]) -> dict[str, float] | None:
    """Per-key median over several summaries with the same keys (None if there are none)."""
    if not dicts:
        return None
    return {k: statistics.median(d[k] for d in dicts) for k in dicts[0]}


def min_by_key(dicts: Sequence[dict[str, float]]) -> dict[str, float] | None:
    """Per-key minimum (the least disturbed round, for latencies) or None if there are none."""
    if not dicts:
        return None
    return {k: min(d[k] for d in dicts) for k in dicts[0]}


def ratio(a: float | None, b: float | None) -> float | None:
    """``a / b`` rounded, or None when either side is missing or ``b`` is zero."""
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 3)


def machine_info() -> dict[str, object]:
    """What the numbers were measured on."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "hostname": platform.node(), "platform": platform.platform(), "machine": platform.machine(),
        "cpu_model": model, "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "python": sys.version.split()[0], "python_implementation": platform.python_implementation(),
    }


@dataclass
class Line:
    """One stdout line of a child and when (monotonic seconds) it arrived."""

    t: float
    text: str


def orphan_guard(argv: list[str]) -> list[str]:
    """Prefix ``argv`` so the child gets SIGTERM if this process dies without cleaning up
    (``setpriv --pdeathsig``; left as is where setpriv is unavailable)."""
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "TERM", *argv] if setpriv else argv


class Child:
    """A tracked child process whose stdout lines are collected, with arrival times, by a thread.

    stderr goes to a log file under ``benchmarks/.build/logs``.  ``stop()`` sends SIGINT
    (all tools here stop cleanly on it), then SIGKILL after a timeout.
    """

    def __init__(self, name: str, argv: list[str], env: dict[str, str], line_buffered: bool = False) -> None:
        LOG_DIR.mkdir(parents=True, exist_ok=True)
        if line_buffered:  # C stdio buffers a pipe fully; stdbuf makes report lines arrive live
            stdbuf = shutil.which("stdbuf")
            if stdbuf is None:
                raise BenchError("stdbuf (coreutils) is needed to read C tool reports as they happen")
            argv = [stdbuf, "-oL", *argv]
        argv = orphan_guard(argv)
        self.name = name
        self.argv = argv
        self.stderr_path = LOG_DIR / f"{name}-{os.getpid()}-{next(_stream_ids)}.stderr"
        self.lines: list[Line] = []
        self._lock = threading.Lock()
        self._stderr = open(self.stderr_path, "wb")
        log.debug("start %s: %s", name, shlex.join(argv))
        self.proc = subprocess.Popen(
            argv, env=env, stdout=subprocess.PIPE, stderr=self._stderr, stdin=subprocess.DEVNULL,
            start_new_session=True, text=True, bufsize=1,
        )
        self.started = time.monotonic()
        self._reader = threading.Thread(target=self._read, name=f"read-{name}", daemon=True)
        self._reader.start()
        with _children_lock:
            _children.append(self)

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for text in self.proc.stdout:
            with self._lock:
                self.lines.append(Line(time.monotonic(), text.rstrip("\n")))

    def snapshot(self) -> list[Line]:
        """The lines received so far."""
        with self._lock:
            return list(self.lines)

    def text(self) -> str:
        """All stdout so far, one string."""
        return "\n".join(line.text for line in self.snapshot())

    def stderr_tail(self, lines: int = 15) -> str:
        """The last lines of the child's stderr log."""
        if not self._stderr.closed:
            self._stderr.flush()
        try:
            return "\n".join(self.stderr_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return ""

    def wait_for_line(self, predicate: Callable[[str], bool], timeout_s: float, what: str) -> Line:
        """The first stdout line matching ``predicate``; BenchError on exit or deadline."""
        deadline = time.monotonic() + timeout_s
        seen = 0
        while True:
            lines = self.snapshot()
            for line in lines[seen:]:
                if predicate(line.text):
                    return line
            seen = len(lines)
            if self.proc.poll() is not None and not self._reader.is_alive():
                raise BenchError(f"{self.name} exited ({self.proc.returncode}) before {what}: "
                                 f"{self.text()[-800:]} {self.stderr_tail()}")
            if time.monotonic() >= deadline:
                raise BenchError(f"{self.name}: no {what} within {timeout_s}s; stdout: {self.text()[-800:]}")
            time.sleep(0.005)

    def wait(self, timeout_s: float) -> int:
        """Wait for a normal exit; on timeout stop it and raise."""
        try:
            code = self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.stop()
            raise BenchError(f"{self.name} did not finish within {timeout_s:.0f}s; "
                             f"stdout: {self.text()[-800:]}") from None
        self._finish()
        return code

    def stop(self, grace_s: float = 5.0) -> int:
        """SIGINT, then SIGKILL after ``grace_s``; returns the exit code."""
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGINT)
                self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                log.warning("%s (pid %d) ignored SIGINT: killing it", self.name, self.proc.pid)
                self.proc.kill()
                self.proc.wait(timeout=grace_s)
        self._finish()
        return self.proc.returncode

    def _finish(self) -> None:
        self._reader.join(timeout=2.0)
        self._stderr.close()
        with _children_lock:
            if self in _children:
                _children.remove(self)


def stop_all_children() -> None:
    """Stop every child still running (at exit, on error or on a signal)."""
    with _children_lock:
        children = list(_children)
    for child in children:
        try:
            child.stop(grace_s=2.0)
        except Exception:  # noqa: BLE001 - best effort while tearing down
            log.exception("could not stop %s", child.name)


atexit.register(stop_all_children)


def python_child_argv(script: str, *args: str) -> list[str]:
    """argv to run ``benchmarks/<script>`` with this interpreter, unbuffered."""
    return [sys.executable, "-u", str(BENCH_DIR / script), *args]


def install_signal_cleanup() -> None:
    """Turn SIGTERM into SystemExit so ``finally`` blocks and atexit stop the children."""
    def _on_term(signum: int, _frame: object) -> None:
        log.warning("signal %d: stopping the benchmark and its processes", signum)
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _on_term)


def run_standalone(measure: Callable[[Any, Any], dict[str, Any]]) -> int:
    """Run one benchmark on its own: build the C tools, start the shared driver, print JSON.

    ``measure(tools, driver)`` does the work (e.g. ``run_pingpong`` with its options bound).
    """
    import c_tools
    import shared_driver

    install_signal_cleanup()
    tools = c_tools.build_c_tools()
    with shared_driver.SharedDriver(tools.aeronmd, LOG_DIR) as driver:
        result = measure(tools, driver)
    print(json.dumps(result, indent=1))
    return 0


class StopFlag:
    """Set by SIGINT/SIGTERM so a measured loop can end cleanly and report."""

    def __init__(self) -> None:
        self.stopped = False
        signal.signal(signal.SIGINT, self._set)
        signal.signal(signal.SIGTERM, self._set)

    def _set(self, _signum: int, _frame: object) -> None:
        self.stopped = True
