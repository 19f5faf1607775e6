"""Sans-I/O Echo 2.0 client (guide "Echo 2.0 Specification", docs/spec/echo2.md §1, §4.10).

States: ``AWAIT_CONNECT`` (HELLO sent, waiting for our CONNECT/ERROR) -> ``ECHOING``
(duologue open, echoes checked in order) -> ``DONE`` (the glue called :meth:`finish`)
or ``FAILED`` (server ERROR, wrong echo, timeout, or :meth:`fail`).

The glue sends :meth:`hello`, tells the core its initial publication's session id
(:meth:`set_initial_session`), feeds broadcasts to :meth:`initial_reply`, opens the
duologue named by the returned :class:`OpenDuologue`, then alternates
:meth:`next_echo` / :meth:`duologue_reply` and calls :meth:`tick` periodically.

Timeout: while something is awaited (the CONNECT, or the oldest unanswered echo) the
core fails after ``timeout`` seconds without progress.  The deadline is armed by the
first call carrying ``now`` while waiting (``tick``, or ``next_echo(now=...)``) and is
re-armed by each correct reply.
"""

from __future__ import annotations

import logging
import random
from collections import deque
from dataclasses import dataclass, field
from enum import Enum

from ...validation import require_int
from .protocol import (
    INT32_MAX,
    INT32_MIN,
    Connect,
    CoreUsageError,
    Echoed,
    Ignored,
    Rejected,
    format_echo,
    format_hello,
    parse_duologue_reply,
    parse_echo,
    parse_initial_reply,
    session_from_crypt,
)
from .secure_client import SecureClientHello, ServerKeyOffered
from .secure_handshake import Refused, SecureConnected
from .secure_hello import DuologueKeys

logger = logging.getLogger(__name__)

DEFAULT_CLIENT_TIMEOUT = 10.0


class ClientState(Enum):
    """Where the client is in the protocol."""

    AWAIT_CONNECT = "await_connect"
    ECHOING = "echoing"
    DONE = "done"
    FAILED = "failed"


@dataclass(frozen=True)
class OpenDuologue:
    """Open the duologue: publication to ``data_port``, MDC subscription via ``control_port``.

    The subscription takes session ``session_id`` (the server's publication), the
    publication :attr:`publication_session`: the same id in plain mode; in secure mode
    the client's own session, and ``keys`` are both sessions' keys, to install in the
    driver before either channel exists."""

    data_port: int
    control_port: int
    session_id: int
    keys: DuologueKeys | None = field(default=None, repr=False)

    @property
    def publication_session(self) -> int:
        """The session id of the client's duologue publication."""
        return self.session_id if self.keys is None else self.keys.client_session


@dataclass(frozen=True)
class Failed:
    """The client failed; ``server_reason`` is set when the server sent ERROR."""

    reason: str
    server_reason: str | None = None


def random_key(rng: random.Random | None = None) -> int:
    """A fresh 32-bit one-time pad (``SystemRandom`` unless an rng is injected)."""
    return (rng if rng is not None else random.SystemRandom()).getrandbits(32)


def random_payload(rng: random.Random | None = None) -> bytes:
    """What the reference client echoes: a random 64-bit value as lowercase hex."""
    return f"{(rng if rng is not None else random.SystemRandom()).getrandbits(64):x}".encode("ascii")


