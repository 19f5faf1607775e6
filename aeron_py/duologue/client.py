"""The client's side of a duologue: :func:`connect` opens one, :class:`ClientDuologue` carries it.

>>> with connect("127.0.0.1", 9000, 9001) as duologue:   # doctest: +SKIP
...     duologue.send(b"ECHO hi")
...     duologue.receive(timeout=5.0)
b'ECHO hi'

:func:`connect` runs the handshake (:mod:`.handshake`: ``HELLO`` on the server's
all-clients channel, our ``CONNECT`` or ``ERROR`` on its broadcast, then the duologue's
own channels), bounded by ``timeout``; it raises :class:`DuologueRefused` when the
server said no (``.reason``: ``server full``, ``too many connections for IP address``,
...) and :class:`DuologueTimeout` when something did not come in time (it says what).
With ``secure_key`` (the server's 32-byte public key) the handshake is secure mode's
Noise NK and the duologue's datagrams are sealed in the media driver.

Then the application's messages go both ways: any bytes up to the server's
``max_message`` (1024 by default; the client checks its own ``max_message`` before
sending).  The server may answer ``ERROR <reason>`` and close (``ERROR bad message``
for a message its application refused): :meth:`ClientDuologue.receive` and
:meth:`~ClientDuologue.poll` deliver every message before it, then raise
:class:`DuologueClosed` with that reason, as they do when the duologue's channels are
gone (the server closed it or died).  ``ERROR <reason>`` is the server's: an application
protocol should not use messages of that form itself.

Threads: a duologue belongs to one thread at a time.  Without ``aeron``, :func:`connect`
embeds a media driver and an Aeron client with its own conductor thread (a duologue
may sit idle for as long as its owner likes); with a shared ``aeron`` in
conductor-invoker mode, the duologue's waits run its duty cycle.
"""
from __future__ import annotations

import logging
import math
import os
import time
from collections import deque
from collections.abc import Callable

from ..client import Aeron
from .core.protocol import Rejected, parse_duologue_reply
from ..errors import RESULT_NAMES, PublicationClosedError
from ..idle import BackoffIdleStrategy
from ..publication import NOT_CONNECTED
from ..secure import SecureTransport
from ..validation import require_int
from .errors import CLOSED_HERE, SERVER_GONE, DuologueClosed, DuologueTimeout
from .client_channels import ClientChannels
from .handshake import Established
from .opening import Opening, plan_ipc, plan_udp

__all__ = ["DEFAULT_MAX_MESSAGE", "ClientDuologue", "connect", "connect_ipc"]

logger = logging.getLogger(__name__)

#: The longest message a duologue carries unless told otherwise (the server's ``--max-message``).
DEFAULT_MAX_MESSAGE = 1024


def connect(address: str, port: int, control_port: int, *, interface: str | None = None, timeout: float = 10.0,
            secure_key: bytes | None = None, aeron: Aeron | None = None, key: int | None = None,
            max_message: int = DEFAULT_MAX_MESSAGE, secure_transport: SecureTransport | None = None,
            ) -> ClientDuologue:
    """Open a duologue with the server whose all-clients channel is ``address:port``
    (broadcast via ``control_port``), within ``timeout`` seconds.

    ``interface``: send from this local address (the server counts its per-source limits
    by it).  ``secure_key``: the server's 32-byte public key: secure mode.  ``aeron``: a
    client to share (its owner closes it; secure mode then needs ``secure_transport``,
    the secure transport of that client's driver); else the duologue owns an embedded
    media driver and client, closed with it.  ``key``: the 32-bit one-time pad of a plain
    HELLO (default: random).  ``max_message``: the longest message :meth:`~ClientDuologue.send`
    accepts.

    Raises :class:`DuologueRefused`, :class:`DuologueTimeout`, :class:`DuologueError`
    (secure mode: the server's key could not be used), ValueError for bad arguments, and
    :class:`~aeron_py.errors.AeronError` when Aeron fails; nothing is left open then.
    """
    opening = plan_udp(address, port, control_port, interface=interface, timeout=timeout, secure_key=secure_key,
                       aeron=aeron, key=key, max_message=max_message, secure_transport=secure_transport)
    duologue = opened(opening, opening.run())
    logger.info("duologue %d with %s:%d open (%s, handshake %.3f s)", duologue.session_id, address, port,
                "secure" if duologue.secure else "plain", duologue.handshake)
    return duologue


