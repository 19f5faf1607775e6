"""The Aeron client (``aeron_t``) as a context manager.

>>> with Aeron(dir=driver.dir) as aeron:
...     pub = aeron.add_publication("aeron:ipc", 10)
...     sub = aeron.add_subscription("aeron:ipc", 10)

Every add waits, bounded by ``timeout``, for the media driver's answer; a bad channel
raises :class:`~aeron_py.errors.AeronError` with the driver's own message.
"""
from __future__ import annotations

import atexit
import logging
import os
import time
import weakref
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from . import _aeron
from .errors import AeronError, AeronTimeoutError, ClientClosedError
from .idle import BackoffIdleStrategy
from .publication import ExclusivePublication, Publication
from .stat import Counter, counters_from
from .subscription import ImageHandler, Subscription, wrap_image_handler

logger = logging.getLogger(__name__)
T = TypeVar("T")
ErrorHandler = Callable[[int, str], Any]
_live: "weakref.WeakSet[Aeron]" = weakref.WeakSet()


def wait_for(poll: Callable[[], T | None], timeout: float, what: str,
             work: Callable[[], int] | None = None) -> T:
    """Call ``poll`` until it returns something other than None/False, for at most ``timeout`` s.

    ``work`` (the client's conductor duty cycle in invoker mode) runs between polls.
    """
    idle = BackoffIdleStrategy(max_park_ns=1_000_000)
    deadline = time.monotonic() + timeout
    while True:
        result = poll()
        if result is not None and result is not False:
            return result
        if time.monotonic() >= deadline:
            raise AeronTimeoutError(f"{what}: no answer from the media driver within {timeout} s")
        idle.idle(work() if work is not None else 0)


class PendingAdd(Generic[T]):
    """An add the media driver has not answered yet (``aeron_async_add_*``).

    Call :meth:`poll` from your loop: it returns the new handle once the driver has
    created it, None until then, and raises :class:`~aeron_py.errors.AeronError` with
    the driver's message if the driver refused. Never blocks.
    """

    __slots__ = ("_raw", "_wrap", "_result", "description")

    def __init__(self, raw: Any, wrap: Callable[[Any], T], description: str) -> None:
        self._raw, self._wrap, self._result = raw, wrap, None
        self.description = description

    @property
    def registration_id(self) -> int:
        return self._raw.registration_id

    def poll(self) -> T | None:
        """The handle once the driver answered, else None (``aeron_async_add_*_poll``)."""
        if self._result is None:
            raw = self._raw.poll()
            if raw is not None:
                self._result = self._wrap(raw)
        return self._result

    def __repr__(self) -> str:
        return f"<PendingAdd {self.description}{' done' if self._result is not None else ''}>"


def _log_error(errcode: int, message: str) -> None:
    logger.error("aeron client error %d: %s", errcode, message)


def _channel(channel: object) -> str:
    text = str(channel)
    if not text:
        raise ValueError("channel must not be empty (e.g. 'aeron:ipc' or 'aeron:udp?endpoint=127.0.0.1:40123')")
    return text


