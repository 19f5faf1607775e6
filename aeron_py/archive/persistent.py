"""Persistent subscriptions: a stream you never miss a message of.

A :class:`PersistentSubscription` starts from a position of a stream's recording (or its
start, or the live end), replays from the Archive until it has caught up, then joins the
live stream; when it falls behind or loses the live image it goes back to replaying, and
joins again (``aeron_archive_persistent_subscription_t``, Aeron 1.51+). Poll it like a
subscription; ``is_live`` / ``is_replaying`` say where it reads from.

>>> with PersistentSubscription.create(aeron, recording_id=recording_id,
...                                    live_channel="aeron:udp?endpoint=127.0.0.1:40456", live_stream_id=10,
...                                    replay_channel="aeron:udp?endpoint=127.0.0.1:0", replay_stream_id=11,
...                                    control_channel="aeron:udp?endpoint=127.0.0.1:8010") as sub:
...     while running:
...         sub.poll(handler, 10)
"""
from __future__ import annotations

import enum
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .._aeron import archive as _native
from ..client import Aeron
from ..errors import AeronError
from .settings import DEFAULT_MESSAGE_TIMEOUT_S, channel_text, control_options
from .errors import translate, typed

logger = logging.getLogger(__name__)

#: ``start_position=`` values besides a position of the recording.
FROM_START: int = _native.PERSISTENT_FROM_START
FROM_LIVE: int = _native.PERSISTENT_FROM_LIVE

_LIVE_JOINED, _LIVE_LEFT, _ERROR = 0, 1, 2


class PersistentState(enum.IntEnum):
    """The persistent subscription's state, as its state counter holds it (the order of the
    pinned Aeron 1.54.0's ``aeron_archive_persistent_subscription_state_t``)."""

    AWAIT_ARCHIVE_CONNECTION = 0
    SEND_LIST_RECORDING_REQUEST = 1
    AWAIT_LIST_RECORDING_RESPONSE = 2
    SEND_REPLAY_REQUEST = 3
    AWAIT_REPLAY_RESPONSE = 4
    ADD_REPLAY_SUBSCRIPTION = 5
    AWAIT_REPLAY_SUBSCRIPTION = 6
    AWAIT_REPLAY_CHANNEL_ENDPOINT = 7
    ADD_REQUEST_PUBLICATION = 8
    AWAIT_REQUEST_PUBLICATION = 9
    SEND_REPLAY_TOKEN_REQUEST = 10
    AWAIT_REPLAY_TOKEN = 11
    REPLAY = 12
    ATTEMPT_SWITCH = 13
    ADD_LIVE_SUBSCRIPTION = 14
    AWAIT_LIVE = 15
    LIVE = 16
    FAILED = 17


@dataclass(frozen=True)
class PersistentCounters:
    """What a persistent subscription's counters say (read from the client's counters):
    ``state`` (a :class:`PersistentState`, or the raw value if this Aeron has more states),
    ``join_difference`` (live minus replay position when it last switched; ``-2**63`` while
    not live), and how many times it joined and left the live stream."""

    state: PersistentState | int
    join_difference: int
    live_joined: int
    live_left: int


def _log_error(errcode: int, message: str) -> None:
    logger.warning("persistent subscription error %d: %s", errcode, message)


