"""Measure a running process from outside: per-thread CPU, memory, driver-directory disk
use, the driver's mapped-bytes counter, and samplers (py-spy for Python stacks, perf for
native symbols) with bounded waits.

Stdlib only (py-spy and perf are optional executables; aeron_py is imported only by
:func:`mapped_counter`).
"""
from __future__ import annotations

import contextlib
import logging
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

log = logging.getLogger("benchmarks.harness.probes")
_TICK = os.sysconf("SC_CLK_TCK")


def thread_times(pid: int) -> dict[str, float]:
    """CPU seconds (utime + stime) per thread name (``comm``) of ``pid``; ``"<process>"``
    is the whole process (also threads that already ended)."""
    out: dict[str, float] = {}

    def ticks(path: str) -> float:
        fields = Path(path).read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICK

    out["<process>"] = ticks(f"/proc/{pid}/stat")
    with contextlib.suppress(FileNotFoundError):
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, IndexError, ValueError):
                comm = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
                out[comm] = out.get(comm, 0.0) + ticks(f"/proc/{pid}/task/{tid}/stat")
    return out


def cpu_percent(pids: dict[str, int], seconds: float) -> dict[str, dict[str, float]]:
    """Per process (by label) and thread name, % of one core over the next ``seconds``."""
    before = {label: thread_times(pid) for label, pid in pids.items()}
    start = time.monotonic()
    time.sleep(seconds)
    wall = time.monotonic() - start
    after = {label: thread_times(pid) for label, pid in pids.items()}
    return {label: {name: round(100 * (after[label][name] - before[label].get(name, 0.0)) / wall, 2)
                    for name in after[label]} for label in pids}


def driver_python_seconds(pid: int) -> dict[str, float]:
    """CPU seconds of a process split into ``python`` (its live non-driver threads) and
    ``driver`` (everything else: Aeron's agent threads, also ones that already ended);
    NaN once the process is gone."""
    try:
        times = thread_times(pid)
    except OSError:
        return {"driver": math.nan, "python": math.nan}
    # Aeron names its agent threads "[conductor, ...]"
    python = sum(v for name, v in times.items() if name != "<process>" and not name.startswith("["))
    return {"driver": times["<process>"] - python, "python": python}


def driver_python_percent(pids: Sequence[int], seconds: float) -> list[dict[str, float]]:
    """Each process's CPU use over the next ``seconds``, split into driver and Python
    threads (100 = one core)."""
    before = [driver_python_seconds(pid) for pid in pids]
    time.sleep(seconds)
    after = [driver_python_seconds(pid) for pid in pids]
    return [{k: round(100 * (a[k] - b[k]) / seconds, 1) for k in a} for a, b in zip(after, before)]


def process_memory(pid: int) -> dict[str, int]:
    """VmRSS / RssAnon / RssShmem of a process, in bytes (empty if it is gone)."""
    out: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssShmem"):
                out[key] = int(value.split()[0]) * 1024
    return out


def driver_log_usage(directory: str) -> dict[str, int]:
    """Log buffers present in a driver directory (what the driver really has mapped):
    publications, images, their apparent and real (``st_blocks``) bytes, and the whole
    directory's apparent bytes."""
    out = {"publications": 0, "images": 0, "log_bytes": 0, "log_blocks_bytes": 0, "dir_bytes": 0}
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(directory):
            if entry.is_file():
                out["dir_bytes"] += entry.stat().st_size
    for sub in ("publications", "images"):
        with contextlib.suppress(FileNotFoundError):
            for entry in os.scandir(os.path.join(directory, sub)):
                with contextlib.suppress(FileNotFoundError):
                    st = entry.stat()
                    out[sub] += 1
                    out["log_bytes"] += st.st_size
                    out["log_blocks_bytes"] += st.st_blocks * 512
    out["dir_bytes"] += out["log_bytes"]
    return out


def mapped_counter(directory: str) -> int:
    """The driver's 'Bytes currently mapped' system counter."""
    from aeron_py.stat import DriverStat

    with DriverStat(directory, timeout=2.0) as stat:
        return int(stat.system_counters()["Bytes currently mapped"])


def dir_usage(directory: str) -> dict[str, int]:
    """Files under a driver directory: count, apparent bytes, real bytes (st_blocks * 512,
    what ``du`` counts), and log buffers per kind."""
    out = {"files": 0, "apparent_bytes": 0, "real_bytes": 0, "publications": 0, "images": 0}
    for root, _dirs, files in os.walk(directory):
        kind = os.path.basename(root)
        for name in files:
            with contextlib.suppress(FileNotFoundError):
                st = os.stat(os.path.join(root, name))
                out["files"] += 1
                out["apparent_bytes"] += st.st_size
                out["real_bytes"] += st.st_blocks * 512
                if kind in ("publications", "images"):
                    out[kind] += 1
    return out


