"""The duologues' Aeron channels: created without blocking, paced, closed without leaks.

:class:`DuologueChannels` owns every duologue's channels from the core's
``CreateDuologue`` to its last reply out: it asks the driver for each duologue's
subscription and exclusive publication (asynchronous adds, at most ``max_creating``
in flight, see :mod:`.creation`), holds a CONNECT back until its channels exist,
retries a port the driver still holds, keeps attempts it gave up on as orphans until
the client answers (and closes what they made), flushes the bounded outboxes (the
broadcast's and each duologue's) and closes channels once their last replies are
out.  Its collaborators: the :class:`~.port_ledger.PortLedger` (when a released port is
bindable again), the :class:`~.broadcasts.Broadcasts` (the all-clients outboxes),
:func:`~.creation.start_attempt` (the channels' URIs and adds) and, through the endpoint
filter, who may send to a data port.

It never holds the core: what the core must decide (a send that failed, channels not
made, a port still bound or lost for good) is yielded as a fact (:mod:`.steps`), and the
dispatcher tells the core and executes its answer before the pass resumes.
"""
from __future__ import annotations

import logging
import math
from collections.abc import Generator, Set
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import AddressInUseError, aeron_cause
from .broadcasts import Broadcasts
from .creation import Attempt, OnImage, Pending, start_attempt
from .outbox import Outbox
from .port_ledger import PortLedger
from .steps import CreateFailed, GlueFact, PortsTaken, RetirePort, SendFailed, Steps

if TYPE_CHECKING:
    from ...client import Aeron
    from ...poll_set import PollSet
    from ...publication import Publication
    from ...subscription import Subscription
    from .duologue_keys import DuologueKeyring
    from .endpoint_guard import EndpointGuard
    from .options import ServerOptions
    from ..core.contract import Broadcast, CreateDuologue, SendDuologue
    from ..core.log_summary import LogSummary

__all__ = ["Duologue", "DuologueChannels", "OnImage"]

logger = logging.getLogger("aeron_py.duologue.server")
_loop_logger = logging.getLogger("aeron_py.duologue.server.loop")  # the name its lines have always had


_RETRY_INTERVAL = 0.05  # between attempts to create a duologue
# When the driver lets go of a released port (measured with the 100 ms timer): a
# subscription's socket at once, or after ~1.1 s while one of its images drains
# (5 status-message timeouts); a publication's after its linger plus ~0.4 s.
_SUB_RELEASE, _SUB_WITH_IMAGES_RELEASE, _PUB_RELEASE_EXTRA = 0.05, 1.3, 0.5


def _held_port_wait(image_liveness_timeout: float | None) -> float:
    """How long a port found still bound stays avoided: a departed client's image keeps its
    endpoint (and port) for its liveness timeout, then as long again while it lingers."""
    return 2 * (image_liveness_timeout or 10.0) + 1.0


@dataclass
class Duologue:
    """A live duologue's channels and its outbox."""

    pub: Publication
    sub: Subscription
    data_port: int
    control_port: int
    outbox: Outbox
    ipc: bool = False  # a same-host client's: the "ports" are IPC streams, not bound anywhere