class EchoClientCore:
    """Echo 2.0 client state machine (no I/O, no clocks)."""

    def __init__(
        self,
        key: int | None = None,
        initial_session_id: int | None = None,
        *,
        timeout: float = DEFAULT_CLIENT_TIMEOUT,
        rng: random.Random | None = None,
        secure: SecureClientHello | None = None,
    ) -> None:
        if not timeout > 0:
            raise ValueError(f"client timeout must be > 0 seconds, got {timeout!r}")
        self._key = random_key(rng) if key is None else key
        format_hello(self._key)  # validates the key range
        self._initial_session: int | None = None
        if initial_session_id is not None:
            self.set_initial_session(initial_session_id)
        self._timeout = timeout
        self._state = ClientState.AWAIT_CONNECT
        self._deadline: float | None = None
        self._outstanding: deque[bytes] = deque()
        self._failure: Failed | None = None
        self._duologue: OpenDuologue | None = None
        self._echoes_ok = 0
        self._secure = secure  # secure mode (docs/spec/echo2.md §5): its hello replaces HELLO <key>

    # ---- read-only views

    @property
    def key(self) -> int:
        """The one-time pad sent in HELLO."""
        return self._key

    @property
    def state(self) -> ClientState:
        """Current protocol state."""
        return self._state

    @property
    def failure(self) -> Failed | None:
        """Why the client failed (None unless FAILED)."""
        return self._failure

    @property
    def duologue(self) -> OpenDuologue | None:
        """The duologue the server assigned, once known."""
        return self._duologue

    @property
    def echoes_ok(self) -> int:
        """Echoes answered correctly so far."""
        return self._echoes_ok

    @property
    def outstanding(self) -> int:
        """Echoes sent but not yet answered."""
        return len(self._outstanding)

    @property
    def exit_code(self) -> int | None:
        """0 when DONE, 1 when FAILED (spec decision 10), None while running."""
        return {ClientState.DONE: 0, ClientState.FAILED: 1}.get(self._state)

    # ---- handshake

    def hello(self) -> bytes:
        """The ``HELLO <key>`` message for the all-clients publication."""
        self._require(ClientState.AWAIT_CONNECT, "hello")
        return format_hello(self._key) if self._secure is None else self._secure.message()

    @property
    def secure(self) -> SecureClientHello | None:
        """Secure mode's handshake (None: plain Echo 2.0)."""
        return self._secure

    def set_initial_session(self, session_id: int) -> None:
        """Record the session id of our initial publication (the CONNECT/ERROR prefix)."""
        self._initial_session = require_int("initial session id", session_id, min=INT32_MIN, max=INT32_MAX)

    def initial_reply(self, data: bytes, now: float) -> OpenDuologue | Failed | ServerKeyOffered | Ignored:
        """Handle one broadcast from the all-clients channel (``ServerKeyOffered``: secure
        mode without a server key; trust it with ``secure.trust(key)`` and send hello() again)."""
        if self._state is not ClientState.AWAIT_CONNECT:
            return Ignored(repr(bytes(data)), f"not awaiting CONNECT (state {self._state.value})")
        if self._initial_session is None:
            raise CoreUsageError("initial_reply before set_initial_session")
        if self._secure is not None:
            return self._secure_reply(self._secure.receive(data, self._initial_session))
        reply = parse_initial_reply(data, self._initial_session)
        if isinstance(reply, Ignored):
            logger.debug("ignored broadcast %r: %s", reply.text, reply.why)
            return reply
        if isinstance(reply, Rejected):
            return self._fail(f"server refused the HELLO: {reply.reason}", reply.reason)
        assert isinstance(reply, Connect)
        session = session_from_crypt(self._key, reply.crypt)
        self._duologue = OpenDuologue(reply.data_port, reply.control_port, session)
        self._state = ClientState.ECHOING
        self._deadline = None
        logger.info("server assigned duologue session %d on ports %d/%d",
                    session, reply.data_port, reply.control_port)
        return self._duologue

    def _secure_reply(self, reply: SecureConnected | ServerKeyOffered | Refused | Ignored
                      ) -> OpenDuologue | Failed | ServerKeyOffered | Ignored:
        if isinstance(reply, Refused):
            return self._fail(f"server refused the secure HELLO: {reply.explanation}", reply.reason)
        if not isinstance(reply, SecureConnected):
            return reply
        keys = reply.keys
        self._duologue = OpenDuologue(reply.data_port, reply.control_port, keys.server_session, keys)
        self._state = ClientState.ECHOING
        self._deadline = None
        logger.info("secure duologue: server session %d, client session %d, ports %d/%d",
                    keys.server_session, keys.client_session, reply.data_port, reply.control_port)
        return self._duologue

    # ---- echo phase

    def next_echo(self, payload: bytes, now: float | None = None) -> bytes:
        """The ``ECHO <payload>`` message to send; remembered for checking the reply."""
        self._require(ClientState.ECHOING, "next_echo")
        message = format_echo(payload)
        if parse_echo(message) is None:
            raise ValueError(f"echo payload {payload!r} contains a line terminator the server rejects")
        self._outstanding.append(message)
        if now is not None and self._deadline is None:
            self._deadline = now + self._timeout
        return message

    def duologue_reply(self, data: bytes, now: float) -> Echoed | Failed | Ignored:
        """Check one duologue message: it must equal the oldest unanswered echo."""
        if self._state in (ClientState.DONE, ClientState.FAILED):
            return Ignored(repr(bytes(data)), f"client already {self._state.value}")
        self._require(ClientState.ECHOING, "duologue_reply")
        reply = parse_duologue_reply(data)
        if isinstance(reply, Rejected):
            return self._fail(f"server error on duologue: {reply.reason}", reply.reason)
        if isinstance(reply, Ignored):
            return self._fail(f"unexpected duologue message {reply.text!r}: {reply.why}")
        if not self._outstanding:
            return self._fail(f"echo {bytes(data)!r} arrived but none was outstanding")
        expected = self._outstanding.popleft()
        if bytes(data) != expected:
            return self._fail(f"echo mismatch: sent {expected!r}, got {bytes(data)!r}")
        self._echoes_ok += 1
        self._deadline = now + self._timeout if self._outstanding else None
        return reply

    # ---- time and termination

    def tick(self, now: float) -> Failed | None:
        """Fail when the awaited CONNECT or echo is ``timeout`` seconds overdue."""
        awaiting = self._state is ClientState.AWAIT_CONNECT or (
            self._state is ClientState.ECHOING and self._outstanding
        )
        if not awaiting:
            return None
        if self._deadline is None:
            self._deadline = now + self._timeout
            return None
        if now < self._deadline:
            return None
        what = "CONNECT" if self._state is ClientState.AWAIT_CONNECT else "echo reply"
        return self._fail(f"no {what} within {self._timeout:g} s")

    def fail(self, reason: str) -> Failed:
        """Fail from outside (e.g. the duologue image went away)."""
        if self._state in (ClientState.DONE, ClientState.FAILED):
            raise CoreUsageError(f"fail() after the client is {self._state.value}")
        return self._fail(reason)

    def finish(self) -> None:
        """Stop successfully (only while echoing)."""
        self._require(ClientState.ECHOING, "finish")
        self._state = ClientState.DONE

    # ---- internals

    def _require(self, state: ClientState, what: str) -> None:
        if self._state is not state:
            raise CoreUsageError(f"{what}() needs state {state.value}, client is {self._state.value}")

    def _fail(self, reason: str, server_reason: str | None = None) -> Failed:
        # the caller hears of it (a Failed, then its exception): information, not an error here
        logger.info("duologue handshake failed: %s", reason)
        self._state = ClientState.FAILED
        self._deadline = None
        self._failure = Failed(reason, server_reason)
        return self._failure

