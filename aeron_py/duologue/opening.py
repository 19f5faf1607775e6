"""Opening a client duologue: the checked arguments of :func:`~.client.connect` and
:func:`~.client.connect_ipc`, and the handshake run to its end on the calling thread.

An :class:`Opening` is made by :func:`plan_udp` or :func:`plan_ipc` (ValueError for bad
arguments, nothing opened yet) and :meth:`Opening.run` opens its channels and steps the
handshake (:class:`~.handshake.ClientHandshake`) until it succeeds, fails (the
:class:`~.errors.DuologueError` that says why) or ``stop`` is set; whatever fails closes
everything it opened. The blocking :func:`~.client.connect` runs it on the caller's thread,
:func:`~.async_client.connect_async` on a thread of its own with ``stop`` for cancellation.
"""
from __future__ import annotations

import logging
import math
import os
import threading
import time
from dataclasses import dataclass

from ..client import Aeron
from ..errors import AeronError, error_summary
from ..idle import BackoffIdleStrategy
from ..secure import SecureTransport
from ..validation import require_int
from .client_security import ClientSecurity
from .core.client import EchoClientCore
from .errors import DuologueError, DuologueRefused, DuologueTimeout
from .client_channels import ClientChannels
from .handshake import ClientHandshake, Established, HandshakeFailed

__all__ = ["Opening", "plan_ipc", "plan_udp"]

logger = logging.getLogger("aeron_py.duologue.client")


@dataclass
class Opening:
    """A duologue about to be opened: its channels (not open yet), its protocol core, the
    secure mode, the overall ``deadline`` (monotonic seconds) and the shared client in
    conductor-invoker mode whose duty cycle the waits must run (``drive``)."""

    channels: ClientChannels
    core: EchoClientCore
    security: ClientSecurity | None
    timeout: float
    deadline: float
    max_message: int
    drive: Aeron | None

    def run(self, stop: threading.Event | None = None) -> Established | None:
        """Open the channels and run the handshake here until it ends: the established
        duologue, or None once ``stop`` is set (everything closed then); raises what
        :func:`~.client.connect` raises, with everything closed."""
        channels = self.channels
        try:
            channels.open()
            handshake = ClientHandshake(channels, self.core, timeout=self.timeout, security=self.security)
            handshake.start()
            if not self._step_until_done(handshake, stop):
                channels.close()
                return None
        except BaseException:
            channels.close()
            raise
        if handshake.established is not None:
            return handshake.established
        assert handshake.failed is not None
        channels.close()
        raise _error(handshake.failed, channels.peer, self.timeout)

    def _step_until_done(self, handshake: ClientHandshake, stop: threading.Event | None) -> bool:
        """Step until the handshake ends or the deadline passes (True), or ``stop`` is set (False)."""
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)
        while not handshake.finished:  # ends: the handshake's own phase deadlines, ``deadline``, ``stop``
            now = time.monotonic()
            if stop is not None and stop.is_set():
                return False
            if now >= self.deadline:
                handshake.expire()
                break
            work = self.drive.do_work() if self.drive is not None else 0
            try:
                work += handshake.step(now)
            except AeronError as exc:  # run() closes everything
                handshake.abandon(f"Aeron error: {error_summary(exc)}")
                raise
            idle.idle(work)
        return True


def _timing(what: str, timeout: float, max_message: int) -> float:
    """Check the common arguments; the deadline."""
    started = time.monotonic()
    if not timeout > 0 or math.isinf(timeout):
        raise ValueError(f"{what}: timeout must be a finite number of seconds > 0, got {timeout!r}")
    require_int(f"{what}: max_message", max_message, min=1)
    return started + timeout


def _drive(aeron: Aeron | None) -> Aeron | None:
    """The shared client whose duty cycle our waits must run (conductor-invoker mode), or None."""
    return aeron if aeron is not None and bool(aeron.settings().get("use_conductor_agent_invoker")) else None


def plan_udp(address: str, port: int, control_port: int, *, interface: str | None, timeout: float,
             secure_key: bytes | None, aeron: Aeron | None, key: int | None, max_message: int,
             secure_transport: SecureTransport | None) -> Opening:
    """:func:`~.client.connect`'s arguments, checked (ValueError), as an :class:`Opening`."""
    deadline = _timing("connect", timeout, max_message)
    if secure_key is not None and key is not None:
        raise ValueError("connect: key is a plain HELLO's one-time pad; secure mode (secure_key) has none")
    if secure_transport is not None and aeron is None:
        raise ValueError("connect: secure_transport is for a shared aeron client (an embedded driver has its own)")
    if secure_key is not None and aeron is not None and secure_transport is None:
        raise ValueError("connect: secure mode on a shared aeron client needs secure_transport, the secure "
                         "transport of that client's driver (MediaDriver(secure_transport=True).secure_transport)")
    security = None
    if secure_key is not None:
        security = ClientSecurity(server_key=secure_key, trust_on_first_use=False, transport=secure_transport)
    core = EchoClientCore(key, timeout=timeout, secure=None if security is None else security.hello(address, port))
    channels = ClientChannels(address, port, control_port, interface=interface, aeron=aeron, security=security,
                              invoker=False, client_name="duologue-client")
    return Opening(channels, core, security, timeout, deadline, max_message, _drive(aeron))


def plan_ipc(aeron_dir: str | os.PathLike[str], *, timeout: float, key: int | None, max_message: int,
             aeron: Aeron | None) -> Opening:
    """:func:`~.client.connect_ipc`'s arguments, checked (ValueError), as an :class:`Opening`."""
    deadline = _timing("connect_ipc", timeout, max_message)
    channels = ClientChannels.ipc(os.fspath(aeron_dir), aeron=aeron, invoker=False)
    return Opening(channels, EchoClientCore(key, timeout=timeout), None, timeout, deadline, max_message,
                   _drive(aeron))


def _error(failed: HandshakeFailed, peer: str, timeout: float) -> DuologueError:
    """The exception for a failed handshake with ``peer`` (``address:port``)."""
    if failed.server_reason is not None:
        logger.info("duologue with %s refused: %s", peer, failed.server_reason)
        return DuologueRefused(failed.server_reason, f"{peer}: {failed.reason}")
    if failed.waiting_for is not None:
        return DuologueTimeout(f"no duologue with {peer} within {timeout:g} s: waited for "
                               f"{failed.waiting_for}", failed.waiting_for)
    return DuologueError(f"no duologue with {peer}: {failed.reason}")
