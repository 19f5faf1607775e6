"""The client's side of a duologue handshake, step-driven, on real Aeron channels.

A duologue is Echo 2.0's handshake shape (docs/spec/echo2.md §1, §4): the client
publishes ``HELLO <key>`` on the server's all-clients channel, the server answers
``<sid> CONNECT <data-port> <control-port> <crypt>`` (or ``<sid> ERROR <reason>``) on
its broadcast, and the client opens its own duologue publication and subscription on
those ports with the session id derived from the crypt.  Secure mode (§5) replaces
HELLO/CONNECT with a Noise NK handshake and installs the duologue's keys in the driver
before its channels exist.  The protocol is the sans-I/O
:class:`~aeron_py.duologue.core.client.EchoClientCore`; this module is its Aeron glue, over the
:class:`~.client_channels.ClientChannels` of one client:

* :class:`ClientHandshake` - the phases ``join`` (the all-clients channels connect) ->
  ``hello`` (the HELLO is re-sent every ``hello_interval`` s until our CONNECT or ERROR)
  -> ``duologue`` (the duologue's channels connect) -> ``done`` or ``failed``.  Each
  :meth:`~ClientHandshake.step` does what is due without blocking, so one thread can
  drive many handshakes; every phase is bounded by ``timeout`` seconds.

Used by :func:`aeron_py.duologue.client.connect` (one blocking handshake); written so
that :class:`aeron_py.echo.client.EchoClient` can run its handshake on it too.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from enum import Enum

from .client_channels import ClientChannels
from .client_security import ClientSecurity, ServerKeyRefused, wrong_server_key
from .core.client import EchoClientCore, Failed, OpenDuologue
from .core.secure_client import ServerKeyOffered
from ..publication import ExclusivePublication
from ..subscription import Subscription

__all__ = ["DEFAULT_HELLO_INTERVAL", "ClientHandshake", "Established", "HandshakeFailed", "HandshakePhase"]

logger = logging.getLogger(__name__)

#: Seconds between HELLOs while no CONNECT or ERROR came.
DEFAULT_HELLO_INTERVAL = 1.0


class HandshakePhase(Enum):
    JOIN = "join"
    HELLO = "hello"
    DUOLOGUE = "duologue"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class Established:
    """The handshake succeeded: the duologue and its connected channels (owned by the
    :class:`ClientChannels`); ``handshake``: seconds from the first HELLO to the CONNECT."""

    duologue: OpenDuologue
    publication: ExclusivePublication
    subscription: Subscription
    handshake: float

    @property
    def session_id(self) -> int:
        """The duologue's session (the server's publication)."""
        return self.duologue.session_id


@dataclass(frozen=True)
class HandshakeFailed:
    """The handshake failed.  ``failure``: the core's (``server_reason`` is the text of the
    server's ERROR: a refusal); ``waiting_for``: set when it timed out, what it waited for;
    ``authentication_failed``: secure mode, the server's key was wrong or not trusted."""

    failure: Failed
    waiting_for: str | None = None
    authentication_failed: bool = False

    @property
    def reason(self) -> str:
        return self.failure.reason

    @property
    def server_reason(self) -> str | None:
        return self.failure.server_reason

    @property
    def timed_out(self) -> bool:
        return self.waiting_for is not None


