"""A duologue server whose application is asyncio: one coroutine per duologue.

>>> async def upper(duologue: AsyncDuologue) -> None:
...     async for data in duologue:          # until the duologue closes
...         duologue.send(data.upper())
>>> async with AsyncDuologueServer(upper, ServerConfig(max_clients=16, clients_base_port=9010)):  # doctest: +SKIP
...     await asyncio.Event().wait()        # serve until cancelled

The :class:`~.loop.DuologueServer` still runs on its own thread with every defence; this
module bridges it to an event loop. On a duologue's first message the handler is started
as a task with an :class:`AsyncDuologue`; its messages are handed to the loop in order
(``call_soon_threadsafe``), and what the handler does (:meth:`AsyncDuologue.send`,
:meth:`~AsyncDuologue.reject`, :meth:`~AsyncDuologue.close`) is posted back to the server's
thread (:meth:`.DuologueServer.call_soon_threadsafe`), where it runs as a synchronous
application's call would. Neither thread ever waits for the other.

* Waiting: :meth:`AsyncDuologue.receive` (``None`` on timeout) and ``async for`` end with
  the duologue: :class:`~aeron_py.duologue.errors.DuologueClosed` from ``receive`` once
  every message before the close is out; the iteration simply stops.
* A handler that returns closes its duologue; one that raises closes it and is logged.
* A handler that falls ``max_pending`` messages behind closes its duologue (logged): a
  client cannot make the server queue without bound for a slow application.
* The server polls with a back-off instead of its quiet idle (``quiet_after=None``), so a
  posted send leaves within about a millisecond.
"""
from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable, Callable

from ..core.contract import CloseReason, DuologueInfo, ServerConfig
from ..errors import DuologueClosed
from .application import Duologue
from .loop import DuologueServer
from .options import ServerOptions

__all__ = ["AsyncDuologue", "AsyncDuologueServer", "Handler"]

logger = logging.getLogger("aeron_py.duologue.server")

#: What an asyncio application supplies: a coroutine run once per duologue.
Handler = Callable[["AsyncDuologue"], Awaitable[None]]
#: Messages a handler may fall behind before its duologue is closed.
DEFAULT_MAX_PENDING = 256
#: Seconds :meth:`AsyncDuologueServer.close` waits for handlers to end before cancelling them.
HANDLER_GRACE = 5.0


class AsyncDuologue:
    """One duologue as an asyncio application sees it (on the server's event loop)."""

    def __init__(self, server: AsyncDuologueServer, handle: Duologue) -> None:
        self.session_id = handle.session_id
        #: The client's address (``"ipc"`` for a same-host client over IPC).
        self.peer_ip = handle.peer_ip
        #: What the per-source limits count it under (``peer_ip``, or its IPv6 prefix).
        self.source_key = handle.source_key
        #: Opened by a secure handshake: its traffic is sealed in the media driver.
        self.secure = handle.secure
        self._handle = handle  # used on the server's thread only
        self._server = server
        self._messages: asyncio.Queue[bytes | None] = asyncio.Queue()  # None: closed
        self._close_reason: CloseReason | None = None

    @property
    def closed(self) -> bool:
        return self._close_reason is not None

    @property
    def close_reason(self) -> CloseReason | None:
        """Why it closed (None while open)."""
        return self._close_reason

    async def receive(self, timeout: float | None = None) -> bytes | None:
        """The next message; None when ``timeout`` seconds pass first (None: no limit).
        :class:`DuologueClosed` once it is closed and every earlier message was received."""
        if timeout is not None and not timeout >= 0:
            raise ValueError(f"receive: timeout must be None or seconds >= 0, got {timeout!r}")
        if self._messages.empty() and self._close_reason is not None:
            raise DuologueClosed(self._close_reason.value)
        try:
            data = await asyncio.wait_for(self._messages.get(), timeout)
        except TimeoutError:
            return None
        if data is None:  # the close: put back for any other waiter
            self._messages.put_nowait(None)
            assert self._close_reason is not None
            raise DuologueClosed(self._close_reason.value)
        return data

    def __aiter__(self) -> AsyncDuologue:
        return self

    async def __anext__(self) -> bytes:
        try:
            data = await self.receive()
        except DuologueClosed:
            raise StopAsyncIteration from None
        assert data is not None
        return data

    def send(self, data: bytes) -> None:
        """Queue ``data`` for the client (it leaves from the server's thread, in order)."""
        self._post(lambda: self._handle.send(bytes(data)))

    def reject(self) -> None:
        """The message was not understood: ``ERROR bad message``, then close."""
        self._post(self._handle.reject)

    def close(self) -> None:
        """Close the duologue (what was sent before is flushed first); idempotent."""
        if self._close_reason is None:
            self._post(self._handle.close)

    def info(self) -> DuologueInfo | None:
        """Its counters and ports now (None once closed)."""
        return next((d for d in self._server.server.duologues if d.session_id == self.session_id), None)

    def __repr__(self) -> str:
        state = "open" if self._close_reason is None else f"closed ({self._close_reason.value})"
        return f"<AsyncDuologue {self.session_id} {self.peer_ip}{' secure' if self.secure else ''} {state}>"

    def _post(self, call: Callable[[], object]) -> None:
        if self._close_reason is not None:
            raise DuologueClosed(self._close_reason.value)
        self._server.server.call_soon_threadsafe(call)

    # ---- the bridge's, on the event loop

    def _arrived(self, data: bytes, max_pending: int) -> None:
        if self._close_reason is not None:
            return
        if self._messages.qsize() >= max_pending:
            logger.warning("duologue %d: its handler is %d messages behind; closing it", self.session_id, max_pending)
            self.close()
            return
        self._messages.put_nowait(data)

    def _ended(self, reason: CloseReason) -> None:
        if self._close_reason is None:
            self._close_reason = reason
            self._messages.put_nowait(None)


