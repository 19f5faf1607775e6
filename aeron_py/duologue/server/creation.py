"""Duologue channels asked of the media driver without blocking: attempts and their answers.

A duologue needs a subscription (its data port) and an exclusive publication (its
control port).  Both are asked with the asynchronous adds and polled once per loop
iteration; :class:`Attempt` holds one try, :class:`Pending` a duologue whose CONNECT
waits for its channels.

Why an add must never be forgotten: the C client gives an add up
on its own after its driver timeout (``aeron_client_conductor.c``: a registering
resource still AWAITING past ``registration_deadline_ns`` becomes TIMED_OUT and the
poll fails with "async_add_... no response from media driver").  If the driver was
merely slow it creates the channel later anyway, owned by our client, and the client
no longer knows its registration id: the channel and its port stay bound for the
client's lifetime.  So the glue (a) keeps polling an attempt it has given up on until
the client answers (made: closed at once), (b) bounds how many adds are in flight so
its shared driver cannot fall that far behind, and (c) when the client does time an
add out, never hands those ports out again (the bindings do not expose
``aeron_async_add_*_cancel``, which would remove it by registration id).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from ...channel import ChannelUri
from ...client import Aeron, PendingAdd
from ...errors import AeronError, DriverTimeoutError
from ...publication import ExclusivePublication
from ...subscription import Subscription
from ..core.contract import CreateDuologue
from ..core.protocol import STREAM_ID

if TYPE_CHECKING:
    from ...subscription import Image
    from .options import ServerOptions

__all__ = ["Attempt", "Pending", "is_driver_timeout", "start_attempt"]

#: ``on_image(key, up)``: the conductor callback for images coming (``up``) or going on subscription ``key``.
OnImage = Callable[[int | None, bool], Callable[["Image"], None]]

H = TypeVar("H")


def is_driver_timeout(exc: BaseException) -> bool:
    """True for an add the C client timed out itself (the driver may still create it): the
    extension raises it as :class:`~aeron_py.errors.DriverTimeoutError`
    (-AERON_CLIENT_ERROR_DRIVER_TIMEOUT)."""
    return isinstance(exc, DriverTimeoutError)


@dataclass
class Attempt:
    """One try at a duologue's channels: both adds are in flight until the client answers.

    A refused add leaves its handle None and the (first) refusal in ``error``;
    ``timed_out`` is set when the client gave an add up (see the module docstring).
    """

    data_port: int
    control_port: int
    sub_add: PendingAdd[Subscription] | None = None
    pub_add: PendingAdd[ExclusivePublication] | None = None
    sub: Subscription | None = None
    pub: ExclusivePublication | None = None
    error: AeronError | None = None
    timed_out: bool = False
    ipc: bool = False  # a same-host client's IPC channels: the "ports" are streams

    def poll(self) -> bool:
        """Poll the adds still in flight (never blocks); True once both are answered."""
        if self.sub_add is not None:
            self.sub_add, self.sub = self._settle(self.sub_add)
        if self.pub_add is not None:
            self.pub_add, self.pub = self._settle(self.pub_add)
        return self.sub_add is None and self.pub_add is None

    def _settle(self, add: PendingAdd[H]) -> tuple[PendingAdd[H] | None, H | None]:
        """(``add`` if still in flight else None, its handle if made)."""
        try:
            handle = add.poll()
        except AeronError as exc:
            self.error = self.error or exc
            if is_driver_timeout(exc):
                self.timed_out = True
            return None, None
        return (add, None) if handle is None else (None, handle)

    def close(self) -> None:
        """Close whatever the driver made (idempotent)."""
        if self.sub is not None:
            self.sub.close()
        if self.pub is not None:
            self.pub.close()


@dataclass
class Pending:
    """A duologue the core created whose channels do not exist yet; its CONNECT waits."""

    action: CreateDuologue
    deadline: float
    next_attempt: float = 0.0
    held: list[bytes] = field(default_factory=list)
    attempts: int = 0
    attempt: Attempt | None = None  # in flight


def start_attempt(aeron: Aeron, action: CreateDuologue, options: ServerOptions, on_image: OnImage) -> Attempt:
    """Ask the driver for a duologue's subscription and exclusive publication (never blocks).

    UDP: the subscription on ``data_port`` (only the client's session), the publication's
    control on ``control_port`` (dynamic MDC, the client subscribes through it). IPC (a
    same-host client): both ``aeron:ipc``, the client publishing on stream ``data_port``
    and we on ``control_port``, each with its session id. An add refused at once leaves
    its error in the attempt (handled as a refusal when the attempt is polled)."""
    a, o = action, options
    attempt = Attempt(a.data_port, a.control_port, ipc=a.ipc)
    on_up, on_down = on_image(a.session_id, True), on_image(a.session_id, False)
    if a.ipc:
        sub_uri, sub_stream = ChannelUri.ipc(session_id=a.client_session), a.data_port
        pub_uri = ChannelUri.ipc(session_id=a.session_id, term_length=o.term_length)
        pub_stream = a.control_port
    else:
        sub_uri = ChannelUri.udp(endpoint=(o.address, a.data_port), reliable=True, session_id=a.client_session)
        pub_uri = ChannelUri.udp(control=(o.address, a.control_port), control_mode="dynamic", reliable=True,
                                 session_id=a.session_id, term_length=o.term_length)
        sub_stream = pub_stream = STREAM_ID
    try:
        attempt.sub_add = aeron.async_add_subscription(sub_uri, sub_stream, on_available_image=on_up,
                                                       on_unavailable_image=on_down)
        attempt.pub_add = aeron.async_add_exclusive_publication(pub_uri, pub_stream)
    except AeronError as exc:  # not even sent
        attempt.error = exc
    return attempt