class Aeron:
    """An Aeron client connected to a media driver (``aeron_init`` + ``aeron_start``).

    ``dir``: the driver's directory (default: ``driver.dir``, then ``$AERON_DIR``, then
    Aeron's default path).  ``timeout``: how long to wait for the driver at start
    (``driver_timeout_ms``).  ``resource_timeout``: default bound for adds.
    ``error_handler(errcode, message)`` runs on the client conductor thread (default:
    log at ERROR).  ``use_conductor_agent_invoker=True`` runs no thread: call
    :meth:`do_work` from your loop; callbacks then run there.
    """

    def __init__(self, dir: str | os.PathLike[str] | None = None, *, driver: Any = None,
                 timeout: float = 10.0, resource_timeout: float = 5.0,
                 error_handler: ErrorHandler | None = _log_error, use_conductor_agent_invoker: bool = False,
                 client_name: str | None = None, **context_options: Any) -> None:
        if dir is None and driver is not None:
            dir = driver.dir
        if dir is None:
            dir = os.environ.get("AERON_DIR") or _aeron.default_path()
        self._dir = str(dir)
        self.resource_timeout = resource_timeout
        self._invoker = use_conductor_agent_invoker
        try:
            self._client: Any = _aeron.Client(
                dir=self._dir, driver_timeout_ms=int(timeout * 1000), error_handler=error_handler,
                use_conductor_agent_invoker=use_conductor_agent_invoker, client_name=client_name,
                **context_options)
        except AeronError as exc:
            raise type(exc)(f"cannot connect to a media driver in {self._dir!r}: {exc}") from None
        self._work = self._client.main_do_work if use_conductor_agent_invoker else None
        _live.add(self)

    @property
    def dir(self) -> str:
        return self._dir

    @property
    def client_id(self) -> int:
        return self._client.client_id

    @property
    def is_closed(self) -> bool:
        """True once closed by :meth:`close`, or by the client itself (e.g. driver timeout)."""
        return self._client.is_closed

    def do_work(self) -> int:
        """One conductor duty cycle (``aeron_main_do_work``); only with the agent invoker."""
        if not self._invoker:
            raise AeronError("do_work() needs Aeron(use_conductor_agent_invoker=True)")
        return self._client.main_do_work()

    def _wait(self, pending: PendingAdd[T], timeout: float | None) -> T:
        return wait_for(pending.poll, self.resource_timeout if timeout is None else timeout, pending.description,
                        self._work)

    def async_add_publication(self, channel: object, stream_id: int) -> PendingAdd[Publication]:
        """Start adding a concurrent publication without waiting (``aeron_async_add_publication``)."""
        uri = _channel(channel)
        return PendingAdd(self._require().async_add_publication(uri, stream_id),
                          lambda raw: Publication(raw, self._work), f"add_publication({uri!r}, {stream_id})")

    def async_add_exclusive_publication(self, channel: object, stream_id: int) -> PendingAdd[ExclusivePublication]:
        """Start adding an exclusive publication without waiting."""
        uri = _channel(channel)
        return PendingAdd(self._require().async_add_exclusive_publication(uri, stream_id),
                          lambda raw: ExclusivePublication(raw, self._work),
                          f"add_exclusive_publication({uri!r}, {stream_id})")

    def async_add_subscription(self, channel: object, stream_id: int, *,
                               on_available_image: ImageHandler | None = None,
                               on_unavailable_image: ImageHandler | None = None) -> PendingAdd[Subscription]:
        """Start adding a subscription without waiting; see :meth:`add_subscription` for the callbacks."""
        uri = _channel(channel)
        raw = self._require().async_add_subscription(
            uri, stream_id, wrap_image_handler(on_available_image), wrap_image_handler(on_unavailable_image))
        return PendingAdd(raw, lambda r: Subscription(r, self._work), f"add_subscription({uri!r}, {stream_id})")

    def add_publication(self, channel: object, stream_id: int, *, timeout: float | None = None) -> Publication:
        """A concurrent publication, waiting (bounded) for the driver."""
        return self._wait(self.async_add_publication(channel, stream_id), timeout)

    def add_exclusive_publication(self, channel: object, stream_id: int, *,
                                  timeout: float | None = None) -> ExclusivePublication:
        """A single-writer publication, waiting (bounded) for the driver."""
        return self._wait(self.async_add_exclusive_publication(channel, stream_id), timeout)

    def add_subscription(self, channel: object, stream_id: int, *,
                         on_available_image: ImageHandler | None = None,
                         on_unavailable_image: ImageHandler | None = None,
                         timeout: float | None = None) -> Subscription:
        """A subscription, waiting (bounded) for the driver.

        Image callbacks run on the client conductor thread (or in :meth:`do_work`):
        keep them short and do not call back into the client from them.
        """
        return self._wait(self.async_add_subscription(channel, stream_id, on_available_image=on_available_image,
                                                      on_unavailable_image=on_unavailable_image), timeout)

    def counters(self) -> list[Counter]:
        """Every allocated counter of the driver (``aeron_counters_reader_foreach_counter``)."""
        return counters_from(self._require().counters_reader())

    def close(self) -> None:
        """``aeron_close``: closes every publication and subscription made here. Idempotent."""
        _live.discard(self)
        self._client.close()

    def _require(self) -> Any:
        if self._client.is_closed:
            raise ClientClosedError(f"the Aeron client for {self._dir!r} is closed")
        return self._client

    def __enter__(self) -> "Aeron":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Aeron dir={self._dir!r}{' closed' if self._client.is_closed else ''}>"


@atexit.register
def _close_live_clients() -> None:
    for client in list(_live):
        client.close()
