"""The duologues and their resources: the one place that opens and closes a duologue.

A duologue takes two ports, a session id (two in secure mode: one per direction, each
with its own key), one per-IP count and a due time when its
CONNECT is sent (:meth:`DuologueTable.open`), and gives every one of them back in
:meth:`DuologueTable.close`, whatever the reason.  The table also indexes duologues
still waiting for their client by the HELLO that opened them (a repeated HELLO gets
the same CONNECT again) and counts closes per reason.
"""
from __future__ import annotations

import logging
import random
from collections import Counter
from collections.abc import Set

from .contract import Action, CloseDuologue, CloseReason, Event, ServerConfig
from .deadlines import Deadlines
from .per_ip import PerIpCounter
from .ports import AllocationError, PortAllocator
from .protocol import IPC_SOURCE, IPC_STREAM_BASE
from .records import DuologueRecord
from .sessions import SessionAllocator

__all__ = ["DuologueTable", "OutOfResources"]

logger = logging.getLogger("aeron_py.duologue.core.server")


class OutOfResources(Exception):
    """No duologue can be opened now; ``cause`` names what ran out (``no_ports``, ``no_session_ids``)."""

    def __init__(self, cause: str) -> None:
        super().__init__(cause)
        self.cause = cause


class DuologueTable:
    """Live duologues by session id, with the allocators, per-IP counts and due times they hold."""

    def __init__(self, config: ServerConfig, rng: random.Random | None = None) -> None:
        self._config = config
        self.ports = PortAllocator(config.clients_base_port, config.max_clients, rng)
        # same-host IPC duologues take two streams instead of two ports
        self.ipc_streams = (PortAllocator(IPC_STREAM_BASE, config.max_ipc_clients, rng)
                            if config.max_ipc_clients else None)
        self.sessions = SessionAllocator(config.session_min, config.session_max, rng)
        self.per_ip = PerIpCounter(config.ipv6_prefix)
        # When each duologue must be looked at: its expiry while no client has joined, then
        # (idle_timeout) the earliest it can be idle; tick() visits only what is due.
        self.deadlines: Deadlines[int] = Deadlines()
        self.closes: Counter[str] = Counter()
        self._records: dict[int, DuologueRecord] = {}
        # (initial image id, key) -> duologue still waiting for its client: a repeated HELLO
        # (clients re-send every second until answered) gets the same CONNECT again.
        self._awaiting: dict[tuple[int, int | bytes], int] = {}
        self._opened_by: dict[int, set[int]] = {}  # initial image id -> its duologues still awaiting

    def __len__(self) -> int:
        return len(self._records)

    @property
    def ipc_count(self) -> int:
        """Duologues of same-host IPC clients (``max_ipc_clients`` bounds them)."""
        return self.per_ip.count(IPC_SOURCE)

    @property
    def network_count(self) -> int:
        """Duologues of clients over UDP (``max_clients`` bounds them)."""
        return len(self._records) - self.ipc_count

    def _allocator(self, ip: str) -> PortAllocator:
        """Where ``ip``'s duologues take their two ports (IPC: streams)."""
        if ip != IPC_SOURCE:
            return self.ports
        if self.ipc_streams is None:
            raise OutOfResources("no_ipc")
        return self.ipc_streams

    def get(self, session_id: int) -> DuologueRecord | None:
        return self._records.get(session_id)

    def records(self) -> list[DuologueRecord]:
        """The live duologues, copied (safe to close them while iterating; one C call under the GIL)."""
        return list(self._records.values())

    def awaiting(self, image_id: int, key: int | bytes) -> DuologueRecord | None:
        """The duologue a HELLO ``key`` (secure: its message 1) from initial image ``image_id``
        opened, while it awaits its client."""
        session = self._awaiting.get((image_id, key))
        return self._records.get(session) if session is not None else None

    def awaiting_from(self, image_id: int) -> list[DuologueRecord]:
        """The duologues HELLOs of initial image ``image_id`` opened that still await their client."""
        return [self._records[s] for s in self._opened_by.get(image_id, ())]

    def oldest_unjoined(self) -> DuologueRecord | None:
        """The network duologue that has waited longest for its client (the awaiting index
        keeps opening order), or None; IPC duologues hold no network place to reclaim."""
        for session in self._awaiting.values():
            d = self._records.get(session)
            if d is not None and d.owner_ip != IPC_SOURCE:
                return d
        return None

    def open(self, ip: str, initial_session: int, hello: tuple[int, int | bytes], now: float,
             busy_ports: Set[int], *, secure: bool = False) -> DuologueRecord:
        """Take two ports (``busy_ports`` avoided; an IPC client: two streams), a session id
        (secure: two) and a per-IP count; raises :class:`OutOfResources`."""
        allocator = self._allocator(ip)
        try:
            data_port, control_port = allocator.allocate(2, busy_ports if allocator is self.ports else frozenset())
        except AllocationError as error:
            logger.error("port allocator out of ports with %d duologues: %s", len(self._records), error)
            raise OutOfResources("no_ports") from None
        sessions: list[int] = []
        try:
            while len(sessions) < (2 if secure else 1):
                sessions.append(self.sessions.allocate())
        except AllocationError as error:
            for port in (data_port, control_port):
                allocator.free(port)
            for taken in sessions:
                self.sessions.free(taken)
            logger.error("session allocator exhausted: %s", error)
            raise OutOfResources("no_session_ids") from None
        session = sessions[0]
        self.per_ip.increment(ip)
        self.deadlines.schedule(session, now + self._config.expiry)
        d = DuologueRecord(session, initial_session, ip, data_port, control_port, now, now, hello=hello,
                           client_session=sessions[1] if secure else None)
        self._records[session] = d
        self._awaiting[hello] = session
        self._opened_by.setdefault(hello[0], set()).add(session)
        return d

    def move(self, d: DuologueRecord, busy_ports: Set[int]) -> bool:
        """Two ports for ``d`` drawn again, ``busy_ports`` avoided (a port of its old pair
        that works may be drawn again); False when only its old pair can come back."""
        old = (d.data_port, d.control_port)
        self.ports.free(d.data_port)
        self.ports.free(d.control_port)
        d.data_port, d.control_port = self.ports.allocate(2, busy_ports)  # two were just freed
        d.moves += 1
        return {d.data_port, d.control_port} != set(old)

    def forget_hello(self, d: DuologueRecord) -> None:
        """``d`` has its client: a repeated HELLO no longer finds it."""
        if d.hello is not None:
            self._awaiting.pop(d.hello, None)
            sessions = self._opened_by.get(d.hello[0])
            if sessions is not None:
                sessions.discard(d.session_id)
                if not sessions:
                    del self._opened_by[d.hello[0]]
            d.hello = None

    def close(self, d: DuologueRecord, reason: CloseReason, now: float) -> list[Action]:
        """The one place that deletes a duologue and returns all its resources."""
        del self._records[d.session_id]
        self.deadlines.cancel(d.session_id)
        self.forget_hello(d)
        allocator = self._allocator(d.owner_ip)
        allocator.free(d.data_port)
        allocator.free(d.control_port)
        self.sessions.free(d.session_id)
        if d.client_session is not None:
            self.sessions.free(d.client_session)
        self.per_ip.decrement(d.owner_ip)
        self.closes[reason.value] += 1
        lifetime = max(0.0, now - d.created_at)
        logger.info("duologue %d of %s closed: %s after %.3f s", d.session_id, d.owner_ip,
                    reason.value, lifetime)
        return [CloseDuologue(d.session_id, reason),
                Event("duologue_closed", {"ip": d.owner_ip, "session_id": d.session_id,
                                          "reason": reason.value, "lifetime_s": lifetime,
                                          "msgs_in": d.msgs_in, "msgs_out": d.msgs_out,
                                          "bytes_in": d.bytes_in, "bytes_out": d.bytes_out})]
