"""The duologues' Aeron channels: created without blocking, paced, closed without leaks.

:class:`DuologueChannels` is the part of :class:`~.server.EchoServer` that executes
the core's channel actions: it asks the driver for each duologue's subscription and
exclusive publication (asynchronous adds, at most ``max_creating`` in flight, see
:mod:`.creation`), holds a CONNECT back until its channels exist, retries a port the
driver still holds, keeps attempts it gave up on as orphans until the client answers
(and closes what they made), flushes the bounded outboxes and closes channels once
their last replies are out.  It also owns the port bookkeeping: when a released port
is bindable again, and, through the endpoint filter, who may send to a data port.
"""
from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...channel import ChannelUri
from ...errors import AeronError, aeron_cause
from ...publication import Publication
from ...subscription import Subscription
from .creation import Attempt, Pending
from .outbox import Outbox
from ..core.protocol import STREAM_ID
from .images import reject_image
from ..core.server import RejectImage

if TYPE_CHECKING:
    from collections.abc import Callable

    from ...client import Aeron
    from ...poll_set import PollSet
    from .endpoint_guard import EndpointGuard
    from .images import ImageBook
    from ..core.server import Action, EchoServerCore
    from .options import ServerOptions
    from ...subscription import Image

__all__ = ["Duologue", "DuologueChannels"]

logger = logging.getLogger("aeron_py.echo.server")

_RETRY_INTERVAL = 0.05  # between attempts to create a duologue
# When the driver lets go of a released port (measured with the 100 ms timer): a
# subscription's socket at once, or after ~1.1 s while one of its images drains
# (5 status-message timeouts); a publication's after its linger plus ~0.4 s.
_SUB_RELEASE, _SUB_WITH_IMAGES_RELEASE, _PUB_RELEASE_EXTRA = 0.05, 1.3, 0.5


@dataclass
class Duologue:
    """A live duologue's channels and its outbox."""

    pub: Publication
    sub: Subscription
    data_port: int
    control_port: int
    outbox: Outbox