def shm_free_bytes() -> int:
    st = os.statvfs("/dev/shm")
    return st.f_bavail * st.f_frsize


def py_spy_path() -> str | None:
    """py-spy next to this interpreter (the venv's), else on PATH."""
    local = Path(sys.executable).with_name("py-spy")
    return str(local) if local.exists() else shutil.which("py-spy")


def py_spy_top(pid: int, seconds: float, out: Path, rate: int = 100, top: int = 12) -> dict[str, Any]:
    """Sample ``pid``'s Python threads with ``py-spy record --gil`` (non-blocking) and
    summarise the top functions by self and by inclusive share of the samples.

    ``samples_pct_of_expected`` (samples / (rate x seconds)) is no CPU share: py-spy
    counted ~99 % for a loop that /proc showed at 12 % of a core, so read CPU shares
    from :func:`cpu_percent` and only the relative shares from here."""
    exe = py_spy_path()
    if exe is None:
        return {"error": "py-spy not installed (pip install py-spy)"}
    argv = [exe, "record", "-p", str(pid), "-d", str(max(1, round(seconds))), "-r", str(rate), "-f", "raw",
            "--nonblocking", "--gil", "-o", str(out)]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 30)
    except subprocess.TimeoutExpired:
        return {"error": "py-spy timed out"}
    if done.returncode != 0 or not out.exists():
        return {"error": f"py-spy exit {done.returncode}: {done.stderr.strip()[-300:]}"}
    self_n: Counter[str] = Counter()
    incl: Counter[str] = Counter()
    total = 0
    for line in out.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        n = int(count)
        frames = [re.sub(r":\d+\)$", ")", f) for f in stack.split(";") if f and not f.startswith("process ")
                  and not f.startswith("thread ")]
        if not frames:
            continue
        total += n
        self_n[frames[-1]] += n
        for frame in set(frames):
            incl[frame] += n
    expected = rate * seconds
    return {"samples": total, "samples_pct_of_expected": round(100 * total / expected, 1) if expected else None,
            "top_self": [(f, round(100 * n / total, 1)) for f, n in self_n.most_common(top)] if total else [],
            "top_inclusive": [(f, round(100 * n / total, 1)) for f, n in incl.most_common(top)] if total else [],
            "raw": str(out)}


def perf_top(pid: int, seconds: float, out: Path, top: int = 15) -> dict[str, Any]:
    """``perf record -e cpu-clock`` on ``pid`` (every thread) and the top symbols by
    thread name; {"error": ...} where perf is missing or not permitted."""
    perf = shutil.which("perf")
    if perf is None:
        return {"error": "perf not installed"}
    try:
        rec = subprocess.run([perf, "record", "-q", "-e", "cpu-clock", "-F", "499", "-p", str(pid), "-o", str(out),
                              "--", "sleep", str(seconds)], capture_output=True, text=True, timeout=seconds + 30)
        if rec.returncode != 0:
            return {"error": f"perf record exit {rec.returncode}: {rec.stderr.strip()[-300:]}"}
        rep = subprocess.run([perf, "report", "-i", str(out), "--stdio", "--sort", "comm,dso,symbol",
                              "--percent-limit", "0.5"], capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        return {"error": "perf timed out"}
    rows: list[dict[str, Any]] = []
    for line in rep.stdout.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\S.*?)\s{2,}(\S+)\s+\[[.k]\]\s+(.*)$", line)
        if m:
            symbol = re.sub(r"(\s+-)+\s*$", "", m.group(4)).strip()
            rows.append({"pct": float(m.group(1)), "thread": m.group(2).strip(), "dso": m.group(3), "symbol": symbol})
    by_thread: dict[str, float] = {}
    for row in rows:
        by_thread[row["thread"]] = by_thread.get(row["thread"], 0.0) + row["pct"]
    return {"top": rows[:top], "by_thread_pct": {k: round(v, 1) for k, v in sorted(by_thread.items(), key=lambda kv: -kv[1])},
            "data": str(out)}


def log_warnings(path: Path, top: int = 10) -> dict[str, Any]:
    """WARNING/ERROR lines of a child's stderr log, counted by message (numbers masked)."""
    counts: Counter[str] = Counter()
    with contextlib.suppress(OSError):
        for line in path.read_text(errors="replace").splitlines():
            m = re.search(r" (WARNING|ERROR) [\w.]+: (.*)$", line)
            if m:
                counts[f"{m.group(1)} {re.sub(r'[0-9]+', 'N', m.group(2))[:120]}"] += 1
    return dict(counts.most_common(top))
