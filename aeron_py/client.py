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
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from . import _aeron
from .driver import MediaDriver
from .errors import AeronError, ClientClosedError, RetryLaterError
from .publication import ExclusivePublication, Publication
from .stat import Counter, counters_from

ClientCounter = _aeron.ClientCounter
from .subscription import ImageHandler, Subscription
from .client_callbacks import (CounterHandler, ErrorHandler, NewPublicationHandler, NewSubscriptionHandler,
                               PublicationErrorFrame, callable_or_none, counter_events, error_frames, resource_events)
from .waiting import wait_for

logger = logging.getLogger(__name__)
T = TypeVar("T")
_live: "weakref.WeakSet[Aeron]" = weakref.WeakSet()

#: How long the event thread waits for conductor events before checking its client still exists.
EVENT_WAIT_S = 0.5
#: Bound on how long close() waits for the event thread (it may be running a slow callback).
EVENT_JOIN_TIMEOUT_S = 5.0

__all__ = ["Aeron", "PendingAdd", "wait_for"]


class _AsyncAdd(Protocol):
    """What ``_aeron.AsyncAdd{Publication,ExclusivePublication,Subscription,Counter}`` share."""

    @property
    def registration_id(self) -> int: ...

    def poll(self) -> object: ...

    def cancel(self) -> bool: ...


class PendingAdd(Generic[T]):
    """An add the media driver has not answered yet (``aeron_async_add_*``).

    Call :meth:`poll` from your loop: it returns the new handle once the driver has
    created it, None until then, and raises :class:`~aeron_py.errors.AeronError` with
    the driver's message if the driver refused. Never blocks.
    """

    __slots__ = ("_raw", "_wrap", "_result", "description")

    # wrap takes the handle raw.poll() returns (Any: its class depends on which add raw is)
    def __init__(self, raw: _AsyncAdd, wrap: Callable[[Any], T], description: str) -> None:
        self._raw, self._wrap = raw, wrap
        self._result: T | None = None
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

    def cancel(self) -> bool:
        """Give the add up (``aeron_async_add_*_cancel``): if the driver makes the resource
        anyway, the client removes it. False once it completed: close the handle instead."""
        if self._result is not None:
            return False
        return bool(self._raw.cancel())

    def __repr__(self) -> str:
        return f"<PendingAdd {self.description}{' done' if self._result is not None else ''}>"


def _log_error(errcode: int, message: str) -> None:
    logger.error("aeron client error %d: %s", errcode, message)


def _channel(channel: object) -> str:
    text = str(channel)
    if not text:
        raise ValueError("channel must not be empty (e.g. 'aeron:ipc' or 'aeron:udp?endpoint=127.0.0.1:40123')")
    return text


#: Longest counter key and label the CnC file holds (aeron_counter_metadata_descriptor_t).
COUNTER_MAX_KEY_LENGTH, COUNTER_MAX_LABEL_LENGTH = 112, 380


def _check_counter(type_id: int, label: str, key: bytes, registration_id: int | None) -> None:
    if isinstance(type_id, bool) or not isinstance(type_id, int) or not -2**31 <= type_id < 2**31:
        raise ValueError(f"a counter's type_id must be a 32-bit int, got {type_id!r}")
    if not isinstance(label, str) or len(label.encode()) > COUNTER_MAX_LABEL_LENGTH:
        raise ValueError(f"a counter's label must be a str of at most {COUNTER_MAX_LABEL_LENGTH} UTF-8 bytes")
    if not isinstance(key, (bytes, bytearray)) or len(key) > COUNTER_MAX_KEY_LENGTH:
        raise ValueError(f"a counter's key must be bytes, at most {COUNTER_MAX_KEY_LENGTH}")
    if registration_id is not None and (isinstance(registration_id, bool) or not isinstance(registration_id, int)
                                        or not -2**63 <= registration_id < 2**63):
        raise ValueError(f"registration_id must be a 64-bit int or None, got {registration_id!r}")


