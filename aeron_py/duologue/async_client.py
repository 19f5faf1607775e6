"""The client's side of a duologue on asyncio: :func:`connect_async` opens one,
:class:`AsyncClientDuologue` carries it (a :class:`~.client.ClientDuologue` inside).

>>> async with await connect_async("127.0.0.1", 9000, 9001) as duologue:   # doctest: +SKIP
...     await duologue.send(b"ECHO hi")
...     await duologue.receive(timeout=5.0)
b'ECHO hi'
>>> async for message in duologue: ...   # until the server closes it   # doctest: +SKIP

Nothing blocks the event loop.  The Echo asyncio client starts its driver on a worker
thread, then creates :mod:`aeron_py.asyncio` channels by awaiting; a duologue lives on the
blocking client's channels, whose creation waits for the driver, so :func:`connect_async`
runs :func:`~.client.connect`'s whole handshake on a thread of its own (parking in Aeron's
idle strategy, as ``connect`` does) and awaits its end.  Cancelled, it sets an event the
thread checks between steps: everything opened is closed before ``CancelledError`` goes on.

Then waiting is on the loop: each look is a non-blocking ``receive(timeout=0)`` or
``send(timeout=0)``, and between looks :func:`aeron_py.asyncio.backoff.poll_until` sleeps as
:class:`~aeron_py.asyncio.Backoff` says (a short spin of loop iterations, then 1 ms loop
timers doubling to 4 ms): no thread, no busy spin.  (The poller-thread waker serves
:mod:`aeron_py.asyncio` subscriptions only.)  A cancelled or timed-out receive loses no message.
One event loop owns a duologue: another loop using it gets RuntimeError, as does a second
:meth:`~AsyncClientDuologue.receive` (or ``async for``) while one waits.
"""
from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
from typing import overload

from ..asyncio.backoff import Backoff, poll_until
from ..client import Aeron
from ..errors import AeronTimeoutError
from ..secure import SecureTransport
from .client import DEFAULT_MAX_MESSAGE, ClientDuologue, opened
from .errors import CLOSED_HERE, SERVER_GONE, DuologueClosed, DuologueTimeout
from .opening import Opening, plan_ipc, plan_udp

__all__ = ["AsyncClientDuologue", "connect_async", "connect_ipc_async"]

logger = logging.getLogger(__name__)


async def connect_async(address: str, port: int, control_port: int, *, interface: str | None = None,
                        timeout: float = 10.0, secure_key: bytes | None = None, aeron: Aeron | None = None,
                        key: int | None = None, max_message: int = DEFAULT_MAX_MESSAGE,
                        secure_transport: SecureTransport | None = None) -> AsyncClientDuologue:
    """:func:`~.client.connect` without blocking the event loop: the same arguments and errors.
    A shared ``aeron`` must run its own conductor thread (the handshake runs on another thread).
    Cancelled, it closes whatever was opened before ``CancelledError`` propagates."""
    opening = plan_udp(address, port, control_port, interface=interface, timeout=timeout, secure_key=secure_key,
                       aeron=aeron, key=key, max_message=max_message, secure_transport=secure_transport)
    return await _open(opening, f"{address}:{port}")


async def connect_ipc_async(aeron_dir: str | os.PathLike[str], *, timeout: float = 10.0, key: int | None = None,
                            max_message: int = DEFAULT_MAX_MESSAGE, aeron: Aeron | None = None) -> AsyncClientDuologue:
    """:func:`~.client.connect_ipc` without blocking the event loop: the same arguments and
    errors, cancelled as :func:`connect_async` is."""
    opening = plan_ipc(aeron_dir, timeout=timeout, key=key, max_message=max_message, aeron=aeron)
    return await _open(opening, opening.channels.peer)


async def _open(opening: Opening, peer: str) -> AsyncClientDuologue:
    """Run ``opening`` on a thread of its own; cancelled, stop it and close what it opened."""
    if opening.drive is not None:
        raise ValueError("connect_async: a shared aeron client in conductor-invoker mode cannot be driven here")
    loop = asyncio.get_running_loop()
    outcome: asyncio.Future[ClientDuologue | None] = loop.create_future()
    stop = threading.Event()

    def handshake() -> None:  # the worker thread
        result: ClientDuologue | BaseException | None
        try:
            established = opening.run(stop)
            result = None if established is None else opened(opening, established)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting coroutine
            result = exc
        if isinstance(result, ClientDuologue) and stop.is_set():
            result.close()
            result = None
        try:
            loop.call_soon_threadsafe(_settle, outcome, result)
        except RuntimeError:  # the loop is closed: nobody takes the duologue
            if isinstance(result, ClientDuologue):
                result.close()

    threading.Thread(target=handshake, name=f"duologue-connect-{peer}").start()
    try:
        duologue = await asyncio.shield(outcome)
    except asyncio.CancelledError as cancelled:
        stop.set()
        logger.info("connect_async to %s cancelled: closing what it opened", peer)
        try:
            late = await asyncio.shield(outcome)  # the thread ends within a step and the close
        except asyncio.CancelledError:  # cancelled again: the thread closes, a late duologue is closed here
            outcome.add_done_callback(_close_late)
            raise
        except BaseException:  # noqa: BLE001 - it failed: connect's failures leave nothing open
            raise cancelled from None
        if late is not None:  # it had just succeeded when the cancel came
            await asyncio.to_thread(late.close)
        raise cancelled
    assert duologue is not None
    logger.info("duologue %d with %s open (%s, handshake %.3f s)", duologue.session_id, peer,
                "secure" if duologue.secure else "plain", duologue.handshake)
    return AsyncClientDuologue(duologue)


