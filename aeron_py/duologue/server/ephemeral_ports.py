"""Duologue ports inside the kernel's ephemeral range: taken by other sockets at random.

The kernel hands ports of ``net.ipv4.ip_local_port_range`` (Linux: 32768-60999 by
default) to every socket bound to port 0 on the host, the clients of a load test on the
same machine included.  A duologue port inside that range is sooner or later bound by
someone else; the driver then refuses the duologue's channel ("Address already in use")
and the server moves the duologue to other ports, which costs its client time (under a
3,000-client load on one machine, hundreds of such moves and client timeouts).
:func:`warn_if_ephemeral` says so at start, with what to do.
"""
from __future__ import annotations

import logging
from pathlib import Path

__all__ = ["ephemeral_range", "reserved_ports", "warn_if_ephemeral"]

logger = logging.getLogger("aeron_py.duologue.server")

PORT_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
RESERVED = Path("/proc/sys/net/ipv4/ip_local_reserved_ports")


def ephemeral_range(path: Path = PORT_RANGE) -> tuple[int, int] | None:
    """The kernel's ephemeral port range (inclusive), or None where it cannot be read."""
    try:
        low, high = (int(word) for word in path.read_text().split())
    except (OSError, ValueError):
        return None
    return low, high


def reserved_ports(path: Path = RESERVED) -> set[int]:
    """Ports reserved out of the ephemeral range (``"8080,9000-9100"``), or none."""
    try:
        text = path.read_text().strip()
    except OSError:
        return set()
    ports: set[int] = set()
    for part in filter(None, text.split(",")):
        first, _, last = part.partition("-")
        try:
            ports.update(range(int(first), int(last or first) + 1))
        except ValueError:
            return set()
    return ports


def warn_if_ephemeral(base: int, count: int, port_range: Path = PORT_RANGE, reserved: Path = RESERVED) -> int:
    """Log a warning when duologue ports ``[base, base + count)`` include ephemeral ports
    not reserved; returns how many do."""
    span = ephemeral_range(port_range)
    if span is None:
        return 0
    low, high = max(base, span[0]), min(base + count - 1, span[1])
    if low > high:
        return 0
    exposed = (high - low + 1) - len(reserved_ports(reserved) & set(range(low, high + 1)))
    if exposed > 0:
        logger.warning(
            "%d duologue ports (%d-%d of %d-%d) are in the kernel's ephemeral port range %d-%d (%s): "
            "other sockets on this host may take them, and each duologue that meets one moves to other ports, "
            "which delays its client. Choose --base-port so that the duologue ports end below %d, or reserve "
            "them (sysctl net.ipv4.ip_local_reserved_ports=%d-%d)",
            exposed, low, high, base, base + count - 1, span[0], span[1], port_range, span[0], low, high)
    return max(0, exposed)
