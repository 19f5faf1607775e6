"""Echo 2.0 client glue: Aeron channels around :class:`~.client_core.EchoClientCore`.

:class:`EchoClient` is a step-driven state machine so one thread can drive many
clients (the load tool does); :meth:`EchoClient.run` drives one to completion.

Phases: ``join`` (initial publication and subscription connecting) -> ``hello``
(``HELLO <key>`` re-sent every ``hello_interval`` s until a CONNECT or ERROR for our
session arrives) -> ``duologue`` (duologue channels connecting) -> ``echo`` (``count``
echoes, each checked equal, ``interval`` s apart) -> done.  Every wait is bounded by
``timeout`` seconds without progress; a server ERROR fails at once with its reason.

With ``hold=True`` a client that has done its ``count`` echoes stays in ``echo``,
connected and idle (:attr:`EchoClient.holding`), until :meth:`EchoClient.release`
ends it successfully; :meth:`EchoClient.echo_more` queues further echoes meanwhile.
:meth:`EchoClient.next_step_at` says when a client next needs a :meth:`~EchoClient.step`
(absent incoming messages), so one thread can drive thousands of mostly idle
clients with work proportional to activity (the load tool's hold mode does).

URIs are those of docs/spec/echo2.md §2, plus ``term-length`` on our publications (local only).
``interface`` binds our publications to a local address (e.g. ``127.0.0.2``) so the
server sees that source IP.  Aeron's own ``interface=`` parameter only accepts
addresses configured on a network interface, so a publication with an ``interface``
is an MDC publication in manual mode whose control address is ``<interface>:0`` (the
local socket) with the server endpoint as its one destination: the wire traffic is
the same as a plain unicast publication's.
"""
from __future__ import annotations

import logging
import math
import random
import time
from collections import deque
from dataclasses import dataclass, field
from enum import Enum

from ...client import Aeron
from ...duologue.client_channels import DEFAULT_TERM_LENGTH, source_ip
from ...duologue.client_security import ClientSecurity
from ...duologue.core.client import EchoClientCore, Failed, random_payload
from ...duologue.core.protocol import Echoed
from ...duologue.client_channels import ClientChannels
from ...duologue.handshake import ClientHandshake, HandshakePhase
from ...errors import AeronError, OfferError, error_summary
from ...idle import BackoffIdleStrategy
from ...publication import ExclusivePublication
from ...subscription import Subscription
from ...validation import require_int
from .common import EchoResult, check_pacing

logger = logging.getLogger(__name__)

#: Seconds between connection checks of a client with nothing to send or await.
HOLD_CHECK_INTERVAL = 1.0


class Phase(Enum):
    JOIN = "join"
    HELLO = "hello"
    DUOLOGUE = "duologue"
    ECHO = "echo"
    DONE = "done"


_HANDSHAKE_PHASES = {HandshakePhase.JOIN: Phase.JOIN, HandshakePhase.HELLO: Phase.HELLO,
                     HandshakePhase.DUOLOGUE: Phase.DUOLOGUE, HandshakePhase.DONE: Phase.ECHO,
                     HandshakePhase.FAILED: Phase.DONE}


def _payload(message: bytes | str | None) -> bytes | None:
    if message is None or isinstance(message, bytes):
        return message
    return message.encode("utf-8")


@dataclass
class _Echoing:
    sent_at: deque[float] = field(default_factory=deque)
    unsent: bytes | None = None
    next_send: float = 0.0
    sent: int = 0
    rtts: list[float] = field(default_factory=list)