def _settle(outcome: asyncio.Future[ClientDuologue | None], result: ClientDuologue | BaseException | None) -> None:
    if isinstance(result, BaseException):
        outcome.set_exception(result)
    else:
        outcome.set_result(result)


def _close_late(outcome: asyncio.Future[ClientDuologue | None]) -> None:
    if not outcome.cancelled() and outcome.exception() is None and (duologue := outcome.result()) is not None:
        threading.Thread(target=duologue.close, name="duologue-close").start()


class AsyncClientDuologue:
    """One open duologue on an event loop (the first that uses it): ``await`` :meth:`send` and
    :meth:`receive`, ``async for`` its messages, ``async with`` or :meth:`aclose` to close it.
    ``backoff``: how waiters sleep between looks (:class:`aeron_py.asyncio.Backoff`)."""

    def __init__(self, duologue: ClientDuologue, *, backoff: Backoff | None = None) -> None:
        self.duologue = duologue
        self._backoff = backoff if backoff is not None else Backoff()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: int | None = None
        self._receiving = False
        self._sending = 0
        self._shut = False  # close() or aclose() called: the loop touches the duologue no more
        self._closer: asyncio.Future[None] | None = None

    @property
    def closed(self) -> bool:
        """True once closed (messages that came before may still be pending: see :meth:`receive`)."""
        return self._shut or self.duologue.closed

    @property
    def close_reason(self) -> str | None:
        """Why the duologue is closed (None while open)."""
        return self.duologue.close_reason or (CLOSED_HERE if self._shut else None)

    @property
    def secure(self) -> bool:
        """Opened by secure mode's handshake."""
        return self.duologue.secure

    @property
    def session_id(self) -> int:
        """The duologue's session (the server's publication)."""
        return self.duologue.session_id

    async def send(self, data: bytes, timeout: float = 5.0) -> None:
        """Send one message, waiting out back pressure for at most ``timeout`` seconds;
        errors as :meth:`ClientDuologue.send` (ValueError, DuologueClosed, DuologueTimeout)."""
        self._own("send")
        if not timeout >= 0 or math.isinf(timeout):
            raise ValueError(f"send: timeout must be a finite number of seconds >= 0, got {timeout!r}")
        waited: list[str] = []

        def offer() -> bool:
            self._require_open()
            try:
                self.duologue.send(data, 0.0)
            except DuologueTimeout as exc:
                waited[:] = [exc.waiting_for]
                return False
            return True

        self._sending += 1
        try:
            await poll_until(offer, timeout, "send", self._backoff)
        except AeronTimeoutError:
            raise DuologueTimeout(f"duologue {self.session_id}: send not accepted within {timeout:g} s: waited "
                                  f"for {waited[0]}", waited[0]) from None
        finally:
            self._sending -= 1

    @overload
    async def receive(self, timeout: None = None) -> bytes: ...
    @overload
    async def receive(self, timeout: float) -> bytes | None: ...

    async def receive(self, timeout: float | None = None) -> bytes | None:
        """The next message; None when ``timeout`` seconds pass without one, as
        :meth:`ClientDuologue.receive` (``None``: wait until a message or the close; 0: only
        what is there).  :class:`DuologueClosed` once every message before the close is out."""
        self._own("receive")
        if timeout is not None and not timeout >= 0:
            raise ValueError(f"receive: timeout must be None or seconds >= 0, got {timeout!r}")
        if self._receiving:
            raise RuntimeError("receive already in progress (one receiver at a time)")

        def look() -> bytes | None:
            self._require_open()
            return self.duologue.receive(0)

        self._receiving = True
        try:
            return await poll_until(look, timeout, "receive", self._backoff)
        except AeronTimeoutError:
            return None
        finally:
            self._receiving = False

    def __aiter__(self) -> AsyncClientDuologue:
        return self

    async def __anext__(self) -> bytes:
        """The next message.  The iteration ends when the duologue closes without an error
        (the server closed it or went away: ``close_reason`` :data:`SERVER_GONE`; or it was
        closed here); the server's ``ERROR <reason>`` raises :class:`DuologueClosed`."""
        try:
            return await self.receive()
        except DuologueClosed as exc:
            if exc.reason in (SERVER_GONE, CLOSED_HERE):
                raise StopAsyncIteration from None
            raise

    def close(self) -> None:
        """Close now, blocking for the embedded driver's stop (a fraction of a second; in a
        coroutine prefer :meth:`aclose`); idempotent.  Waiting receivers get DuologueClosed."""
        if self._thread is not None and threading.get_ident() != self._thread and (self._receiving or self._sending):
            raise RuntimeError("close: the duologue is in use on its event loop's thread; close it there")
        self._shut = True
        if self._closer is None:  # else aclose() is closing it on a worker thread
            self.duologue.close()

    async def aclose(self) -> None:
        """Close on a worker thread, the loop running meanwhile; idempotent."""
        self._own("aclose")
        self._shut = True  # from here on, no look of a waiter touches the duologue
        if self._closer is None:
            self._closer = asyncio.ensure_future(asyncio.to_thread(self.duologue.close))
        await asyncio.shield(self._closer)

    async def __aenter__(self) -> AsyncClientDuologue:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"<Async{repr(self.duologue)[1:]}"

    def _own(self, what: str) -> None:
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop, self._thread = loop, threading.get_ident()
        elif loop is not self._loop:
            raise RuntimeError(f"{what}: this duologue belongs to another event loop")

    def _require_open(self) -> None:
        if self._shut:
            raise DuologueClosed(self.duologue.close_reason or CLOSED_HERE)