def connect_ipc(aeron_dir: str | os.PathLike[str], *, timeout: float = 10.0, key: int | None = None,
                max_message: int = DEFAULT_MAX_MESSAGE, aeron: Aeron | None = None) -> ClientDuologue:
    """Open a duologue with a server on this host through its own media driver (in
    ``aeron_dir``: :attr:`DuologueServer.driver_dir <aeron_py.duologue.DuologueServer.driver_dir>`),
    within ``timeout`` seconds: no UDP port at all, the duologue's messages go through
    shared memory. The server must serve IPC clients (``ServerConfig.max_ipc_clients``);
    the handshake is the plain one (HELLO, CONNECT naming two streams). The duologue
    owns an Aeron client of that driver (with its own conductor thread), closed with it;
    or, many duologues of one process share ``aeron``, a client of that same driver
    (its owner closes it; in conductor-invoker mode the duologue's waits drive it).

    Raises :class:`DuologueRefused` (``server full``: its IPC places are taken),
    :class:`DuologueTimeout` (no server serving IPC clients there), ValueError for bad
    arguments, and :class:`~aeron_py.errors.AeronError` when the driver cannot be reached
    (no media driver in ``aeron_dir``); nothing is left open then.
    """
    opening = plan_ipc(aeron_dir, timeout=timeout, key=key, max_message=max_message, aeron=aeron)
    duologue = opened(opening, opening.run())
    logger.info("IPC duologue %d open through %s (handshake %.3f s)", duologue.session_id, aeron_dir,
                duologue.handshake)
    return duologue


def opened(opening: Opening, established: Established | None) -> ClientDuologue:
    """The :class:`ClientDuologue` of an opening that ran to success."""
    assert established is not None  # run() without stop ends established or raising
    return ClientDuologue(opening.channels, established, max_message=opening.max_message, drive=opening.drive)