class ClientHandshake:
    """One client's handshake over ``channels`` (opened), step-driven.

    ``core`` is the protocol (its own ``timeout`` bounds the wait for the CONNECT);
    ``timeout`` bounds the ``join`` and ``duologue`` phases; ``security``: secure mode
    (the same as the core's ``secure.hello``; trust on first use goes through it).
    Call :meth:`start`, then :meth:`step` until :attr:`finished`; then :attr:`established`
    or :attr:`failed` says how it went.  Aeron errors propagate from :meth:`step`.
    """

    def __init__(self, channels: ClientChannels, core: EchoClientCore, *, timeout: float,
                 hello_interval: float = DEFAULT_HELLO_INTERVAL, security: ClientSecurity | None = None) -> None:
        if not timeout > 0:
            raise ValueError(f"handshake timeout must be > 0 seconds, got {timeout!r}")
        if not hello_interval >= 0:
            raise ValueError(f"hello_interval must be >= 0 seconds, got {hello_interval!r}")
        if (security is None) != (core.secure is None):
            raise ValueError("the core and the handshake disagree about secure mode")
        self.channels, self.core = channels, core
        self.timeout, self.hello_interval = timeout, hello_interval
        self._security = security
        self.phase = HandshakePhase.JOIN
        self._phase_deadline = 0.0
        self._next_hello = 0.0
        self._first_hello: float | None = None
        self._initial_pub: ExclusivePublication | None = None
        self._initial_sub: Subscription | None = None
        self._pub: ExclusivePublication | None = None
        self._sub: Subscription | None = None
        self._connected_at: float | None = None
        self._established: Established | None = None
        self._failed: HandshakeFailed | None = None

    # ---- views

    @property
    def finished(self) -> bool:
        return self.phase in (HandshakePhase.DONE, HandshakePhase.FAILED)

    @property
    def established(self) -> Established | None:
        return self._established

    @property
    def failed(self) -> HandshakeFailed | None:
        return self._failed

    @property
    def waiting_for(self) -> str:
        """What the current phase waits for (the text of a timeout)."""
        if self.phase is HandshakePhase.JOIN:
            return f"the server's all-clients channels ({self.channels.where}) to connect (no server answering there?)"
        if self.phase is HandshakePhase.HELLO:
            return "the server's CONNECT (or ERROR) answering our HELLO"
        d = self.core.duologue
        if self.phase is HandshakePhase.DUOLOGUE and d is not None:
            return f"the channels of duologue {d.session_id} (ports {d.data_port}/{d.control_port}) to connect"
        return f"nothing (the handshake is {self.phase.value})"

    # ---- driving

    def start(self, now: float | None = None) -> None:
        """Make the initial publication and broadcast subscription; arm the join deadline."""
        if self._initial_pub is not None or self.finished:
            raise RuntimeError("ClientHandshake.start() called twice")
        now = time.monotonic() if now is None else now
        self._initial_pub = self.channels.publication(self.channels.port, None)
        self._initial_sub = self.channels.subscription(self.channels.control_port, None)
        self.core.set_initial_session(self._initial_pub.session_id)
        self._phase_deadline = now + self.timeout

    def step(self, now: float | None = None) -> int:
        """Do whatever is due without blocking; returns the work done (0: idle)."""
        if self.finished:
            return 0
        if self._initial_pub is None and self.phase is HandshakePhase.JOIN:
            raise RuntimeError("ClientHandshake.step() before start()")
        now = time.monotonic() if now is None else now
        work = 0
        if self.phase is HandshakePhase.JOIN:
            work += self._step_join()
        if self.phase is HandshakePhase.HELLO:
            work += self._step_hello(now)
        if self.phase is HandshakePhase.DUOLOGUE:
            work += self._step_duologue()
        if not self.finished:
            self._check_time(now)
        return work

    def expire(self) -> HandshakeFailed:
        """Give up now as timed out in the current phase (a caller's overall deadline)."""
        if self._failed is not None:
            return self._failed
        if self.phase is HandshakePhase.DONE:
            raise RuntimeError("expire() after the handshake succeeded")
        return self._fail(f"timed out waiting for {self.waiting_for}", waiting_for=self.waiting_for)

    def abandon(self, reason: str) -> HandshakeFailed:
        """Fail now (e.g. an Aeron error in :meth:`step`)."""
        if self._failed is not None:
            return self._failed
        if self.phase is HandshakePhase.DONE:
            raise RuntimeError("abandon() after the handshake succeeded")
        return self._fail(reason)

    # ---- phases

    def _check_time(self, now: float) -> None:
        if self.phase is not HandshakePhase.HELLO:  # join, duologue: our own deadline
            if now >= self._phase_deadline:
                self._fail(self._not_connected(), waiting_for=self.waiting_for)
            return
        # hello: the core's, armed by its first tick here (ticked in join, it would race ours)
        failure = self.core.tick(now)  # only a timeout: the CONNECT is overdue
        if failure is not None:
            self._finish_failed(HandshakeFailed(failure, waiting_for=self.waiting_for))

    def _not_connected(self) -> str:
        if self.phase is HandshakePhase.JOIN:
            return (f"no server answering at {self.channels.where}: channels not connected "
                    f"within {self.timeout:g} s")
        d = self.core.duologue
        return f"duologue {d.session_id if d else '?'} not connected within {self.timeout:g} s"

    def _step_join(self) -> int:
        assert self._initial_pub is not None and self._initial_sub is not None
        if not (self._initial_pub.is_connected and self._initial_sub.is_connected):
            return 0
        self.phase = HandshakePhase.HELLO
        return 1

    def _step_hello(self, now: float) -> int:
        assert self._initial_pub is not None and self._initial_sub is not None
        work = 0
        if now >= self._next_hello and self._initial_pub.offer(self.core.hello()) > 0:
            self._next_hello = now + self.hello_interval
            if self._first_hello is None:
                self._first_hello = now
            work += 1
        for data in self._initial_sub.poll_batch(10):
            work += 1
            reply = self.core.initial_reply(data, now)
            if isinstance(reply, ServerKeyOffered):
                if not self._trust(reply, now):
                    return work
                continue
            if isinstance(reply, Failed):
                self._finish_failed(HandshakeFailed(reply, authentication_failed=wrong_server_key(reply)))
                return work
            if isinstance(reply, OpenDuologue):
                self._connected_at = now
                self._open_duologue(reply, now)
                return work
        return work

    def _trust(self, offer: ServerKeyOffered, now: float) -> bool:
        """Secure mode, no key known: record the server's key (trust on first use) and hello again."""
        assert self._security is not None and self.core.secure is not None
        try:
            self._security.offered(self.channels.address, self.channels.port, offer.public_key)
        except ServerKeyRefused as exc:
            self._fail(f"not trusting the server's key: {exc}", authentication_failed=True)
            return False
        logger.info("server %s:%d: trusting its key on first use", self.channels.address, self.channels.port)
        self.core.secure.trust(offer.public_key)
        self._next_hello = now  # the HELLO-SECURE goes at once
        return True

    def _open_duologue(self, d: OpenDuologue, now: float) -> None:
        self.channels.install(d)  # before the channels: no datagram of theirs goes unsealed
        self._sub = self.channels.subscription(d.control_port, d.session_id)
        self._pub = self.channels.publication(d.data_port, d.publication_session)
        self._close_broadcast()  # no longer needed: free it (and the server's fan-out)
        self.phase = HandshakePhase.DUOLOGUE
        self._phase_deadline = now + self.timeout

    def _step_duologue(self) -> int:
        assert self._pub is not None and self._sub is not None
        if not (self._pub.is_connected and self._sub.is_connected):
            return 0
        d = self.core.duologue
        assert d is not None and self._connected_at is not None
        first = self._first_hello if self._first_hello is not None else self._connected_at
        self._established = Established(d, self._pub, self._sub, self._connected_at - first)
        self.phase = HandshakePhase.DONE
        return 1

    # ---- endings

    def _close_broadcast(self) -> None:
        """Close the HELLO publication and the broadcast subscription.  Clients of one shared
        driver share the broadcast's image, and a subscription nobody polls holds it back:
        untethered, for the driver's window-limit timeout, again after every rest, and with
        it the CONNECTs of every client still handshaking."""
        self.channels.release(self._initial_pub, self._initial_sub)
        self._initial_pub = self._initial_sub = None

    def _fail(self, reason: str, *, waiting_for: str | None = None,
              authentication_failed: bool = False) -> HandshakeFailed:
        failure = self.core.failure if self.core.failure is not None else self.core.fail(reason)
        return self._finish_failed(HandshakeFailed(failure, waiting_for, authentication_failed))

    def _finish_failed(self, failed: HandshakeFailed) -> HandshakeFailed:
        self._failed = failed
        self.phase = HandshakePhase.FAILED
        self._close_broadcast()  # a failed handshake polls nothing more (its duologue closes with the channels)
        return failed
