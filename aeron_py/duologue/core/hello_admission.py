"""HELLO admission: the core's rules for the all-clients channel (docs/spec/echo2.md §3 rules 1-4).

Every HELLO gets an answer (decision 3): a malformed or oversize one ``ERROR bad
message``; a blocked source, a full server or a source over its per-IP limit their
refusal (the same refusal to the same initial image at most once per
``refusal_interval``); a repeated HELLO of a duologue still waiting for its client the
same CONNECT again; otherwise the :class:`~.duologues.DuologueTable` opens a duologue
and the answer is ``CreateDuologue`` + the CONNECT.  An initial image whose term is
larger than allowed, or beyond the large-term budget (:mod:`.large_terms`), is
rejected, and its HELLO answered ``server full``.  On a full server, a HELLO from a
source in good standing may take the place of the oldest duologue nobody joined
(:mod:`.reclaim`).

A client gives up at its first refusal (and sends one HELLO a second until answered),
so an initial image refused ``flood_hellos`` times is a flood: its source loses its
standing, its image is rejected, and for ``flood_penalty`` seconds the source's HELLOs
are refused (``too many connections for IP address``) and the driver drops everything
it sends (:class:`~.contract.BlockSource`).  Its images then go away with their
liveness, which frees their places in the driver's image caps for other sources.

One collaborator of :class:`~.server.DuologueServerCore`: it owns the initial images and
the HELLO and refusal counters; the duologues it opens belong to the table.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Set

from .contract import Action, BlockSource, Broadcast, CreateDuologue, Event, RejectImage, ServerConfig
from .duologues import DuologueTable, OutOfResources
from .expiring import ExpiringKeys
from .large_terms import LargeTermBudget
from .log_summary import LogSummary
from .per_ip import canonical_ip
from .reclaim import Reclaim
from .protocol import IPC_SOURCE, CoreUsageError, Reason, crypt, format_connect, image_source, parse_hello
from .records import DuologueRecord, InitialImage
from .secure_handshake import ServerSecrets
from .secure_hello import DuologueKeys, SecureConnectPayload, SecureReason, format_secure_error

__all__ = ["HelloAdmission"]

logger = logging.getLogger("aeron_py.duologue.core.server")

#: Most sources penalised for flooding at once (the oldest penalty makes way).
MAX_PENALISED = 65_536


class HelloAdmission:
    """The all-clients half of the core: initial images, HELLOs and their answers."""

    def __init__(self, config: ServerConfig, duologues: DuologueTable, log_summary: LogSummary,
                 large_terms: LargeTermBudget, reclaim: Reclaim) -> None:
        self._config = config
        self._duologues = duologues
        self._reclaim = reclaim
        self._large_terms = large_terms
        self._log_summary = log_summary
        self._initial_images: dict[int, InitialImage] = {}
        self.hellos = 0
        self.created = 0
        self.rejects: Counter[str] = Counter()
        self.coalesced = 0
        self._shut_down = False
        self._penalised = ExpiringKeys(config.flood_penalty, MAX_PENALISED)
        self.floods = 0

    @property
    def initial_images(self) -> int:
        """Initial images (clients' initial publications) currently known."""
        return len(self._initial_images)

    def shut_down(self) -> None:
        """From now on every well-formed HELLO is refused with ``server full``."""
        self._shut_down = True

    def initial_image_available(
        self, image_id: int, session_id: int, source_identity: str, term_length: int, now: float
    ) -> list[Action]:
        """A client's initial publication appeared on the all-clients subscription."""
        if image_id in self._initial_images:
            raise CoreUsageError(f"initial image {image_id} is already available")
        ip = self._source(source_identity)
        cause = self._large_terms.admit(image_id, ip, term_length)
        self._initial_images[image_id] = InitialImage(session_id, ip, cause is not None)
        if cause is None:
            return []
        self._log_summary.log(logging.WARNING, f"image:{cause}", now,
                             "rejecting initial image %d from %s: term length %d (%s)", image_id, ip, term_length,
                             self._large_terms.rule(cause))
        # Decision 3: its HELLO gets an answer even though the image is rejected before
        # it is read; the session id is known now, so answer it now.
        return [
            RejectImage(image_id, None, cause),
            self.reject_event(ip, session_id, image_id, None, cause),
            *self._refuse(ip, session_id, image_id, Reason.SERVER_FULL, cause, now),
        ]

    @staticmethod
    def _source(source_identity: str) -> str:
        """The source an image counts under: its address, or ``IPC_SOURCE``."""
        source = image_source(source_identity)[0]
        return source if source == IPC_SOURCE else canonical_ip(source)

    def initial_image_unavailable(self, image_id: int, now: float) -> list[Action]:
        """A client's initial publication went away."""
        if self._initial_images.pop(image_id, None) is None:
            raise CoreUsageError(f"initial image {image_id} went away but was never available")
        self._large_terms.release(image_id)
        return []

    def hello_received(self, image_id: int, data: bytes, now: float, *, blocked: str | None = None,
                       busy_ports: Set[int] = frozenset()) -> list[Action]:
        """One message on the all-clients subscription (§3 rules 1-4, §4 decisions).

        The glue's facts: ``blocked``, the blocklist entry in force for the image's source
        (None: not blocked); ``busy_ports``, free ports a closed channel may still bind (a
        new duologue prefers others)."""
        image = self._initial_images.get(image_id)
        if image is None:
            raise CoreUsageError(f"message from initial image {image_id} before it was available")
        sid, ip = image.session_id, image.ip
        if image.rejected:  # answered at image-up; answered again (at most every refusal_interval)
            return self._refuse(ip, sid, image_id, Reason.SERVER_FULL, "image_rejected", now)
        self.hellos += 1
        actions: list[Action] = [Event("hello", {"ip": ip, "session_id": sid,
                                                 "image_id": image_id, "bytes": len(data)})]
        if self._config.secure is not None:
            return actions + self._secure_hello(image_id, sid, ip, bytes(data), now, self._config.secure,
                                                blocked, busy_ports)
        if len(data) > self._config.max_message:
            return actions + self._oversize(image, image_id, now)
        key = parse_hello(data)
        if key is None:
            return actions + self._refuse(ip, sid, image_id, Reason.BAD_MESSAGE, "malformed", now)
        repeated = self._repeat_connect(image_id, key, sid)
        if repeated is not None:
            return actions + repeated
        refusal, room = self._admission(ip, sid, image_id, now, blocked)
        actions += room
        if refusal is not None:
            return actions + refusal
        try:
            d = self._duologues.open(ip, sid, (image_id, key), now, busy_ports)
        except OutOfResources as out:
            return actions + self._refuse(ip, sid, image_id, Reason.SERVER_FULL, out.cause, now)
        return actions + self._created(d, format_connect(sid, d.data_port, d.control_port,
                                                         crypt(key, d.session_id)), None)

    def _oversize(self, image: InitialImage, image_id: int, now: float) -> list[Action]:
        """A message longer than ``max_message`` on an initial image: answered ``bad message``
        and the image rejected at once. No client sends one, and the image's log then holds
        only what its source wrote before: HELLOs, and this message's fragments."""
        refusal = self._refuse(image.ip, image.session_id, image_id, Reason.BAD_MESSAGE, "oversize", now)
        image.rejected = True
        return [*refusal, RejectImage(image_id, None, "oversize")]

    def _secure_hello(self, image_id: int, sid: int, ip: str, data: bytes, now: float,
                      secrets: ServerSecrets, blocked: str | None, busy_ports: Set[int]) -> list[Action]:
        """Secure mode (docs/spec/echo2.md §5): the Noise NK handshake decides first, then
        the same admission rules; a repeated HELLO-SECURE gets the same CONNECT-SECURE."""
        repeated = self._duologues.awaiting(image_id, data)
        if repeated is not None and repeated.secure_connect is not None:
            return [Broadcast(repeated.secure_connect, repeated.session_id)]
        handshake = secrets.handshake(sid)
        answer = handshake.receive_hello(data)
        if answer is not None:
            if answer.refusal is None:  # SERVER-KEY
                return [Broadcast(answer.message), Event("server_key", {"ip": ip, "session_id": sid})]
            return self._refuse(ip, sid, image_id, answer.refusal, answer.cause, now)
        refusal, room = self._admission(ip, sid, image_id, now, blocked)
        if refusal is None:
            try:
                d = self._duologues.open(ip, sid, (image_id, data), now, busy_ports, secure=True)
            except OutOfResources as out:
                refusal = self._refuse(ip, sid, image_id, Reason.SERVER_FULL, out.cause, now)
        if refusal is not None:
            handshake.wipe()
            return room + refusal
        assert d.client_session is not None
        connect, keys = handshake.connect(
            SecureConnectPayload(d.data_port, d.control_port, d.session_id, d.client_session))
        d.secure_connect = connect
        return room + self._created(d, connect, keys)

    def _created(self, d: DuologueRecord, connect: bytes, keys: DuologueKeys | None) -> list[Action]:
        """The actions of a duologue just opened: create its channels, then send its CONNECT."""
        self.created += 1
        session, data_port, control_port, ip = d.session_id, d.data_port, d.control_port, d.owner_ip
        logger.info("%sduologue %d for %s (initial session %d): ports %d/%d", "secure " if keys else "",
                    session, ip, d.initial_session, data_port, control_port)
        return [
            CreateDuologue(session, data_port, control_port, ip, keys),
            Broadcast(connect, session, ip == IPC_SOURCE),
            Event("duologue_created", {"ip": ip, "session_id": session, "initial_session_id": d.initial_session,
                                       "data_port": data_port, "control_port": control_port,
                                       "secure": keys is not None}),
        ]

    def _repeat_connect(self, image_id: int, key: int, sid: int) -> list[Action] | None:
        """The same CONNECT again for a HELLO repeated while its duologue awaits its client.

        Decision beyond the reference (which opens one more duologue per repeat): a
        client's re-sent HELLO costs no ports, session id or per-IP slot.
        """
        d = self._duologues.awaiting(image_id, key)
        if d is None:
            return None
        logger.debug("repeated HELLO from %s: CONNECT for duologue %d again", d.owner_ip, d.session_id)
        return [Broadcast(format_connect(sid, d.data_port, d.control_port, crypt(key, d.session_id)),
                          d.session_id, d.owner_ip == IPC_SOURCE)]

    def _admission(self, ip: str, sid: int, image_id: int, now: float,
                   blocked: str | None) -> tuple[list[Action] | None, list[Action]]:
        """(The refusal for a well-formed HELLO, or None when it may be admitted; the
        actions that made room for it: a reclaimed duologue's close, or [])."""
        if self._shut_down:
            return self._refuse(ip, sid, image_id, Reason.SERVER_FULL, "shutdown", now), []
        if ip == IPC_SOURCE:  # same-host clients: their own limit; no blocklist, standing or reclaim
            if self._duologues.ipc_count >= self._config.max_ipc_clients:
                return self._refuse(ip, sid, image_id, Reason.SERVER_FULL, "max_ipc_clients", now), []
            return None, []
        if blocked is not None:
            hit = Event("blocklist_hit", {"ip": ip, "session_id": sid, "detail": blocked})
            return [hit, *self._refuse(ip, sid, image_id, Reason.TOO_MANY_FOR_IP, "blocklist", now)], []
        if self._penalised.holds(self._duologues.per_ip.source_key(ip), now):
            return self._refuse(ip, sid, image_id, Reason.TOO_MANY_FOR_IP, "flood_penalty", now), []
        if self._duologues.network_count < self._config.max_clients:
            if self._duologues.per_ip.count(ip) >= self._config.max_per_ip:
                return self._refuse(ip, sid, image_id, Reason.TOO_MANY_FOR_IP, "max_per_ip", now), []
            return None, []
        room = self._reclaim.make_room(ip, now)  # only for a source that holds no place
        if room is None:
            return self._refuse(ip, sid, image_id, Reason.SERVER_FULL, "max_clients", now), []
        return None, room

    def _refuse(self, ip: str, sid: int, image_id: int | None, reason: Reason | SecureReason, cause: str,
                now: float) -> list[Action]:
        """``<sid> ERROR <reason>`` plus its ``reject`` event; the same refusal to the same
        initial image within ``refusal_interval`` is counted but not sent again."""
        image = self._initial_images.get(image_id) if image_id is not None else None
        penalty: list[Action] = []
        if image is not None and image_id is not None:
            image.refusals += 1
            if image.refusals == self._config.flood_hellos and ip != IPC_SOURCE:
                penalty = self._penalise(ip, image_id, now)
            last = image.last_refusal
            if last is not None and last[0] is reason and now - last[1] < self._config.refusal_interval:
                self.coalesced += 1
                self.rejects[cause] += 1
                return penalty
            image.last_refusal = (reason, now)
        self._log_summary.log(logging.INFO, f"refuse:{cause}", now, "refusing HELLO from %s (session %d): %s (%s)",
                             ip, sid, reason.value, cause)
        return [Broadcast(format_secure_error(sid, reason), None, ip == IPC_SOURCE),
                self.reject_event(ip, sid, image_id, reason.value, cause), *penalty]

    def _penalise(self, ip: str, image_id: int, now: float) -> list[Action]:
        """Initial image ``image_id`` of ``ip`` was refused ``flood_hellos`` times: a flood."""
        self.floods += 1
        self._penalised.hold(self._duologues.per_ip.source_key(ip), now)
        self._reclaim.lose_standing(ip, now)
        self._log_summary.log(logging.WARNING, "flood", now,
                             "%s sent %d HELLOs refused on one publication: refused and dropped in the "
                             "media driver for %g s", ip, self._config.flood_hellos, self._config.flood_penalty)
        return [RejectImage(image_id, None, "flood"), BlockSource(ip, self._config.flood_penalty)]

    def reject_event(self, ip: str, sid: int | None, image_id: int | None, reason: str | None,
                      cause: str) -> Event:
        self.rejects[cause] += 1
        return Event("reject", {"ip": ip, "session_id": sid, "image_id": image_id,
                                "reason": reason, "cause": cause})

