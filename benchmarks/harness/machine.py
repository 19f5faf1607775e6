"""What the numbers were measured on: machine, load, package versions (stdlib only;
aeron_py is imported only when asked for its versions)."""
from __future__ import annotations

import contextlib
import os
import platform
import resource
import sys
from importlib import metadata
from pathlib import Path
from typing import Any


def _first(path: str, prefix: str) -> str:
    """The value of the first ``prefix: value`` line of a /proc file ("" if none)."""
    with contextlib.suppress(OSError):
        for line in Path(path).read_text().splitlines():
            if line.startswith(prefix):
                return line.split(":", 1)[1].strip()
    return ""


def machine_info() -> dict[str, Any]:
    """Host, CPU and Python of this run."""
    return {
        "hostname": platform.node(), "platform": platform.platform(), "machine": platform.machine(),
        "cpu_model": _first("/proc/cpuinfo", "model name"), "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "python": sys.version.split()[0], "python_implementation": platform.python_implementation(),
    }


def echo_machine_info() -> dict[str, Any]:
    """:func:`machine_info` plus what the Echo benchmarks depend on: memory, the Aeron and
    aeron_py versions, the fd limit and the ephemeral port range."""
    import aeron_py

    return {
        **machine_info(), "mem_total": _first("/proc/meminfo", "MemTotal"),
        "aeron_version": aeron_py.aeron_version(), "aeron_py_version": aeron_py.__version__,
        "fd_limit": resource.getrlimit(resource.RLIMIT_NOFILE)[0],
        "ephemeral_ports": Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split(),
    }


def loadavg() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (None where /proc has none)."""
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return None


def dist_version(name: str) -> str | None:
    """The installed version of distribution ``name`` (None if it is not installed)."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None
