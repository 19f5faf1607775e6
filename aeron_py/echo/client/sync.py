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
from typing import Any

from ...channel import ChannelUri
from ...client import Aeron
from ...driver import MediaDriver
from ...errors import AeronError, OfferError, error_summary
from ...idle import BackoffIdleStrategy
from ...publication import ExclusivePublication
from ...subscription import Subscription
from ...validation import require_int
from ..core.client import EchoClientCore, Failed, OpenDuologue, random_payload
from ..core.protocol import STREAM_ID, Echoed
from ..core.secure_client import ServerKeyOffered
from .common import DEFAULT_TERM_LENGTH, EchoResult, check_pacing, publication_channel, source_ip
from .security import SHARED_KEY_HOLD, ClientKeys, ClientSecurity, ServerKeyRefused, wrong_server_key

logger = logging.getLogger(__name__)

_LINGER_NS = 100_000_000
_CLOSE_LINGER = 0.15  # s the embedded driver stays up after close, to send end-of-stream
#: Seconds between connection checks of a client with nothing to send or await.
HOLD_CHECK_INTERVAL = 1.0



class Phase(Enum):
    JOIN = "join"
    HELLO = "hello"
    DUOLOGUE = "duologue"
    ECHO = "echo"
    DONE = "done"


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
        self._keys: ClientKeys | None = None  # secure mode: the duologue's keys in the driver
        self._auth_failed = False
        self._shared = aeron
        self._dir = dir
        self._driver: MediaDriver | None = None
        self._aeron: Aeron | None = aeron
        self._owned: list[ExclusivePublication | Subscription] = []  # publications/subscriptions to close
        self._initial_pub: ExclusivePublication | None = None
        self._initial_sub: Subscription | None = None
        self._pub: ExclusivePublication | None = None
        self._sub: Subscription | None = None
        self.phase = Phase.JOIN
        self._phase_deadline = 0.0
        self._next_hello = 0.0
        self._first_hello: float | None = None
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
        now = time.monotonic() if now is None else now
        if self._aeron is None:
            cleanup: dict[str, Any] = {} if self._dir is None else {"dir_delete_on_start": True, "dir_delete_on_shutdown": True}
            self._driver = MediaDriver(self._dir, publication_linger_timeout_ns=_LINGER_NS,
                                       secure_transport=self._security is not None, **cleanup)
            self._aeron = Aeron(driver=self._driver, use_conductor_agent_invoker=True, client_name="echo-client")
        if self._security is not None:
            self._keys = ClientKeys(self._security.transport_of(self._driver))
        self._initial_pub = self._publication(self.port, None)
        self._initial_sub = self._subscription(self.control_port, None)
        self._core.set_initial_session(self._initial_pub.session_id)
        self._phase_deadline = now + self.timeout
        return self

    def close(self) -> None:
        """Close channels, then the embedded client and driver (a secure duologue's keys
        once its last datagrams are out).  Idempotent."""
        owned, self._owned = self._owned, []
        for resource in reversed(owned):
            resource.close()
        if self._shared is None and self._aeron is not None:
            if owned and not self._aeron.is_closed:
                self._linger()
            self._aeron.close()
        if self._keys is not None:  # a shared driver still sends the closed channels' last datagrams
            self._keys.remove(delay=SHARED_KEY_HOLD if self._shared is not None else 0.0)
        if self._driver is not None:
            self._driver.close()

    def _linger(self) -> None:
        """Keep the embedded driver up briefly so closed publications send end-of-stream
        (the server then frees the duologue at once instead of after image liveness)."""
        assert self._aeron is not None
        deadline = time.monotonic() + _CLOSE_LINGER
        while time.monotonic() < deadline:
            self._aeron.do_work()
            time.sleep(0.005)

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

    # ---- channels

    def _publication(self, port: int, session_id: int | None) -> ExclusivePublication:
        assert self._aeron is not None
        uri, destination = publication_channel(self.address, port, session_id=session_id,
                                               interface=self.interface, term_length=self.term_length)
        pub = self._aeron.add_exclusive_publication(uri, STREAM_ID)
        self._owned.append(pub)
        if destination is not None:
            pub.add_destination(destination)
        return pub

    def _subscription(self, control_port: int, session_id: int | None) -> Subscription:
        assert self._aeron is not None
        sub = self._aeron.add_subscription(ChannelUri.udp(
            control=(self.address, control_port), control_mode="dynamic", reliable=True,
            session_id=session_id), STREAM_ID)
        self._owned.append(sub)
        return sub

    # ---- stepping

    def step(self, now: float | None = None) -> int:
        """Do whatever is due without blocking; returns the work done (0 = idle)."""
        if self._result is not None:
            return 0
        now = time.monotonic() if now is None else now
        work = self._aeron.do_work() if self._shared is None and self._aeron is not None else 0
        try:
            if self.phase is Phase.JOIN:
                work += self._step_join(now)
            if self.phase is Phase.HELLO:
                work += self._step_hello(now)
            if self.phase is Phase.DUOLOGUE:
                work += self._step_duologue(now)
            if self.phase is Phase.ECHO:
                work += self._step_echo(now)
        except (AeronError, OfferError) as exc:
            self._finish(self._fail(f"Aeron error: {error_summary(exc)}"))
            return work + 1
        if self._result is None:
            failure = self._core.tick(now)
            if failure is None and self.phase in (Phase.JOIN, Phase.DUOLOGUE) and now >= self._phase_deadline:
                failure = self._fail(self._not_connected())
            if failure is not None:
                self._finish(failure)
        return work

    def _not_connected(self) -> str:
        if self.phase is Phase.JOIN:
            return (f"no server answering at {self.address} port {self.port} control {self.control_port}: "
                    f"channels not connected within {self.timeout:g} s")
        d = self._core.duologue
        return f"duologue {d.session_id if d else '?'} not connected within {self.timeout:g} s"

    def _fail(self, reason: str) -> Failed:
        return self._core.fail(reason)

    def _step_join(self, now: float) -> int:
        assert self._initial_pub is not None and self._initial_sub is not None
        if not (self._initial_pub.is_connected and self._initial_sub.is_connected):
            return 0
        self.phase = Phase.HELLO
        return 1

    def _step_hello(self, now: float) -> int:
        assert self._initial_pub is not None and self._initial_sub is not None
        work = 0
        if now >= self._next_hello and self._initial_pub.offer(self._core.hello()) > 0:
            self._next_hello = now + self.hello_interval
            if self._first_hello is None:
                self._first_hello = now
            work += 1
        for data in self._initial_sub.poll_batch(10):
            work += 1
            reply = self._core.initial_reply(data, now)
            if isinstance(reply, ServerKeyOffered):
                self._trust(reply, now)
                if self._result is not None:
                    return work
                continue
            if isinstance(reply, Failed):
                self._auth_failed = wrong_server_key(reply)
                self._finish(reply)
                return work
            if isinstance(reply, OpenDuologue):
                self._handshake = now - (self._first_hello if self._first_hello is not None else now)
                self._open_duologue(reply, now)
                return work
        return work

    def _trust(self, offer: ServerKeyOffered, now: float) -> None:
        """Secure mode, no key known: record the server's key (trust on first use) and hello again."""
        assert self._security is not None and self._core.secure is not None
        try:
            self._security.offered(self.address, self.port, offer.public_key)
        except ServerKeyRefused as exc:
            self._auth_failed = True
            self._finish(self._fail(f"not trusting the server's key: {exc}"))
            return
        logger.info("echo server %s:%d: trusting its key on first use", self.address, self.port)
        self._core.secure.trust(offer.public_key)
        self._next_hello = now  # the HELLO-SECURE goes at once

    def _open_duologue(self, d: OpenDuologue, now: float) -> None:
        if d.keys is not None:
            assert self._keys is not None
            self._keys.install(d.keys)  # before the channels: no datagram of theirs goes unsealed
        self._sub = self._subscription(d.control_port, d.session_id)
        self._pub = self._publication(d.data_port, d.publication_session)
        self._close_broadcast()  # no longer needed: free it (and the server's fan-out)
        self.phase = Phase.DUOLOGUE
        self._phase_deadline = now + self.timeout

    def _step_duologue(self, now: float) -> int:
        assert self._pub is not None and self._sub is not None
        if not (self._pub.is_connected and self._sub.is_connected):
            return 0
        self.phase = Phase.ECHO
        if self.count == 0 and not self.hold:
            self._core.finish()
            self._finish(None)
        return 1

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

    def _close_broadcast(self) -> None:
        """Close the HELLO publication and the broadcast subscription.  Clients of one shared
        driver share the broadcast's image, and a subscription nobody polls holds it back:
        untethered, for the driver's window-limit timeout, again after every rest, and with
        it the CONNECTs of every client still handshaking."""
        for resource in (self._initial_pub, self._initial_sub):
            if resource is not None:
                self._owned.remove(resource)
                resource.close()
        self._initial_pub = self._initial_sub = None

    def _finish(self, failure: Failed | None) -> None:
        session = self._core.duologue.session_id if self._core.duologue is not None else None
        self._close_broadcast()  # a finished client polls nothing more (its duologue stays until close())
        self.phase = Phase.DONE
        self._result = EchoResult(
            ok=failure is None, echoes=self._core.echoes_ok, rtts=tuple(self._echoing.rtts),
            handshake=self._handshake, reason=None if failure is None else failure.reason,
            server_reason=None if failure is None else failure.server_reason, session_id=session,
            source_ip=self.source_ip, secure=self._security is not None, authentication_failed=self._auth_failed)
        if failure is not None:
            logger.info("echo client (%s) failed: %s", self.source_ip, failure.reason)