class _Bridge:
    """The synchronous application the server's thread calls; hands everything to the loop."""

    def __init__(self, owner: AsyncDuologueServer, loop: asyncio.AbstractEventLoop) -> None:
        self._owner = owner
        self._loop = loop
        self._seen: set[int] = set()  # duologues whose first message was handed over

    def received(self, duologue: Duologue, data: bytes) -> None:
        first = duologue.session_id not in self._seen
        self._seen.add(duologue.session_id)
        self._hand_over(self._owner._arrived, duologue, data, first)

    def closed(self, duologue: Duologue, reason: CloseReason) -> None:
        if duologue.session_id in self._seen:
            self._seen.discard(duologue.session_id)
            self._hand_over(self._owner._ended, duologue.session_id, reason)

    def _hand_over(self, callback: Callable[..., None], *args: object) -> None:
        try:
            self._loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop is closed: nobody is left to hand it to
            logger.debug("event loop closed: dropped %s for %r", callback.__name__, args[:1])


class AsyncDuologueServer:
    """A :class:`~.loop.DuologueServer` whose application is ``handler``, a coroutine run
    once per duologue on the event loop that starts the server (:meth:`start` or
    ``async with``). ``config`` and ``options`` are the server's, except that its quiet idle
    is off. ``max_pending``: messages a handler may fall behind before its duologue closes."""

    def __init__(self, handler: Handler, config: ServerConfig, options: ServerOptions | None = None, *,
                 max_pending: int = DEFAULT_MAX_PENDING) -> None:
        if max_pending < 1:
            raise ValueError(f"AsyncDuologueServer: max_pending must be >= 1, got {max_pending!r}")
        self._handler = handler
        self._config = config
        self._options = dataclasses.replace(options or ServerOptions(), quiet_after=None)
        self._max_pending = max_pending
        self._server: DuologueServer | None = None
        self._duologues: dict[int, AsyncDuologue] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def server(self) -> DuologueServer:
        """The server underneath (its stats, ``driver_dir``, ``duologues``; thread-safe views)."""
        if self._server is None:
            raise RuntimeError("AsyncDuologueServer: start() it first")
        return self._server

    async def start(self, timeout: float = 10.0) -> AsyncDuologueServer:
        """Start serving (the server's thread); returns once it serves."""
        if self._server is not None:
            raise RuntimeError("AsyncDuologueServer.start() called twice")
        self._server = DuologueServer(_Bridge(self, asyncio.get_running_loop()), self._config, self._options)
        await asyncio.to_thread(self._server.start, timeout)
        return self

    async def close(self, timeout: float = 15.0) -> None:
        """Stop the server (every duologue closes), then wait up to :data:`HANDLER_GRACE` s
        for the handlers to end and cancel the rest."""
        if self._server is None:
            return
        try:
            await asyncio.to_thread(self._server.close, timeout)
        finally:
            await asyncio.sleep(0)  # the closes the server's thread handed over run now
            for duologue in self._duologues.values():
                duologue._ended(CloseReason.SHUTDOWN)
            if self._tasks:
                _, late = await asyncio.wait(self._tasks, timeout=HANDLER_GRACE)
                for task in late:
                    task.cancel()

    async def __aenter__(self) -> AsyncDuologueServer:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # ---- the bridge's, on the event loop

    def _arrived(self, handle: Duologue, data: bytes, first: bool) -> None:
        duologue = self._duologues.get(handle.session_id)
        if first or duologue is None:
            duologue = self._duologues[handle.session_id] = AsyncDuologue(self, handle)
            task = asyncio.get_running_loop().create_task(self._run(duologue), name=f"duologue-{handle.session_id}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        duologue._arrived(data, self._max_pending)

    def _ended(self, session_id: int, reason: CloseReason) -> None:
        duologue = self._duologues.pop(session_id, None)
        if duologue is not None:
            duologue._ended(reason)

    async def _run(self, duologue: AsyncDuologue) -> None:
        try:
            await self._handler(duologue)
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the handler's bug closes its duologue, not the server
            logger.exception("handler failed on duologue %d: closing it", duologue.session_id)
        if not duologue.closed:
            try:
                duologue.close()
            except DuologueClosed:
                pass