class PersistentSubscription:
    """A subscription that replays what it missed from the Archive and follows the live
    stream (make it with :meth:`create`; close it, or it closes with its client).

    ``on_live_joined()`` / ``on_live_left()``: it switched to / away from the live stream;
    ``on_error(errcode, message)``: an error it met (default: logged). They run on the
    polling thread, after the poll that saw them.
    """

    def __init__(self, raw: _native.PersistentSubscription, aeron: Aeron,
                 on_live_joined: Callable[[], Any] | None, on_live_left: Callable[[], Any] | None,
                 on_error: Callable[[int, str], Any] | None) -> None:
        self._raw = raw
        self._aeron = aeron  # kept alive: the subscription uses its client
        self._listeners: dict[int, Callable[..., Any] | None] = {
            _LIVE_JOINED: on_live_joined, _LIVE_LEFT: on_live_left, _ERROR: on_error}

    @classmethod
    def create(cls, aeron: Aeron, *, recording_id: int, live_channel: object, live_stream_id: int,
               replay_channel: object, replay_stream_id: int, start_position: int = FROM_START,
               control_channel: object | None = None, control_stream_id: int | None = None,
               response_channel: object | None = None, response_stream_id: int | None = None,
               message_timeout: float = DEFAULT_MESSAGE_TIMEOUT_S, client_name: str = "",
               on_live_joined: Callable[[], Any] | None = None, on_live_left: Callable[[], Any] | None = None,
               on_error: Callable[[int, str], Any] | None = _log_error) -> "PersistentSubscription":
        """Follow ``live_channel``/``live_stream_id``, whose recording is ``recording_id``,
        from ``start_position`` (a position of the recording, :data:`FROM_START` or
        :data:`FROM_LIVE`). Replays arrive on ``replay_channel``/``replay_stream_id``. It makes
        its own connection to the Archive at ``control_channel`` (defaults as
        :meth:`AeronArchive.connect`); creating it sends nothing yet: the first polls connect."""
        if not 0 < message_timeout <= 3600:
            raise ValueError(f"message_timeout must be in (0, 3600] seconds, got {message_timeout!r}")
        if start_position < 0 and start_position not in (FROM_START, FROM_LIVE):
            raise ValueError(f"start_position must be >= 0, FROM_START or FROM_LIVE, got {start_position!r}")
        try:
            control = control_options(control_channel, control_stream_id, response_channel, response_stream_id)
            raw = _native.persistent_subscription(
                aeron._client, control["control_request_channel"], control["control_request_stream_id"],
                control["control_response_channel"], control["control_response_stream_id"],
                int(message_timeout * 1e9), str(client_name), recording_id,
                channel_text(live_channel, "live_channel"), live_stream_id,
                channel_text(replay_channel, "replay_channel"), replay_stream_id, start_position)
        except AeronError as exc:
            raise translate(exc) from None
        return cls(raw, aeron, on_live_joined, on_live_left, on_error)

    def poll(self, handler: Callable[..., Any], fragment_limit: int = 10) -> int:
        """``handler(data, header)`` per message (``data``: bytes; ``header``: valid during the
        call), from the replay or the live stream; returns the work done (0: nothing)."""
        try:
            return typed(lambda: self._raw.poll(handler, fragment_limit))
        finally:
            self._deliver()

    @property
    def is_live(self) -> bool:
        """Reading the live stream (no replay in progress)."""
        return typed(lambda: self._raw.is_live)

    @property
    def is_replaying(self) -> bool:
        return typed(lambda: self._raw.is_replaying)

    @property
    def has_failed(self) -> bool:
        """Stopped for good; :meth:`failure` says why."""
        return typed(lambda: self._raw.has_failed)

    def failure(self) -> tuple[int, str] | None:
        """``(errcode, message)`` of the error that made it fail, None while it has not."""
        reason: tuple[int, str] | None = typed(self._raw.failure)
        return reason

    def counter_ids(self) -> tuple[int, int, int, int]:
        """The ids of its counters in the client's counters (for ``aeron_py.stat`` or another
        process): ``(state, join_difference, live_left, live_joined)``."""
        ids: tuple[int, int, int, int] = typed(self._raw.counter_ids)
        return ids

    def counters(self) -> PersistentCounters:
        """Its counters' current values."""
        state, join, left, joined = (self._aeron.counters_reader().value(i) for i in self.counter_ids())
        try:
            named: PersistentState | int = PersistentState(state)
        except ValueError:
            named = state
        return PersistentCounters(named, join, joined, left)

    @property
    def is_closed(self) -> bool:
        closed: bool = self._raw.is_closed
        return closed

    def close(self) -> None:
        """Stop replaying and following; idempotent. From a handler: after that poll."""
        self._raw.close()

    def __enter__(self) -> "PersistentSubscription":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _deliver(self) -> None:
        for kind, errcode, message in self._raw.take_events():
            listener = self._listeners.get(kind)
            if listener is None:
                continue
            if kind == _ERROR:
                listener(errcode, message)
            else:
                listener()


__all__ = ["FROM_LIVE", "FROM_START", "PersistentCounters", "PersistentState", "PersistentSubscription"]
