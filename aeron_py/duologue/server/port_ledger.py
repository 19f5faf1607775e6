"""When each duologue port released by the glue can be bound again: the port ledger.

A closed duologue publication keeps its control socket bound while it lingers, and a
closed subscription keeps its socket while an image drains, so a port released a moment
ago may still be bound in the media driver (measured with the driver's 100 ms timer:
see :mod:`.channels`). The ledger remembers, for each released port, when it is bindable
again and in which role it was released; ports of orphaned attempts (adds the driver has
not answered, :mod:`.creation`) are held until the attempt ends. Its :attr:`busy` set is
the core's ``busy_ports`` fact: a new duologue prefers other ports.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["PortLedger"]


class PortLedger:
    """Released ports and when they are bindable again; ports held by orphaned attempts."""

    def __init__(self) -> None:
        self._released: dict[int, tuple[float, str]] = {}  # port -> (bindable again at, "data"/"control")
        self._held: dict[int, int] = {}  # port -> orphaned attempts holding it
        self._busy: set[int] = set()  # released (not yet forgotten) or held

    @property
    def busy(self) -> set[int]:
        """Ports a closed channel of ours may still bind (released and not yet forgotten by
        :meth:`forget_bindable`, or held by an orphaned attempt)."""
        return self._busy

    def release(self, port: int, role: str, bindable_at: float) -> None:
        """``port`` was released in ``role`` (``"data"``/``"control"``); bindable at ``bindable_at``."""
        self._released[port] = (bindable_at, role)
        self._busy.add(port)

    def hold(self, ports: Iterable[int]) -> None:
        """An orphaned attempt may still bind ``ports``: never bindable until :meth:`unhold`."""
        for port in ports:
            self._held[port] = self._held.get(port, 0) + 1
            self._busy.add(port)

    def unhold(self, ports: Iterable[int]) -> None:
        """The orphaned attempt holding ``ports`` ended (its ports were then released)."""
        for port in ports:
            count = self._held.get(port, 0) - 1
            if count > 0:
                self._held[port] = count
            else:
                self._held.pop(port, None)

    def bindable_at(self, port: int, role: str) -> float:
        """When ``port`` can be bound for ``role``; a new publication shares a lingering
        publication's control socket, so control after control is never delayed."""
        if port in self._held:
            return math.inf  # an orphaned attempt may still bind it
        released = self._released.get(port)
        if released is None or released[1] == role == "control":
            return 0.0
        return released[0]

    def forget_bindable(self, now: float) -> None:
        """Forget the released ports that are bindable again (each tick)."""
        self._released = {p: r for p, r in self._released.items() if r[0] > now}
        self._busy = {*self._released, *self._held}