class Aeron:
    """An Aeron client connected to a media driver (``aeron_init`` + ``aeron_start``).

    ``dir``: the driver's directory (default: ``driver.dir``, then ``$AERON_DIR``, then
    Aeron's default path).  ``timeout``: how long to wait for the driver at start
    (``driver_timeout_ms``).  ``resource_timeout``: default bound for adds.
    ``error_handler(errcode, message)``: client errors (default: log at ERROR).
    ``use_conductor_agent_invoker=True`` runs no conductor thread: call :meth:`do_work`
    from your loop.  ``on_publication_error(frame)``: a receiver sent an error frame for
    one of this client's publications (:class:`PublicationErrorFrame`).
    ``on_available_counter(registration_id, counter_id)`` and
    ``on_unavailable_counter(...)``: a counter (any client's, or the driver's) appeared in or
    left the driver's counters (``aeron_context_set_on_available_counter``).
    ``on_new_publication(channel, stream_id, session_id, registration_id)``,
    ``on_new_exclusive_publication(...)`` and ``on_new_subscription(channel, stream_id,
    registration_id)``: the driver added one of this client's publications or subscriptions.

    Callbacks (``error_handler``, ``on_publication_error``, the counter and new-resource
    callbacks, ``on_available_image``, ``on_unavailable_image``) never
    run on Aeron's conductor thread, which never waits for the GIL: it queues events, and
    they are delivered on a Python thread named ``aeron-py-events-<client id>`` (or, with
    the agent invoker, at the end of :meth:`do_work`), and by :meth:`poll_events` in both
    modes.  Nothing is delivered after :meth:`close`.
    """

    def __init__(self, dir: str | os.PathLike[str] | None = None, *, driver: MediaDriver | None = None,
                 timeout: float = 10.0, resource_timeout: float = 5.0,
                 error_handler: ErrorHandler | None = _log_error, use_conductor_agent_invoker: bool = False,
                 client_name: str | None = None,
                 on_publication_error: Callable[[PublicationErrorFrame], None] | None = None,
                 on_available_counter: CounterHandler | None = None,
                 on_unavailable_counter: CounterHandler | None = None,
                 on_new_publication: NewPublicationHandler | None = None,
                 on_new_exclusive_publication: NewPublicationHandler | None = None,
                 on_new_subscription: NewSubscriptionHandler | None = None,
                 **context_options: Any) -> None:
        for name, value in (("error_handler", error_handler), ("on_publication_error", on_publication_error),
                            ("on_available_counter", on_available_counter),
                            ("on_unavailable_counter", on_unavailable_counter),
                            ("on_new_publication", on_new_publication),
                            ("on_new_exclusive_publication", on_new_exclusive_publication),
                            ("on_new_subscription", on_new_subscription)):
            callable_or_none(name, value)
        if dir is None and driver is not None:
            dir = driver.dir
        if dir is None:
            dir = os.environ.get("AERON_DIR") or _aeron.default_path()
        self._dir = str(dir)
        self.resource_timeout = resource_timeout
        self._invoker = use_conductor_agent_invoker
        try:
            self._client = _aeron.Client(
                dir=self._dir, driver_timeout_ms=int(timeout * 1000), error_handler=error_handler,
                use_conductor_agent_invoker=use_conductor_agent_invoker, client_name=client_name,
                publication_error_handler=None if on_publication_error is None else error_frames(on_publication_error),
                counter_handler=counter_events(on_available_counter, on_unavailable_counter),
                resource_handler=resource_events(on_new_publication, on_new_exclusive_publication,
                                                  on_new_subscription),
                **context_options)
        except AeronError as exc:
            raised = type(exc)(f"cannot connect to a media driver in {self._dir!r}: {exc}")
            raised.errcode, raised.cause_code = exc.errcode, exc.cause_code
            raise raised from None
        self._work = self._client.main_do_work if use_conductor_agent_invoker else None
        _live.add(self)
        self._events: threading.Thread | None = None
        if not use_conductor_agent_invoker:
            self._events = threading.Thread(target=_deliver_events, args=(weakref.ref(self),),
                                            name=f"aeron-py-events-{self._client.client_id}", daemon=True)
            self._events.start()

    @property
    def dir(self) -> str:
        return self._dir

    @property
    def client_id(self) -> int:
        return self._client.client_id

    @property
    def client_name(self) -> str | None:
        """The name the driver knows this client by (``client_name=``; ``aeron_context_get_client_name``)."""
        name: str | None = self._client.settings()["client_name"]
        return name

    def settings(self) -> dict[str, Any]:
        """The client's settings as it runs with them (``aeron_context_get_*``): ``dir``,
        ``client_name``, ``driver_timeout_ms``, ``keepalive_interval_ns``,
        ``resource_linger_duration_ns``, ``idle_sleep_duration_ns``,
        ``pre_touch_mapped_memory``, ``use_conductor_agent_invoker``. AeronError once closed."""
        return dict(self._client.settings())

    @property
    def is_closed(self) -> bool:
        """True once closed by :meth:`close`, or by the client itself (e.g. driver timeout)."""
        return self._client.is_closed

    def do_work(self) -> int:
        """One conductor duty cycle (``aeron_main_do_work``); only with the agent invoker."""
        if not self._invoker:
            raise AeronError("do_work() needs Aeron(use_conductor_agent_invoker=True)")
        work: int = self._client.main_do_work()
        self._client.deliver_events(0.0)
        return work

    def poll_events(self) -> None:
        """Deliver queued error/image events to their callbacks now, on this thread."""
        self._client.deliver_events(0.0)

    def _wait(self, start: Callable[[], PendingAdd[T]], timeout: float | None) -> T:
        """Start an add and wait (bounded) for the driver's answer. An add the driver answers
        with :class:`~aeron_py.errors.RetryLaterError` (an endpoint of the same channel is still
        closing: Aeron's RESOURCE_TEMPORARILY_UNAVAILABLE) is started again, until ``timeout``."""
        deadline = time.monotonic() + (self.resource_timeout if timeout is None else timeout)
        while True:
            pending = start()
            try:
                return wait_for(pending.poll, max(0.0, deadline - time.monotonic()), pending.description, self._work)
            except RetryLaterError as exc:
                if time.monotonic() >= deadline:
                    raise
                logger.debug("%s: %s; adding again", pending.description, exc)

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
        raw = self._require().async_add_subscription(uri, stream_id, on_available_image, on_unavailable_image)
        return PendingAdd(raw, self._subscription, f"add_subscription({uri!r}, {stream_id})")

    def _subscription(self, sub: Subscription) -> Subscription:
        sub._work = self._work
        return sub

    def add_publication(self, channel: object, stream_id: int, *, timeout: float | None = None) -> Publication:
        """A concurrent publication, waiting (bounded) for the driver."""
        return self._wait(lambda: self.async_add_publication(channel, stream_id), timeout)

    def add_exclusive_publication(self, channel: object, stream_id: int, *,
                                  timeout: float | None = None) -> ExclusivePublication:
        """A single-writer publication, waiting (bounded) for the driver."""
        return self._wait(lambda: self.async_add_exclusive_publication(channel, stream_id), timeout)

    def add_subscription(self, channel: object, stream_id: int, *,
                         on_available_image: ImageHandler | None = None,
                         on_unavailable_image: ImageHandler | None = None,
                         timeout: float | None = None) -> Subscription:
        """A subscription, waiting (bounded) for the driver.

        Image callbacks get snapshot :class:`~aeron_py.Image` objects and run on the
        client's event thread (or in :meth:`do_work`); see :class:`Aeron`.  They live
        until the subscription is closed.
        """
        return self._wait(lambda: self.async_add_subscription(channel, stream_id, on_available_image=on_available_image,
                                                      on_unavailable_image=on_unavailable_image), timeout)

    def async_add_counter(self, type_id: int, label: str, *, key: bytes = b"",
                          registration_id: int | None = None) -> PendingAdd[ClientCounter]:
        """Start allocating a counter in the driver without waiting; see :meth:`add_counter`."""
        _check_counter(type_id, label, key, registration_id)
        raw = self._require().async_add_counter(type_id, bytes(key), label, registration_id)
        what = "add_static_counter" if registration_id is not None else "add_counter"
        return PendingAdd(raw, lambda counter: counter, f"{what}({type_id}, {label!r})")

    def add_counter(self, type_id: int, label: str, *, key: bytes = b"", registration_id: int | None = None,
                    timeout: float | None = None) -> ClientCounter:
        """A counter of this client in the driver's CnC file, waiting (bounded) for the driver
        (``aeron_async_add_counter``): ``value``, ``increment(delta)``, ``compare_and_set``,
        seen by every reader of the CnC file (``python -m aeron_py.stat``) under ``label``.
        ``type_id`` and ``key`` (at most 112 bytes) say what it counts to tools that look for it.
        With ``registration_id``, a *static* counter (``aeron_async_add_static_counter``): the
        one counter of that type id and registration id, shared by every client asking for it
        and kept by the driver after its clients close. Closed with the client."""
        return self._wait(lambda: self.async_add_counter(type_id, label, key=key, registration_id=registration_id),
                          timeout)

    def next_session_id(self, stream_id: int, *, timeout: float | None = None) -> int:
        """A session id no publication of ``stream_id`` uses in the driver, for a channel's
        ``session-id=`` (``aeron_async_next_session_id``); waits (bounded) for the driver."""
        raw = self._require().async_next_session_id(stream_id)
        found: list[int] = []

        def poll() -> int | None:
            if not found:
                value = raw.poll()
                if value is not None:
                    found.append(value)
            return found[0] if found else None

        return wait_for(poll, self.resource_timeout if timeout is None else timeout,
                        f"next_session_id({stream_id})", self._work)

    def counters_reader(self) -> _aeron.CountersReader:
        """The driver's counters, read live through this client (``aeron_counters_reader``):
        ``value(id)``, ``label(id)``, ``type_id(id)``, ``owner_id(id)``, ``key(id)``...;
        AeronError once the client is closed."""
        return self._require().counters_reader()

    def counters(self) -> list[Counter]:
        """Every allocated counter of the driver (``aeron_counters_reader_foreach_counter``)."""
        return counters_from(self._require().counters_reader())

    def close(self) -> None:
        """``aeron_close``: closes every publication and subscription made here. Idempotent.

        Called from a fragment handler, or from another thread while a poll runs, the C
        close is deferred until that poll returns; the client reports closed at once.
        """
        _live.discard(self)
        self._client.close()
        events = self._events
        if events is not None and events is not threading.current_thread():
            # It wakes at once (close() closes the queue); joining means no callback runs after close().
            events.join(EVENT_JOIN_TIMEOUT_S)

    def _require(self) -> _aeron.Client:
        if self._client.is_closed:
            raise ClientClosedError(f"the Aeron client for {self._dir!r} is closed")
        return self._client

    def __enter__(self) -> "Aeron":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Aeron dir={self._dir!r}{' closed' if self._client.is_closed else ''}>"


def _deliver_events(client: "weakref.ref[Aeron]") -> None:
    """Body of a client's event thread: deliver conductor events until the client is closed or gone."""
    while True:
        aeron = client()
        if aeron is None:
            return
        raw = aeron._client
        del aeron  # only the raw client is held while waiting: the Aeron object can be collected
        try:
            if not raw.deliver_events(EVENT_WAIT_S):
                return
        except Exception:  # a callback error is reported by the extension; this is a bug guard
            logger.exception("aeron_py event delivery failed")
            return
        del raw


@atexit.register
def _close_live_clients() -> None:
    for client in list(_live):
        client.close()