class ClientDuologue:
    """One open duologue, as :func:`connect` returns it: :meth:`send`, :meth:`receive`
    (waiting, bounded), :meth:`poll` (step-driven, no waiting), :meth:`close`.

    ``session_id``: the duologue's session (the server's publication); ``secure``: opened
    by secure mode's handshake; ``handshake``: seconds from the first HELLO to the CONNECT.
    """

    def __init__(self, channels: ClientChannels, established: Established, *,
                 max_message: int = DEFAULT_MAX_MESSAGE, drive: Aeron | None = None) -> None:
        self.max_message = require_int("ClientDuologue: max_message", max_message, min=1)
        self.session_id = established.session_id
        self.secure = established.duologue.keys is not None
        self.handshake = established.handshake
        self.address, self.port = channels.address, channels.port
        self._channels = channels
        self._pub = established.publication
        self._sub = established.subscription
        self._drive = drive  # a shared client in invoker mode: its duty cycle runs in our waits
        self._pending: deque[bytes] = deque()  # received, not yet handed out (all before any ERROR)
        self._closed_reason: str | None = None  # set: nothing more arrives or can be sent

    @property
    def closed(self) -> bool:
        """True once closed here, by the server's ERROR or with the channels gone (messages
        received before that may still be pending: :meth:`receive` hands them out first)."""
        return self._closed_reason is not None

    @property
    def close_reason(self) -> str | None:
        """Why the duologue is closed (None while open)."""
        return self._closed_reason

    # ---- sending

    def send(self, data: bytes, timeout: float = 5.0) -> None:
        """Send one message, retrying while the publication is back-pressured, not connected
        or in an admin action, for at most ``timeout`` seconds.

        ValueError: longer than ``max_message``.  :class:`DuologueClosed`: the duologue is
        closed (here or by the server).  :class:`DuologueTimeout`: not accepted in time.
        """
        if len(data) > self.max_message:
            raise ValueError(f"message of {len(data)} bytes is longer than max_message ({self.max_message})")
        if not timeout >= 0 or math.isinf(timeout):
            raise ValueError(f"send: timeout must be a finite number of seconds >= 0, got {timeout!r}")
        self._require_open()
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)
        deadline = time.monotonic() + timeout
        while True:  # ends: accepted, closed, or ``deadline``
            work = self._work()
            try:
                result = self._pub.offer(data)
            except PublicationClosedError:
                raise self._close_on(SERVER_GONE if not self._sub.is_connected else "its publication was closed") \
                    from None
            if result > 0:
                return
            if result == NOT_CONNECTED and not self._sub.is_connected:
                raise self._close_on(SERVER_GONE)
            if time.monotonic() >= deadline:
                what = f"the duologue publication to accept a message (still {RESULT_NAMES.get(result, result)})"
                raise DuologueTimeout(f"duologue {self.session_id}: send not accepted within {timeout:g} s: "
                                      f"offer still {RESULT_NAMES.get(result, result)}", what)
            idle.idle(work)

    # ---- receiving

    def receive(self, timeout: float | None = None) -> bytes | None:
        """The next message; None when ``timeout`` seconds pass without one (``None``: wait
        until a message comes or the duologue closes; 0: only what is already there).

        :class:`DuologueClosed` once every message before the close is handed out: the
        server sent ``ERROR <reason>``, or the duologue's channels are gone.
        """
        if timeout is not None and not timeout >= 0:
            raise ValueError(f"receive: timeout must be None or seconds >= 0, got {timeout!r}")
        if self._pending:
            return self._pending.popleft()
        self._raise_if_closed()
        deadline = math.inf if timeout is None else time.monotonic() + timeout
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)
        while True:  # ends: a message, the close (the server's ERROR or its image gone), or ``deadline``
            work = self._work() + self._fill(10)
            if self._pending:
                return self._pending.popleft()
            self._raise_if_closed()
            if time.monotonic() >= deadline:
                return None
            idle.idle(work)

    def poll(self, handler: Callable[[bytes], None], limit: int = 10) -> int:
        """Hand up to ``limit`` messages that have arrived to ``handler``, without waiting;
        returns how many.  :class:`DuologueClosed` when closed and none is left.  A message
        whose handler raises counts as handed out (the exception propagates)."""
        require_int("poll: limit", limit, min=1)
        if not self._pending:
            self._raise_if_closed()
        if len(self._pending) < limit and self._closed_reason is None:
            self._work()
            self._fill(limit - len(self._pending))
        count = 0
        while self._pending and count < limit:
            data = self._pending.popleft()
            count += 1
            handler(data)
        if count == 0:
            self._raise_if_closed()
        return count

    # ---- closing

    def close(self) -> None:
        """Close the duologue's channels (and the embedded driver and client); idempotent.
        Messages not yet received are dropped."""
        if self._channels.closed:
            return
        if self._closed_reason is None:
            self._closed_reason = CLOSED_HERE
        self._pending.clear()
        self._channels.close()
        logger.info("duologue %d with %s:%d closed (%s)", self.session_id, self.address, self.port,
                    self._closed_reason)

    def __enter__(self) -> ClientDuologue:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "open" if self._closed_reason is None else f"closed ({self._closed_reason})"
        return (f"<ClientDuologue {self.session_id} with {self.address}:{self.port}"
                f"{' secure' if self.secure else ''} {state}>")

    # ---- internals

    def _work(self) -> int:
        if self._drive is not None and not self._drive.is_closed:
            return self._drive.do_work()
        return 0

    def _fill(self, limit: int) -> int:
        """Move up to ``limit`` arrived messages to the pending queue; the server's ERROR
        closes the duologue (and drops anything after it); so does the image going away."""
        if self._closed_reason is not None:
            return 0
        batch = self._sub.poll_batch(limit)
        for data in batch:
            reply = parse_duologue_reply(data) if data.startswith(b"ERROR ") else None
            if isinstance(reply, Rejected):
                logger.info("duologue %d: the server sent ERROR %s", self.session_id, reply.reason)
                self._close_on(reply.reason)
                break
            self._pending.append(data)
        if not batch and not self._sub.is_connected:
            self._close_on(SERVER_GONE)
        return len(batch)

    def _close_on(self, reason: str) -> DuologueClosed:
        """Record why the duologue ended (the first reason wins); the exception to raise."""
        if self._closed_reason is None:
            self._closed_reason = reason
            if reason != CLOSED_HERE:
                logger.info("duologue %d with %s:%d ended: %s", self.session_id, self.address, self.port, reason)
        return DuologueClosed(self._closed_reason)

    def _require_open(self) -> None:
        if self._closed_reason is not None:
            raise DuologueClosed(self._closed_reason)

    def _raise_if_closed(self) -> None:
        if self._closed_reason is not None and not self._pending:
            raise DuologueClosed(self._closed_reason)