class EchoClient:
    """One Echo 2.0 client.  Pass ``aeron`` to share a client/driver (e.g. many clients
    in one process); otherwise it embeds its own media driver (no reserved session
    range, docs/spec/echo2.md §4.1) and an Aeron client in conductor-invoker mode.
    """

    def __init__(self, address: str, port: int, control_port: int, *, count: int = 5,
                 interval: float = 0.0, message: bytes | str | None = None, timeout: float = 10.0,
                 interface: str | None = None, hello_interval: float = 1.0,
                 term_length: int = DEFAULT_TERM_LENGTH, aeron: Aeron | None = None,
                 dir: str | None = None, rng: random.Random | None = None, hold: bool = False,
                 secure: ClientSecurity | None = None) -> None:
        check_pacing(count, interval, hello_interval)
        self.address, self.port, self.control_port = address, port, control_port
        self.count, self.interval, self.hello_interval = count, interval, hello_interval
        self.timeout, self.interface, self.term_length = timeout, interface, term_length
        self.hold = hold
        self._message = _payload(message)
        self._rng = rng
        self._security = secure
        self._core = EchoClientCore(timeout=timeout, rng=rng,
                                    secure=None if secure is None else secure.hello(address, port))
        self._auth_failed = False
        self._channels = ClientChannels(address, port, control_port, interface=interface, term_length=term_length,
                                        aeron=aeron, dir=dir, security=secure, invoker=True)
        self._shake = ClientHandshake(self._channels, self._core, timeout=timeout, hello_interval=hello_interval,
                                      security=secure)
        self._pub: ExclusivePublication | None = None
        self._sub: Subscription | None = None
        self._echo_phase: Phase | None = None  # ECHO or DONE once the handshake is over
        self._handshake: float | None = None
        self._echoing = _Echoing()
        self._result: EchoResult | None = None

    # ---- views

    @property
    def result(self) -> EchoResult | None:
        """None while running."""
        return self._result

    @property
    def finished(self) -> bool:
        return self._result is not None

    @property
    def holding(self) -> bool:
        """Connected, every queued echo answered, waiting for :meth:`release` (``hold=True``)."""
        e = self._echoing
        return (self._result is None and self.phase is Phase.ECHO and self.hold and e.sent >= self.count
                and not e.sent_at and e.unsent is None)

    @property
    def phase(self) -> Phase:
        """Where the client is: the handshake's phase, then ``echo`` and ``done``."""
        if self._echo_phase is not None:
            return self._echo_phase
        return _HANDSHAKE_PHASES[self._shake.phase]

    @property
    def handshake(self) -> float | None:
        """Seconds from the first HELLO to the CONNECT (None before the CONNECT)."""
        return self._handshake

    @property
    def rtts(self) -> list[float]:
        """Round trips measured so far (seconds; the live list, do not modify)."""
        return self._echoing.rtts

    def next_step_at(self, now: float) -> float:
        """When this client next needs :meth:`step` if no message arrives for it: ``now``
        while handshaking or awaiting an echo, the next echo's time, a periodic
        connection check while holding, ``inf`` once finished."""
        if self._result is not None:
            return math.inf
        if self.phase is not Phase.ECHO:
            return now
        e = self._echoing
        if e.unsent is not None or e.sent_at:
            return now
        if e.sent < self.count:
            return min(e.next_send, now + HOLD_CHECK_INTERVAL)
        return now + HOLD_CHECK_INTERVAL

    def echo_more(self, count: int, interval: float, start: float) -> None:
        """Queue ``count`` more echoes, ``interval`` s apart, the first at ``start``
        (monotonic seconds); only on a ``hold=True`` client that has not finished."""
        if not self.hold or self._result is not None:
            raise RuntimeError("echo_more() needs a running client made with hold=True")
        require_int("echo_more: count", count, min=0)
        if not interval >= 0:
            raise ValueError(f"echo_more: interval must be >= 0 seconds, got {interval!r}")
        self.count += count
        self.interval = interval
        self._echoing.next_send = start

    def release(self) -> bool:
        """End a holding client successfully (its channels stay open until :meth:`close`);
        False (and no change) when it is not :attr:`holding`."""
        if not self.holding:
            return False
        self._core.finish()
        self._finish(None)
        return True

    @property
    def source_ip(self) -> str:
        """The address the server sees: ``interface``, else the kernel's route choice."""
        return source_ip(self.address, self.port, self.interface)

    # ---- lifecycle

    def open(self, now: float | None = None) -> "EchoClient":
        """Start the driver (if embedded) and the initial channels."""
        self._channels.open()
        self._shake.start(now)
        return self

    def close(self) -> None:
        """Close channels, then the embedded client and driver (a secure duologue's keys
        once its last datagrams are out).  Idempotent."""
        self._channels.close()

    def __enter__(self) -> "EchoClient":
        return self.open()

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def run(self) -> EchoResult:
        """Open, step until finished (idling between steps), close; never raises on
        protocol failures (see :attr:`EchoResult.ok`)."""
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)
        try:
            self.open()
            while not self.finished:
                idle.idle(self.step())
        finally:
            self.close()
        assert self._result is not None
        return self._result

    # ---- stepping

    def step(self, now: float | None = None) -> int:
        """Do whatever is due without blocking; returns the work done (0 = idle)."""
        if self._result is not None:
            return 0
        now = time.monotonic() if now is None else now
        work = self._channels.work()
        try:
            if self._echo_phase is None:
                work += self._step_handshake(now)
            if self._echo_phase is Phase.ECHO:
                work += self._step_echo(now)
        except (AeronError, OfferError) as exc:
            self._finish(self._fail(f"Aeron error: {error_summary(exc)}"))
            return work + 1
        if self._result is None and self._echo_phase is Phase.ECHO:  # the handshake keeps its own time
            failure = self._core.tick(now)
            if failure is not None:
                self._finish(failure)
        return work

    def _step_handshake(self, now: float) -> int:
        work = self._shake.step(now)
        if (failed := self._shake.failed) is not None:
            self._auth_failed = failed.authentication_failed
            self._finish(failed.failure)
            return work
        established = self._shake.established
        if established is None:
            return work
        self._handshake = established.handshake
        self._pub, self._sub = established.publication, established.subscription
        self._echo_phase = Phase.ECHO
        if self.count == 0 and not self.hold:
            self._core.finish()
            self._finish(None)
        return work

    def _fail(self, reason: str) -> Failed:
        if not self._shake.finished:
            return self._shake.abandon(reason).failure
        return self._core.fail(reason)

    def _step_echo(self, now: float) -> int:
        assert self._pub is not None and self._sub is not None
        e, work = self._echoing, 0
        if e.unsent is None and e.sent < self.count and not e.sent_at and now >= e.next_send:
            payload = self._message if self._message is not None else random_payload(self._rng)
            e.unsent = self._core.next_echo(payload, now)
        if e.unsent is not None and self._pub.offer(e.unsent) > 0:
            e.unsent = None
            e.sent += 1
            e.sent_at.append(now)
            work += 1
        for data in self._sub.poll_batch(10):
            work += 1
            reply = self._core.duologue_reply(data, now)
            if isinstance(reply, Failed):
                self._finish(reply)
                return work
            if isinstance(reply, Echoed):
                e.rtts.append(now - e.sent_at.popleft())
                e.next_send = now + self.interval
                if self._core.echoes_ok == self.count and not self.hold:
                    self._core.finish()
                    self._finish(None)
                    return work
        if not self._sub.is_connected:
            self._finish(self._fail("the server closed the duologue"))
        return work

    def _finish(self, failure: Failed | None) -> None:
        session = self._core.duologue.session_id if self._core.duologue is not None else None
        self._echo_phase = Phase.DONE  # a finished handshake closed its broadcast channels; the duologue stays until close()
        self._result = EchoResult(
            ok=failure is None, echoes=self._core.echoes_ok, rtts=tuple(self._echoing.rtts),
            handshake=self._handshake, reason=None if failure is None else failure.reason,
            server_reason=None if failure is None else failure.server_reason, session_id=session,
            source_ip=self.source_ip, secure=self._security is not None, authentication_failed=self._auth_failed)
        if failure is not None:
            logger.info("echo client (%s) failed: %s", self.source_ip, failure.reason)
