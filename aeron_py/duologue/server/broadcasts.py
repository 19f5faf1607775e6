"""The all-clients publications' replies: one bounded outbox each (UDP, and IPC when served).

Every answer to a HELLO (a CONNECT, an ERROR) goes out on the all-clients publication of
the channel the HELLO came on: the UDP broadcast, or the IPC broadcast of same-host
clients. Each has its own :class:`~.outbox.Outbox`, so a slow or absent reader of one
never delays the other; replies that miss their deadline are dropped (a client re-sends
its HELLO every second until answered).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .outbox import Outbox

if TYPE_CHECKING:
    from ...publication import Publication

__all__ = ["Broadcasts"]


class Broadcasts:
    """The all-clients publications and the replies waiting for them."""

    def __init__(self, udp: Publication, cap: int, ipc: Publication | None = None) -> None:
        self._udp_out = Outbox(cap)
        self._ipc_out: Outbox | None = None
        self._lanes: dict[bool, tuple[Publication, Outbox]] = {False: (udp, self._udp_out)}
        if ipc is not None:
            self._ipc_out = Outbox(cap)
            self._lanes[True] = (ipc, self._ipc_out)

    def __bool__(self) -> bool:
        """Whether a reply waits for its publication (asked on every pass of the server's
        loop: no generator, no loop)."""
        return bool(self._udp_out) or (self._ipc_out is not None and bool(self._ipc_out))

    @property
    def cap(self) -> int:
        return self._lanes[False][1].cap

    @property
    def dropped(self) -> int:
        """Replies dropped so far (full outbox or missed deadline)."""
        return sum(outbox.dropped for _, outbox in self._lanes.values())

    def push(self, data: bytes, deadline: float, ipc: bool) -> bool:
        """Queue a reply for the UDP or (``ipc``) the IPC broadcast; False when its outbox was
        full and dropped its oldest reply. A reply for IPC without IPC channels is dropped."""
        lane = self._lanes.get(ipc)
        if lane is None:
            return False
        return lane[1].push(data, deadline)

    def flush(self, now: float) -> tuple[int, list[str]]:
        """Offer what waits: (replies sent, why replies were dropped)."""
        sent, failures = 0, []
        for pub, outbox in self._lanes.values():
            if outbox:
                done, failure = outbox.flush(pub, now)
                sent += done
                if failure is not None:
                    failures.append(failure)
        return sent, failures
