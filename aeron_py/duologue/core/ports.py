"""Random port allocation for duologues (docs/spec/echo2.md §3 "Port allocator").

Ports come from ``[base, base + 2 * max_clients)`` (two per duologue), are handed out
in random order and never twice until freed.  Allocation and freeing are O(1): the free
ports live in a list, a random index is swapped with the last element and popped.

A free port may still be bound for a moment by a channel that was just closed (a
lingering publication, an image draining): ``allocate(busy=...)``, given the set of
such ports (a fact the glue keeps), draws again, a
bounded number of times, when the drawn port is busy, so under churn the ports freed
longest ago come back first while the choice stays random.
"""

from __future__ import annotations

import random
from collections.abc import Set

from ...validation import require_int

#: Draws per port before a busy one is handed out anyway.
_BUSY_DRAWS = 16


class AllocationError(Exception):
    """Asked for more ports or session ids than are currently free."""


class PortAllocator:
    """Hands out the ports ``[base_port, base_port + 2 * max_clients)`` at random."""

    def __init__(self, base_port: int, max_clients: int, rng: random.Random | None = None) -> None:
        require_int("base_port", base_port)
        require_int("max_clients", max_clients, min=1)
        top = base_port + 2 * max_clients - 1
        if not 1 <= base_port <= 65535:
            raise ValueError(f"base port {base_port} is outside [1, 65535]")
        if not 1 <= top <= 65535:
            raise ValueError(
                f"top port {top} (base {base_port} + 2 * {max_clients} clients - 1) "
                "is outside [1, 65535]"
            )
        self._base = base_port
        self._top = top
        self._rng = rng if rng is not None else random.SystemRandom()
        self._free: list[int] = list(range(base_port, top + 1))
        self._in_use: set[int] = set()
        self._retired: set[int] = set()

    @property
    def capacity(self) -> int:
        """Total number of ports managed (``2 * max_clients``)."""
        return self._top - self._base + 1

    @property
    def available(self) -> int:
        """Number of ports that can still be allocated."""
        return len(self._free)

    @property
    def in_use(self) -> int:
        """Number of ports currently allocated."""
        return len(self._in_use)

    def __contains__(self, port: object) -> bool:
        """True when ``port`` is currently allocated."""
        return port in self._in_use

    def allocate(self, count: int, busy: Set[int] = frozenset()) -> list[int]:
        """Return ``count`` distinct free ports in random order (all or nothing).

        A port in ``busy``: prefer another free port (at most ``_BUSY_DRAWS`` draws)."""
        require_int("port count", count, min=0)
        if count > len(self._free):
            raise AllocationError(
                f"asked for {count} ports but only {len(self._free)} of "
                f"[{self._base}, {self._top}] are free"
            )
        ports: list[int] = []
        aside: list[int] = []
        for _ in range(count):
            port = self._draw()
            draws = 1
            # draw again only while the ports still to hand out can come without `aside`
            while (port in busy and draws < _BUSY_DRAWS
                   and len(self._free) >= count - len(ports)):
                aside.append(port)
                port = self._draw()
                draws += 1
            self._in_use.add(port)
            ports.append(port)
        self._free.extend(aside)
        return ports

    def _draw(self) -> int:
        index = self._rng.randrange(len(self._free))
        self._free[index], self._free[-1] = self._free[-1], self._free[index]
        return self._free.pop()

    def free(self, port: int) -> None:
        """Return an allocated port; freeing a port twice or a foreign port raises."""
        if port not in self._in_use:
            in_range = isinstance(port, int) and self._base <= port <= self._top
            where = "not allocated (double free?)" if in_range else (
                f"outside [{self._base}, {self._top}]"
            )
            raise ValueError(f"cannot free port {port!r}: {where}")
        self._in_use.remove(port)
        if port not in self._retired:
            self._free.append(port)

    @property
    def retired(self) -> int:
        """Number of ports taken out of service by :meth:`retire`."""
        return len(self._retired)

    def retire(self, port: int) -> None:
        """Never hand ``port`` out again (it is, or may become, bound by someone else).

        A free port leaves the free list at once; an allocated one when it is freed.
        """
        if not (isinstance(port, int) and self._base <= port <= self._top):
            raise ValueError(f"cannot retire port {port!r}: outside [{self._base}, {self._top}]")
        if port in self._retired:
            return
        self._retired.add(port)
        if port not in self._in_use:
            self._free.remove(port)