class DuologueChannels:
    """The duologues' channels, outboxes and ports: live, pending, orphaned and closing."""

    def __init__(self, options: ServerOptions, log_summary: LogSummary, aeron: Aeron, guard: EndpointGuard,
                 poll_set: PollSet[int], broadcasts: Broadcasts, on_image: OnImage,
                 keyring: DuologueKeyring | None = None) -> None:
        self._options = options
        self._keyring = keyring  # secure mode: the duologues' keys in the driver
        self._log = log_summary
        self._aeron = aeron
        self._guard = guard
        self._poll_set = poll_set  # every live duologue's subscription, keyed by session
        self._on_image = on_image
        self._broadcast_out = broadcasts  # the all-clients publications' outboxes
        self._outbox_drops = 0  # replies dropped from duologue outboxes already gone
        self._duologues: dict[int, Duologue] = {}
        self._closing: dict[int, Duologue] = {}
        self._dirty: set[int] = set()  # live duologues whose outbox holds replies
        self._pending: dict[int, Pending] = {}
        self._orphans: list[Attempt] = []  # attempts of duologues already gone, still in flight
        self._ports = PortLedger()  # when released ports are bindable again

    # ---- what the others may ask

    def is_pending(self, session: int | None) -> bool:
        """Whether duologue ``session`` waits for its channels."""
        return session in self._pending

    def is_live(self, session: int | None) -> bool:
        """Whether duologue ``session`` has its channels (and is not closed)."""
        return session in self._duologues

    def subscription(self, session: int) -> Subscription | None:
        """The live duologue's subscription."""
        d = self._duologues.get(session)
        return None if d is None else d.sub

    def count(self) -> int:
        """Duologues whose channels are open, pending or still flushing (orphans included)."""
        return len(self._duologues) + len(self._closing) + len(self._pending) + len(self._orphans)

    def settled(self) -> bool:
        """Nothing queued or in flight that needs the loop before traffic comes (quiet mode)."""
        return not (self._dirty or self._pending or self._closing or self._orphans or self._broadcast_out)

    def draining(self) -> bool:
        """Replies still queued for a publication being closed, or adds still unanswered."""
        return bool(self._closing or self._broadcast_out or self._orphans)

    def outbox_drops(self) -> int:
        """Replies dropped from every outbox so far (telemetry)."""
        return self._broadcast_out.dropped + self._outbox_drops + sum(
            d.outbox.dropped for d in (*self._duologues.values(), *self._closing.values()))

    def has_flush_work(self) -> bool:
        """Whether :meth:`flush` has anything to offer (the loop skips the pass otherwise)."""
        return bool(self._broadcast_out or self._dirty or self._closing)

    def has_pending(self) -> bool:
        """Whether :meth:`advance` has a duologue being created (the loop skips the pass otherwise)."""
        return bool(self._pending)

    @property
    def busy_ports(self) -> set[int]:
        """The core's ``busy_ports`` fact: ports a closed channel of ours may still bind
        (:attr:`.PortLedger.busy`); a new duologue prefers other ports."""
        return self._ports.busy

    @property
    def pending_sessions(self) -> Set[int]:
        """The duologues whose channels are being made (their CONNECT held back): a view."""
        return self._pending.keys()

    # ---- the core's actions

    def broadcast(self, action: Broadcast, now: float) -> None:
        """Queue a reply on the all-clients publication; a CONNECT waits for its duologue's channels
        (and is dropped if they could not be made)."""
        session = action.duologue_session
        pending = self._pending.get(session) if session is not None else None
        if pending is not None:
            pending.held.append(action.data)
        elif session is None or session in self._duologues:
            self._push_broadcast(action.data, now, action.ipc)
        else:  # the CONNECT of a duologue whose creation failed (the core's contract: skip it)
            logger.debug("dropping the CONNECT of duologue %d: its channels could not be made", session)

    def create(self, action: CreateDuologue, now: float) -> Steps:
        """A new duologue: pending until its channels exist; the first attempt starts now."""
        pending = Pending(action, now + self._options.create_timeout)
        self._pending[action.session_id] = pending
        if self._keyring is not None and action.keys is not None:
            try:
                self._keyring.install(action)
            except (ValueError, KeyError, RuntimeError) as exc:  # RuntimeError: AeronError
                logger.error("duologue %d: cannot install its keys in the secure transport: %s", action.session_id, exc)
                pending.deadline = now  # given up at once: refused with server full
                return (yield from self._give_up_if_late(pending, now, f"keys not installed: {exc}"))
        return (yield from self._try_create(pending, now))

    def send(self, action: SendDuologue, now: float) -> Steps:
        """Queue a reply on a live duologue; an outbox already full fails the duologue."""
        d = self._duologues.get(action.session_id)
        if d is None:
            return 0
        self._dirty.add(action.session_id)
        if not d.outbox.push(action.data, now + self._options.send_timeout):
            _loop_logger.warning("duologue %d: %d replies waiting; closing it", action.session_id, len(d.outbox))
            yield SendFailed(action.session_id)
        return 0

    def close(self, session: int, had_images: bool, now: float) -> Steps:
        """Close a duologue: pending (its CONNECT dropped with it) or live (once its last replies are out)."""
        if self._keyring is not None:
            self._keyring.retire(session)
        if (yield from self._drop_pending(session, now)):
            return 0  # its CONNECT is dropped with it
        d = self._duologues.pop(session, None)
        if d is None:
            return 0
        self._dirty.discard(session)
        self._poll_set.remove(d.sub)
        d.sub.close()
        if not d.ipc:
            self._guard.own_port(d.data_port, None)
            self._ports.release(d.data_port, "data", now + (_SUB_WITH_IMAGES_RELEASE if had_images else _SUB_RELEASE))
        d.outbox.flush(d.pub, now)
        if d.outbox:
            self._closing[session] = d  # closed once its last replies are out
            if not d.ipc:
                self._ports.release(d.control_port, "control", math.inf)
        else:
            self._outbox_drops += d.outbox.dropped
            self._close_publication(d.pub, None if d.ipc else d.control_port, now)
        return 0

    # ---- each loop iteration

    def flush(self, now: float) -> Steps:
        """Offer queued replies: the broadcast's, the duologues' in ``_dirty`` (O(those)),
        and the closing duologues' last ones (closed once empty or expired)."""
        work = 0
        if self._broadcast_out:
            sent, dropped = self._broadcast_out.flush(now)
            work += sent
            for why in dropped:
                self._log.log(logging.WARNING, "broadcast:dropped", now, "broadcast replies dropped: %s", why)
        for session in list(self._dirty):  # only the duologues with queued replies
            d = self._duologues.get(session)
            if d is None or not d.outbox:
                self._dirty.discard(session)
                continue
            sent, failure = d.outbox.flush(d.pub, now)
            work += sent
            if not d.outbox:
                self._dirty.discard(session)
            if failure is not None:
                logger.warning("duologue %d: reply not sent: %s", session, failure)
                yield SendFailed(session)
        for session, d in list(self._closing.items()):
            sent, failure = d.outbox.flush(d.pub, now)
            work += sent
            if failure is not None or not d.outbox:
                d.outbox.clear()
                self._outbox_drops += d.outbox.dropped
                del self._closing[session]
                self._close_publication(d.pub, None if d.ipc else d.control_port, now)
        return work

    def advance(self, now: float) -> Steps:
        """Every pending duologue: poll its attempt, or start the next one when due."""
        work = 0
        for session, pending in list(self._pending.items()):
            if self._pending.get(session) is not pending:
                continue  # gone meanwhile
            if pending.attempt is not None:
                work += yield from self._advance(pending, now)
            elif now >= min(pending.next_attempt, pending.deadline):
                work += yield from self._try_create(pending, now)
        return work

    def has_orphans(self) -> bool:
        """Whether :meth:`reap_orphans` has attempts to poll (the loop skips the pass otherwise)."""
        return bool(self._orphans)

    def reap_orphans(self, now: float) -> Steps:
        """Close what the driver made for orphaned attempts; number of attempts finished."""
        answered = [attempt for attempt in self._orphans if attempt.poll()]
        for attempt in answered:
            self._orphans.remove(attempt)
            if not attempt.ipc:
                self._ports.unhold((attempt.data_port, attempt.control_port))
            yield from self._discard(attempt, now)
        return len(answered)

    def forget_released(self, now: float) -> None:
        """Forget the released ports that are bindable again (each tick)."""
        self._ports.forget_bindable(now)

    # ---- shutdown

    def drop_all_pending(self, now: float) -> Steps:
        for session in list(self._pending):
            yield from self._drop_pending(session, now)
        return 0

    def abandon(self) -> None:
        """After the shutdown drain: unanswered adds are left to the client's close, and
        the publications of closing duologues are closed with whatever they still hold."""
        if self._orphans:
            logger.warning("%d duologue channel adds still unanswered at shutdown; the client's "
                           "close frees them", len(self._orphans))
            self._orphans.clear()
        for d in self._closing.values():
            d.pub.close()
        self._closing.clear()

    # ---- creation

    def _push_broadcast(self, data: bytes, now: float, ipc: bool) -> None:
        if not self._broadcast_out.push(data, now + self._options.send_timeout, ipc):
            self._log.log(logging.WARNING, "broadcast:full", now,
                          "broadcast outbox full (%d): oldest reply dropped", self._broadcast_out.cap)

    def _in_flight(self) -> int:
        """Duologue channel adds the driver has not answered yet (ours and orphaned)."""
        return len(self._orphans) + sum(1 for p in self._pending.values() if p.attempt is not None)

    def _try_create(self, pending: Pending, now: float) -> Steps:
        """Start one attempt at a pending duologue's channels (never blocks); 1 if started."""
        a, o = pending.action, self._options
        busy = 0.0 if a.ipc else max(self._ports.bindable_at(a.data_port, "data"),
                                     self._ports.bindable_at(a.control_port, "control"))
        if now < busy:  # a closed channel of ours may still hold a port
            if busy > pending.deadline and (yield from self._move(pending, now)):
                return 1  # held longer than this duologue can wait: moved to other ports
            pending.next_attempt = min(busy, now + 10 * _RETRY_INTERVAL)
            return (yield from self._give_up_if_late(pending, now, f"ports {a.data_port}/{a.control_port} still held"))
        if self._in_flight() >= o.max_creating:  # pace: the driver is still busy with earlier adds
            pending.next_attempt = now + _RETRY_INTERVAL
            return (yield from self._give_up_if_late(pending, now, f"{o.max_creating} channel adds already in flight"))
        pending.attempts += 1
        if not a.ipc:
            self._guard.own_port(a.data_port, a.owner_ip)
        pending.attempt = start_attempt(self._aeron, a, o, self._on_image)
        return 1

    def _advance(self, pending: Pending, now: float) -> Steps:
        """Poll a pending duologue's attempt: go live, or schedule a retry; 1 if it moved on."""
        attempt, a = pending.attempt, pending.action
        assert attempt is not None
        if not attempt.poll():
            return (yield from self._give_up_if_late(pending, now, "the media driver has not answered"))
        pending.attempt = None
        if attempt.error is not None:
            made_pub = attempt.pub is not None
            refused = [port for port, made in ((a.data_port, attempt.sub), (a.control_port, attempt.pub)) if made is None]
            yield from self._discard(attempt, now)
            if isinstance(attempt.error, AddressInUseError):
                # still bound in the driver: avoided for a while; the next attempt moves the
                # duologue (once the channels this one made are closed and their ports free)
                for port in refused:
                    self._ports.release(port, "data", now + _held_port_wait(self._options.image_liveness_timeout))
            # A publication of this session that is still lingering makes the retry fail
            # with a session clash: wait until it is gone.
            wait = self._options.linger + _PUB_RELEASE_EXTRA if made_pub else _RETRY_INTERVAL
            pending.next_attempt = now + wait
            self._log.log(logging.INFO, "create_retry", now, "duologue %d: attempt %d to open ports %d/%d failed: %s",
                          a.session_id, pending.attempts, a.data_port, a.control_port, aeron_cause(attempt.error))
            yield from self._give_up_if_late(pending, now, aeron_cause(attempt.error))
            return 1
        assert attempt.sub is not None and attempt.pub is not None
        del self._pending[a.session_id]
        self._poll_set.add(attempt.sub, a.session_id)
        self._duologues[a.session_id] = Duologue(attempt.pub, attempt.sub, a.data_port, a.control_port,
                                                  Outbox(self._options.duologue_outbox_cap), a.ipc)
        for data in pending.held:
            self._push_broadcast(data, now, a.ipc)
        return 1

    def _move(self, pending: Pending, now: float) -> Generator[GlueFact, None, bool]:
        """Ask the core to move a pending duologue off ports the driver still binds: True if
        it moved (the core's new CreateDuologue replaced this pending, whose held CONNECT
        named the old ports, and the new one holds the new CONNECT)."""
        session = pending.action.session_id
        yield PortsTaken(session, frozenset(self._ports.busy))
        return self._pending.get(session) is not pending

    def _give_up_if_late(self, pending: Pending, now: float, why: str) -> Steps:
        if now < pending.deadline:
            return 0
        session = pending.action.session_id
        yield from self._drop_pending(session, now)
        self._log.log(logging.ERROR, "create_failed", now, "duologue %d: could not open its channels within %.1f s (%s)",
                      session, self._options.create_timeout, why)
        yield CreateFailed(session)
        return 1

    # ---- closing and ports

    def _discard(self, attempt: Attempt, now: float) -> Generator[GlueFact, None, None]:
        """Close what an answered attempt made and note when its ports are free again.

        An add the client timed out may still be created by the driver later, where
        nobody can close it: its port is retired for good (see :mod:`.creation`)."""
        if attempt.ipc:  # IPC streams bind nothing: close what was made, nothing to retire
            attempt.close()
            return
        if attempt.timed_out:
            logger.error("the media driver did not answer a duologue channel add within %.1f s; "
                         "ports %d/%d retired", self._options.driver_timeout, attempt.data_port, attempt.control_port)
            for port in (attempt.data_port, attempt.control_port):
                yield RetirePort(port)
        self._guard.own_port(attempt.data_port, None)
        if attempt.sub is not None:
            attempt.sub.close()
            self._ports.release(attempt.data_port, "data", now + _SUB_RELEASE)
        if attempt.pub is not None:
            self._close_publication(attempt.pub, attempt.control_port, now)

    def _drop_pending(self, session: int, now: float) -> Generator[GlueFact, None, bool]:
        """Forget a pending duologue (its held CONNECT too); its attempt is cancelled."""
        pending = self._pending.pop(session, None)
        if pending is None:
            return False
        attempt = pending.attempt
        if attempt is not None:
            if attempt.poll():
                yield from self._discard(attempt, now)
            else:
                self._orphans.append(attempt)  # closed once the driver answers
                if not attempt.ipc:
                    self._ports.hold((attempt.data_port, attempt.control_port))
        return True

    def _close_publication(self, pub: Publication, control_port: int | None, now: float) -> None:
        """Close ``pub``; its ``control_port`` (None: an IPC stream) is bindable after its linger."""
        pub.close()
        if control_port is not None:
            self._ports.release(control_port, "control", now + self._options.linger + _PUB_RELEASE_EXTRA)
