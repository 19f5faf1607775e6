"""Sans-I/O Echo 2.0 server (docs/spec/echo2.md §3 rules, §4 decisions).

:class:`DuologueServerCore` never touches Aeron, sockets, threads or clocks.  The glue
feeds it events (image up/down, message received, send failed, clock tick) together
with ``now`` (monotonic seconds) and executes the returned actions **in order**:

* :class:`CreateDuologue` - create the duologue publication + subscription.  If that
  fails, call :meth:`DuologueServerCore.create_failed` and skip every later
  :class:`Broadcast` whose ``duologue_session`` is that session.  If a port is still
  bound in the driver, :meth:`DuologueServerCore.ports_taken` may move the duologue: forget
  its held CONNECT and execute the new ``CreateDuologue`` and CONNECT instead.
* :class:`Broadcast` - offer bytes on the all-clients publication.
* :class:`SendDuologue` - offer bytes on a duologue publication; if it cannot be sent
  within the glue's deadline, call :meth:`DuologueServerCore.send_failed`.
* :class:`CloseDuologue` - (after flushing earlier sends) close that duologue's
  publication + subscription.  Must tolerate a partially created duologue.
* :class:`RejectImage` - reject the image where the driver supports it.
* :class:`Event` - telemetry; ``fields`` always has ``ip``.  Kinds: ``hello`` (every
  HELLO), ``reject`` (every HELLO answered with ERROR, and every rejected image:
  ``reason`` is the wire reason or None, ``cause`` the detail), ``blocklist_hit``
  (in addition to ``reject``), ``duologue_created``, ``client_connected``
  (``wrong_ip`` flag), ``bad_message`` (duologue), ``duologue_closed``.

Contract with the glue: image-available events precede that image's messages (a
HELLO from an unknown image raises :class:`CoreUsageError`).  Events for a duologue
that is already closed are stale and ignored (logged), because the glue may still
deliver them after executing a :class:`CloseDuologue`.

Resources (two ports, the session id, one per-IP count) are taken only when a
CONNECT is sent and are returned by the single :meth:`~.duologues.DuologueTable.close`
path, whatever the reason.

Where the rules live: HELLO admission (the all-clients channel) in
:mod:`.hello_admission`, the duologues and their resources in :mod:`.duologues`, the
records in :mod:`.records`, the types the glue sees in :mod:`.contract`; this module
holds the duologues' rules, time and shutdown, and composes the two.
Work is proportional to activity: :meth:`DuologueServerCore.tick` visits only the
duologues whose deadline (:mod:`.deadlines`) is due.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Set
from types import MappingProxyType

from .duologues import DuologueTable
from .hello_admission import HelloAdmission
from .large_terms import LargeTermBudget
from .log_summary import LogSummary
from .per_ip import canonical_ip
from .reclaim import Reclaim
from .records import DuologueRecord
from .protocol import (
    ERROR_BAD_MESSAGE_DUOLOGUE,
    IPC_SOURCE,
    image_source,
    CoreUsageError,
    Reason,
    crypt,
    format_connect,
    format_error,
)
from .contract import (
    DEFAULT_MAX_IMAGE_TERM_LENGTH,
    DEFAULT_REFUSAL_INTERVAL,
    Action,
    Broadcast,
    CloseDuologue,
    CloseReason,
    CreateDuologue,
    Deliver,
    DuologueInfo,
    Event,
    RejectImage,
    SendDuologue,
    ServerConfig,
    ServerStats,
)
__all__ = ["DEFAULT_MAX_IMAGE_TERM_LENGTH", "DEFAULT_REFUSAL_INTERVAL", "Action", "Broadcast", "CloseDuologue",
           "CloseReason", "CreateDuologue", "Deliver", "DuologueInfo", "DuologueServerCore", "Event", "RejectImage", "SendDuologue",
           "ServerConfig", "ServerStats"]

logger = logging.getLogger(__name__)

#: How many times a duologue may move to other ports before its channels exist.
MAX_MOVES = 8

# -------------------------------------------------------------------- core


class DuologueServerCore:
    """The Echo 2.0 server state machine; every method returns a list of actions.

    Composed of a :class:`~.duologues.DuologueTable` (the duologues and what they hold)
    and a :class:`~.hello_admission.HelloAdmission` (the all-clients channel's rules)."""

    def __init__(self, config: ServerConfig, rng: random.Random | None = None) -> None:
        self._config = config
        self.log_summary = LogSummary(logger, config.log_interval)
        self._duologues = DuologueTable(config, rng)
        self._large_terms = LargeTermBudget(config)
        self._reclaim = Reclaim(config, self._duologues, self._close)
        self._admission = HelloAdmission(config, self._duologues, self.log_summary, self._large_terms,
                                         self._reclaim)

    # ---- read-only views

    @property
    def config(self) -> ServerConfig:
        """The configuration this core was built with."""
        return self._config

    @property
    def duologue_count(self) -> int:
        """Number of live duologues."""
        return len(self._duologues)

    @property
    def stats(self) -> ServerStats:
        """Snapshot of resources in use and cumulative counters."""
        table, admission = self._duologues, self._admission
        return ServerStats(
            duologues=len(table),
            initial_images=admission.initial_images,
            ports_in_use=table.ports.in_use,
            sessions_in_use=table.sessions.in_use,
            source_keys=len(table.per_ip),
            hellos=admission.hellos,
            connects=admission.created,
            rejects=MappingProxyType(dict(admission.rejects)),
            closes=MappingProxyType(dict(table.closes)),
            refusals_coalesced=admission.coalesced,
            ports_retired=table.ports.retired,
            large_term_images=self._large_terms.in_use,
            sources_out_of_standing=self._reclaim.sources_out_of_standing,
            floods=admission.floods,
            ipc_duologues=table.ipc_count,
        )

    def connections_for_ip(self, ip: str) -> int:
        """Duologues counted against ``ip`` (IPv6 aggregated by prefix)."""
        return self._duologues.per_ip.count(ip)

    def source_key(self, ip: str) -> str:
        """The source key ``ip`` counts under (the per-source limits' unit: an IPv4 address,
        an IPv6 prefix, or ``"ipc"``)."""
        return self._duologues.per_ip.source_key(ip)

    def duologue_info(self, session_id: int) -> DuologueInfo | None:
        """Snapshot of duologue ``session_id``, or None if it does not exist."""
        d = self._duologues.get(session_id)
        return None if d is None else self._info(d)

    def duologue_infos(self) -> tuple[DuologueInfo, ...]:
        """Snapshots of every live duologue, computed now (O(duologues): on demand only).

        Safe to call from another thread while the loop runs: the dict's values are
        copied in one C call under the GIL, and each snapshot reads plain attributes
        (a snapshot may be a message behind, never torn into an exception)."""
        return tuple(self._info(d) for d in self._duologues.records())

    @staticmethod
    def _info(d: DuologueRecord) -> DuologueInfo:
        return DuologueInfo(
            session_id=d.session_id, initial_session=d.initial_session, owner_ip=d.owner_ip,
            data_port=d.data_port, control_port=d.control_port, created_at=d.created_at,
            connected=any(d.images.values()), msgs_in=d.msgs_in, msgs_out=d.msgs_out,
            bytes_in=d.bytes_in, bytes_out=d.bytes_out, images=len(d.images), secure=d.secure,
        )

    # ---- the all-clients channel (HelloAdmission's rules)

    def initial_image_available(
        self, image_id: int, session_id: int, source_identity: str, term_length: int, now: float
    ) -> list[Action]:
        """A client's initial publication appeared on the all-clients subscription."""
        return self._admission.initial_image_available(image_id, session_id, source_identity, term_length, now)

    def initial_image_unavailable(self, image_id: int, now: float,
                                  connects_held: Set[int] = frozenset()) -> list[Action]:
        """A client's initial publication went away.

        ``connects_held``: the duologues whose CONNECT the glue still holds back (their
        channels are being made).  A client closes its initial publication once it has
        its CONNECT (the reference's step 2), or when it gives up; so a duologue this
        image opened whose CONNECT never went out has nobody waiting for it, and closes
        now (``client_gone``) instead of having its channels made for nobody."""
        actions = self._admission.initial_image_unavailable(image_id, now)
        for d in self._duologues.awaiting_from(image_id):
            if d.session_id in connects_held:
                actions += self._close(d, CloseReason.CLIENT_GONE, now)
        return actions

    def hello_received(self, image_id: int, data: bytes, now: float, *, blocked: str | None = None,
                       busy_ports: Set[int] = frozenset()) -> list[Action]:
        """One message on the all-clients subscription (§3 rules 1-4, §4 decisions);
        ``blocked`` and ``busy_ports`` are the glue's facts (:meth:`.HelloAdmission.hello_received`)."""
        return self._admission.hello_received(image_id, data, now, blocked=blocked, busy_ports=busy_ports)

    # ---- duologues

    def create_failed(self, session_id: int, now: float) -> list[Action]:
        """The glue could not create duologue ``session_id``: refuse and free everything."""
        d = self._duologues.get(session_id)
        if d is None:
            raise CoreUsageError(f"create_failed for unknown duologue {session_id}")
        refusal = Broadcast(format_error(d.initial_session, Reason.SERVER_FULL), None, d.owner_ip == IPC_SOURCE)
        event = self._admission.reject_event(d.owner_ip, d.initial_session, None, Reason.SERVER_FULL.value,
                                             "create_failed")
        return [refusal, event, *self._close(d, CloseReason.CREATE_FAILED, now)]

    def ports_taken(self, session_id: int, now: float, busy_ports: Set[int] = frozenset()) -> list[Action]:
        """The glue could not make duologue ``session_id``'s channels because the driver
        still binds one of its ports (a closed duologue's endpoint lingers while its departed
        client's image does).  Its CONNECT is still held back, so a plain duologue moves to
        two other ports: a new :class:`CreateDuologue` and its CONNECT.  [] when it cannot
        move (secure mode seals the ports inside the CONNECT-SECURE already made; a client
        already joined; moved :data:`MAX_MOVES` times; the same pair drawn again, ``busy_ports``
        avoided): the glue then keeps retrying until its create timeout."""
        d = self._duologues.get(session_id)
        if d is None or d.secure or d.hello is None or d.first_image_at is not None or d.moves >= MAX_MOVES:
            return []
        old = (d.data_port, d.control_port)
        if not self._duologues.move(d, busy_ports):
            return []
        key = d.hello[1]
        assert isinstance(key, int)  # plain mode
        logger.info("duologue %d: ports %d/%d still bound in the driver; moved to %d/%d", session_id, *old,
                    d.data_port, d.control_port)
        return [CreateDuologue(session_id, d.data_port, d.control_port, d.owner_ip),
                Broadcast(format_connect(d.initial_session, d.data_port, d.control_port, crypt(key, session_id)),
                          session_id)]

    def duologue_image_available(
        self, session_id: int, image_id: int, source_identity: str, term_length: int, now: float
    ) -> list[Action]:
        """A client publication appeared on duologue ``session_id``'s subscription."""
        d = self._live(session_id, "image available")
        if d is None:
            return []
        if image_id in d.images:
            raise CoreUsageError(f"image {image_id} of duologue {session_id} is already available")
        source = image_source(source_identity)[0]
        ip = source if source == IPC_SOURCE else canonical_ip(source)
        d.images[image_id] = False
        if ip != d.owner_ip:
            self.log_summary.log(logging.WARNING, "image:wrong_ip", now,
                                 "duologue %d: rejecting image %d from %s (owner %s)",
                                 session_id, image_id, ip, d.owner_ip)
            return [RejectImage(image_id, session_id, "wrong_ip"),
                    Event("client_connected", {"ip": ip, "session_id": session_id,
                                               "image_id": image_id, "wrong_ip": True,
                                               "owner_ip": d.owner_ip})]
        cause = self._large_terms.admit(image_id, ip, term_length)
        if cause is not None:
            self.log_summary.log(logging.WARNING, f"image:{cause}", now,
                                 "duologue %d: rejecting image %d: term length %d (%s)", session_id,
                                 image_id, term_length, self._large_terms.rule(cause))
            return [RejectImage(image_id, session_id, cause),
                    self._admission.reject_event(ip, session_id, image_id, None, cause)]
        d.images[image_id] = True
        if d.first_image_at is None:
            d.first_image_at = now
            if self._config.idle_timeout is not None:
                self._duologues.deadlines.schedule(session_id, now + self._config.idle_timeout)
            else:
                self._duologues.deadlines.cancel(session_id)
            self._duologues.forget_hello(d)
        d.last_activity = now
        return [Event("client_connected", {"ip": ip, "session_id": session_id,
                                           "image_id": image_id, "wrong_ip": False,
                                           "owner_ip": d.owner_ip})]

    def duologue_image_unavailable(self, session_id: int, image_id: int, now: float) -> list[Action]:
        """A client publication left duologue ``session_id``; the last owner image closes it."""
        self._large_terms.release(image_id)
        d = self._live(session_id, "image unavailable")
        if d is None:
            return []
        if image_id not in d.images:
            raise CoreUsageError(f"image {image_id} left duologue {session_id} but never arrived")
        served = d.images.pop(image_id)
        if served and not any(d.images.values()):
            return self._close(d, CloseReason.CLIENT_GONE, now)
        return []

    def duologue_message(self, session_id: int, image_id: int, data: bytes, now: float) -> list[Action]:
        """One message on a duologue: :class:`Deliver` to the application, or (longer than
        ``max_message``) ``ERROR bad message`` + close."""
        d = self._live(session_id, "message")
        if d is None:
            return []
        served = d.images.get(image_id)
        if served is None:
            raise CoreUsageError(f"message from image {image_id} of duologue {session_id} "
                                 "before it was available")
        if not served:
            logger.debug("duologue %d: ignoring message from unserved image %d", session_id, image_id)
            return []
        d.msgs_in += 1
        d.bytes_in += len(data)
        d.last_activity = now
        if len(data) > self._config.max_message:
            return self._bad_message(d, len(data), True, now)
        return [Deliver(session_id, bytes(data))]

    # ---- the application's answers (after a Deliver, or at any time while the duologue lives)

    def reply(self, session_id: int, data: bytes, now: float) -> list[Action]:
        """The application sends ``data`` on duologue ``session_id`` ([] once it is closed)."""
        d = self._live(session_id, "reply")
        if d is None:
            return []
        d.msgs_out += 1
        d.bytes_out += len(data)
        return [SendDuologue(session_id, bytes(data))]

    def bad_message(self, session_id: int, size: int, now: float) -> list[Action]:
        """The application did not understand a message of ``size`` bytes: ``ERROR bad
        message``, then close (the protocol's rule for a bad message)."""
        d = self._live(session_id, "bad message")
        return [] if d is None else self._bad_message(d, size, False, now)

    def close(self, session_id: int, now: float) -> list[Action]:
        """The application closes duologue ``session_id`` ([] if it is already closed)."""
        d = self._live(session_id, "close")
        return [] if d is None else self._close(d, CloseReason.APPLICATION, now)

    def _bad_message(self, d: DuologueRecord, size: int, oversize: bool, now: float) -> list[Action]:
        d.msgs_out += 1
        d.bytes_out += len(ERROR_BAD_MESSAGE_DUOLOGUE)
        logger.info("duologue %d: bad message (%d bytes) from %s", d.session_id, size, d.owner_ip)
        return [SendDuologue(d.session_id, ERROR_BAD_MESSAGE_DUOLOGUE),
                Event("bad_message", {"ip": d.owner_ip, "session_id": d.session_id,
                                      "bytes": size, "oversize": oversize}),
                *self._close(d, CloseReason.BAD_MESSAGE, now)]

    def send_failed(self, session_id: int, now: float) -> list[Action]:
        """A reply on duologue ``session_id`` missed its send deadline: close it."""
        d = self._live(session_id, "send failure")
        return [] if d is None else self._close(d, CloseReason.SEND_DEADLINE, now)

    def retire_port(self, port: int) -> None:
        """Never allocate ``port`` again: the glue lost track of a channel that may bind it."""
        logger.error("duologue port %d retired: a channel the media driver may still create "
                     "there cannot be closed; capacity is now %d duologues",
                     port, (self._duologues.ports.capacity - self._duologues.ports.retired - 1) // 2)
        self._duologues.ports.retire(port)

    def owner_ips(self) -> set[str]:
        """The addresses that own a duologue now (the glue checks them after a blocklist reload)."""
        return {d.owner_ip for d in self._duologues.records()}

    def close_blocked(self, blocked_ips: Set[str], now: float) -> list[Action]:
        """Close every duologue whose owner the glue found blocked (``blocked_ips``, after a
        blocklist reload). Visits every duologue: called once per reload, never per tick."""
        actions: list[Action] = []
        for d in [d for d in self._duologues.records() if d.owner_ip in blocked_ips]:
            actions += self._close(d, CloseReason.BLOCKED, now)
        return actions

    # ---- time and shutdown

    def tick(self, now: float) -> list[Action]:
        """Close duologues never joined within ``expiry`` or idle past ``idle_timeout``;
        write the due log summaries.  Visits only the duologues whose deadline is due."""
        self.log_summary.flush(now)
        actions: list[Action] = []
        idle = self._config.idle_timeout
        for session in self._duologues.deadlines.pop_due(now):
            d = self._duologues.get(session)
            if d is None:
                continue
            if d.first_image_at is None:
                self._reclaim.lose_standing(d.owner_ip, now)
                actions += self._close(d, CloseReason.EXPIRED, now)
            elif idle is not None:
                if now - d.last_activity >= idle:
                    actions += self._close(d, CloseReason.IDLE, now)
                else:  # active since it was scheduled: due again when it could next be idle
                    self._duologues.deadlines.schedule(session, d.last_activity + idle)
        return actions

    def shutdown(self, now: float) -> list[Action]:
        """Close every duologue; later HELLOs are refused with ``server full``."""
        self._admission.shut_down()
        actions: list[Action] = []
        for d in self._duologues.records():
            actions += self._close(d, CloseReason.SHUTDOWN, now)
        return actions

    # ---- internals

    def _live(self, session_id: int, what: str) -> DuologueRecord | None:
        """The duologue, or None (logged) when the event is stale."""
        d = self._duologues.get(session_id)
        if d is None:
            logger.debug("ignoring %s for closed or unknown duologue %d", what, session_id)
        return d

    def _close(self, d: DuologueRecord, reason: CloseReason, now: float) -> list[Action]:
        for image_id in d.images:  # they go with the duologue's subscription
            self._large_terms.release(image_id)
        return self._duologues.close(d, reason, now)