class DuologueChannels:
    """Channel half of the server loop (a mixin: the state lives on the server)."""

    options: ServerOptions
    _aeron: Aeron | None
    _guard: EndpointGuard | None
    _core: EchoServerCore
    _broadcast: Publication | None
    _broadcast_out: Outbox
    _outbox_drops: int
    _duologues: dict[int, Duologue]
    _closing: dict[int, Duologue]
    _dirty: set[int]
    _poll_set: PollSet[int] | None
    _pending: dict[int, Pending]
    _orphans: list[Attempt]
    _images: ImageBook
    _released: dict[int, tuple[float, str]]

    if TYPE_CHECKING:
        def _execute(self, actions: list[Action], now: float) -> None: ...
        def _on_image(self, key: int | None, up: bool) -> Callable[[Image], None]: ...
        def _subscription(self, key: int | None) -> Subscription | None: ...

    def _push_broadcast(self, data: bytes, now: float) -> None:
        if not self._broadcast_out.push(data, now + self.options.send_timeout):
            self._core.log_summary.log(logging.WARNING, "broadcast:full", now,
                                       "broadcast outbox full (%d): oldest reply dropped", self._broadcast_out.cap)

    def _in_flight(self) -> int:
        """Duologue channel adds the driver has not answered yet (ours and orphaned)."""
        return len(self._orphans) + sum(1 for p in self._pending.values() if p.attempt is not None)

    def _try_create(self, pending: Pending, now: float) -> int:
        """Start one attempt at a pending duologue's channels (never blocks); 1 if started."""
        a, o = pending.action, self.options
        busy = max(self._bindable_at(a.data_port, "data"), self._bindable_at(a.control_port, "control"))
        if now < busy:  # a closed channel of ours may still hold a port
            pending.next_attempt = min(busy, now + 10 * _RETRY_INTERVAL)
            return self._give_up_if_late(pending, now, f"ports {a.data_port}/{a.control_port} still held")
        if self._in_flight() >= o.max_creating:  # pace: the driver is still busy with earlier adds
            pending.next_attempt = now + _RETRY_INTERVAL
            return self._give_up_if_late(pending, now, f"{o.max_creating} channel adds already in flight")
        assert self._aeron is not None and self._guard is not None
        pending.attempts += 1
        self._guard.own_port(a.data_port, a.owner_ip)
        attempt = pending.attempt = Attempt(a.data_port, a.control_port)
        try:
            attempt.sub_add = self._aeron.async_add_subscription(
                ChannelUri.udp(endpoint=(o.address, a.data_port), reliable=True, session_id=a.session_id),
                STREAM_ID, on_available_image=self._on_image(a.session_id, True),
                on_unavailable_image=self._on_image(a.session_id, False))
            attempt.pub_add = self._aeron.async_add_exclusive_publication(
                ChannelUri.udp(control=(o.address, a.control_port), control_mode="dynamic", reliable=True,
                               session_id=a.session_id, term_length=o.term_length),
                STREAM_ID)
        except AeronError as exc:  # not even sent: handled as a refusal by _advance
            attempt.error = exc
        return 1

    def _advance(self, pending: Pending, now: float) -> int:
        """Poll a pending duologue's attempt: go live, or schedule a retry; 1 if it moved on."""
        attempt, a = pending.attempt, pending.action
        assert attempt is not None
        if not attempt.poll():
            return self._give_up_if_late(pending, now, "the media driver has not answered")
        pending.attempt = None
        if attempt.error is not None:
            made_pub = attempt.pub is not None
            self._discard(attempt, now)
            # A publication of this session that is still lingering makes the retry fail
            # with a session clash: wait until it is gone.
            wait = self.options.linger + _PUB_RELEASE_EXTRA if made_pub else _RETRY_INTERVAL
            pending.next_attempt = now + wait
            self._core.log_summary.log(logging.INFO, "create_retry", now,
                                       "duologue %d: attempt %d to open ports %d/%d failed: %s", a.session_id,
                                       pending.attempts, a.data_port, a.control_port, aeron_cause(attempt.error))
            self._give_up_if_late(pending, now, aeron_cause(attempt.error))
            return 1
        assert attempt.sub is not None and attempt.pub is not None
        del self._pending[a.session_id]
        assert self._poll_set is not None
        self._poll_set.add(attempt.sub, a.session_id)
        self._duologues[a.session_id] = Duologue(attempt.pub, attempt.sub, a.data_port, a.control_port,
                                                  Outbox(self.options.duologue_outbox_cap))
        for data in pending.held:
            self._push_broadcast(data, now)
        return 1

    def _discard(self, attempt: Attempt, now: float) -> None:
        """Close what an answered attempt made and note when its ports are free again.

        An add the client timed out may still be created by the driver later, where
        nobody can close it: its port is retired for good (see :mod:`.creation`)."""
        if attempt.timed_out:
            logger.error("the media driver did not answer a duologue channel add within %.1f s; "
                         "ports %d/%d retired", self.options.driver_timeout, attempt.data_port, attempt.control_port)
            for port in (attempt.data_port, attempt.control_port):
                self._core.retire_port(port)
        assert self._guard is not None
        self._guard.own_port(attempt.data_port, None)
        if attempt.sub is not None:
            attempt.sub.close()
            self._release(attempt.data_port, "data", now + _SUB_RELEASE)
        if attempt.pub is not None:
            self._close_publication(attempt.pub, attempt.control_port, now)

    def _drop_pending(self, session: int, now: float) -> bool:
        """Forget a pending duologue (its held CONNECT too); its attempt is cancelled."""
        pending = self._pending.pop(session, None)
        if pending is None:
            return False
        attempt = pending.attempt
        if attempt is not None:
            if attempt.poll():
                self._discard(attempt, now)
            else:
                self._orphans.append(attempt)  # closed once the driver answers
        return True

    def _reap_orphans(self, now: float) -> int:
        """Close what the driver made for orphaned attempts; number of attempts finished."""
        if not self._orphans:
            return 0
        answered = [attempt for attempt in self._orphans if attempt.poll()]
        for attempt in answered:
            self._orphans.remove(attempt)
            self._discard(attempt, now)
        return len(answered)

    def _bindable_at(self, port: int, role: str) -> float:
        """When ``port`` can be bound for ``role``; a new publication shares a lingering
        publication's control socket, so control after control is never delayed."""
        if any(port in (o.data_port, o.control_port) for o in self._orphans):
            return math.inf  # an orphaned attempt may still bind it
        released = self._released.get(port)
        if released is None or released[1] == role == "control":
            return 0.0
        return released[0]

    def _port_busy(self, port: int) -> bool:
        """The core's ``port_busy``: a closed channel of ours may still bind ``port``."""
        return self._bindable_at(port, "data") > time.monotonic()

    def _release(self, port: int, role: str, bindable_at: float) -> None:
        self._released[port] = (bindable_at, role)

    def _give_up_if_late(self, pending: Pending, now: float, why: str) -> int:
        if now < pending.deadline:
            return 0
        session = pending.action.session_id
        self._drop_pending(session, now)
        self._core.log_summary.log(logging.ERROR, "create_failed", now,
                                   "duologue %d: could not open its channels within %.1f s (%s)",
                                   session, self.options.create_timeout, why)
        self._execute(self._core.create_failed(session, now), now)
        return 1

    def _close_duologue(self, session: int, now: float) -> None:
        if self._drop_pending(session, now):
            return  # its CONNECT is dropped with it
        d = self._duologues.pop(session, None)
        if d is None:
            return
        self._dirty.discard(session)
        had_images = bool(self._images.remove_key(session))
        assert self._guard is not None and self._poll_set is not None
        self._guard.own_port(d.data_port, None)
        self._poll_set.remove(d.sub)
        d.sub.close()
        self._release(d.data_port, "data", now + (_SUB_WITH_IMAGES_RELEASE if had_images else _SUB_RELEASE))
        d.outbox.flush(d.pub, now)
        if d.outbox:
            self._closing[session] = d  # closed once its last replies are out
            self._release(d.control_port, "control", math.inf)
        else:
            self._outbox_drops += d.outbox.dropped
            self._close_publication(d.pub, d.control_port, now)

    def _close_publication(self, pub: Publication, control_port: int, now: float) -> None:
        pub.close()
        self._release(control_port, "control", now + self.options.linger + _PUB_RELEASE_EXTRA)

    def _reject(self, action: RejectImage) -> None:
        tracked = self._images.get(action.image_id)
        if tracked is None or not reject_image(self._subscription(tracked.key), tracked.session_id, action.reason):
            logger.debug("cannot reject image %d (%s): it is gone", action.image_id, action.reason)

    def _flush(self, now: float) -> int:
        """Offer queued replies: the broadcast's, the duologues' in ``_dirty`` (O(those)),
        and the closing duologues' last ones (closed once empty or expired)."""
        work = 0
        if self._broadcast_out and self._broadcast is not None:
            sent, failure = self._broadcast_out.flush(self._broadcast, now)
            work += sent
            if failure is not None:
                self._core.log_summary.log(logging.WARNING, "broadcast:dropped", now,
                                           "broadcast replies dropped: %s", failure)
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
                self._execute(self._core.send_failed(session, now), now)
        for session, d in list(self._closing.items()):
            sent, failure = d.outbox.flush(d.pub, now)
            work += sent
            if failure is not None or not d.outbox:
                d.outbox.clear()
                self._outbox_drops += d.outbox.dropped
                del self._closing[session]
                self._close_publication(d.pub, d.control_port, now)
        return work
