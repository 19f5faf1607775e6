"""Backlog per stream, from a driver's position counters (what Aeron's BacklogStat shows).

Every publication, sender, receiver and subscription keeps its position in a counter of
the CnC file whose key names its stream: registration id, session id, stream id and
channel. Grouped by (session, stream, channel), they say where each stream's bytes wait:

* the **publisher**: its position, and how far it may go before back-pressure (its limit);
* the **sender** (UDP): how many published bytes it has still to send, and its window;
* the **receiver** (UDP): the highest position received and the position consumed;
* each **subscriber**: how many bytes it has still to read (to the receiver's high-water
  mark, or for IPC to the publisher's position).

One driver's CnC shows only its own side of a UDP stream: the publishing driver has the
publisher and sender, the subscribing driver the receiver and subscribers.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PublisherPosition", "ReceiverPosition", "SenderPosition", "StreamBacklog", "StreamKey",
           "backlog_from_rows"]

# Counter type ids of the position counters (aeron_counters.h).
PUBLISHER_LIMIT, SENDER_POSITION, RECEIVER_HWM, SUBSCRIBER_POSITION, RECEIVER_POSITION = 1, 2, 3, 4, 5
SENDER_LIMIT, PUBLISHER_POSITION = 9, 12
_POSITION_TYPES = frozenset((PUBLISHER_LIMIT, SENDER_POSITION, RECEIVER_HWM, SUBSCRIBER_POSITION,
                             RECEIVER_POSITION, SENDER_LIMIT, PUBLISHER_POSITION))
# aeron_stream_position_counter_key_layout_t: registration id, session id, stream id, channel (length + ASCII)
_KEY = struct.Struct("<qiii")


@dataclass(frozen=True, order=True)
class StreamKey:
    """One stream of one session on one channel."""

    session_id: int
    stream_id: int
    channel: str


@dataclass
class PublisherPosition:
    registration_id: int
    position: int | None = None
    limit: int | None = None

    @property
    def remaining_window(self) -> int | None:
        """Bytes the publisher may still offer before back-pressure."""
        return None if self.position is None or self.limit is None else self.limit - self.position


@dataclass
class SenderPosition:
    registration_id: int
    position: int | None = None
    limit: int | None = None

    @property
    def window(self) -> int | None:
        """Bytes the sender may still send before flow control holds it."""
        return None if self.position is None or self.limit is None else self.limit - self.position


@dataclass
class ReceiverPosition:
    registration_id: int
    position: int | None = None
    high_water_mark: int | None = None


@dataclass
class StreamBacklog:
    """Everything the CnC file says about one stream."""

    key: StreamKey
    publisher: PublisherPosition | None = None
    sender: SenderPosition | None = None
    receiver: ReceiverPosition | None = None
    subscribers: dict[int, int] = field(default_factory=dict)  # registration id -> position

    @property
    def sender_backlog(self) -> int | None:
        """Published bytes the sender has not sent yet."""
        published = None if self.publisher is None else self.publisher.position
        sent = None if self.sender is None else self.sender.position
        return None if published is None or sent is None else max(0, published - sent)

    def subscriber_backlogs(self) -> dict[int, int | None]:
        """Bytes each subscriber has still to read: to the receiver's high-water mark (UDP) or
        the publisher's position (IPC); None when neither is in this CnC file."""
        head = self.receiver.high_water_mark if self.receiver is not None else (
            self.publisher.position if self.publisher is not None else None)
        return {reg: None if head is None else max(0, head - position) for reg, position in self.subscribers.items()}

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (``python -m aeron_py.stat --json``)."""
        return {
            "session_id": self.key.session_id, "stream_id": self.key.stream_id, "channel": self.key.channel,
            "publisher": None if self.publisher is None else {**vars(self.publisher),
                                                              "remaining_window": self.publisher.remaining_window},
            "sender": None if self.sender is None else {**vars(self.sender), "window": self.sender.window,
                                                        "backlog": self.sender_backlog},
            "receiver": None if self.receiver is None else vars(self.receiver),
            "subscribers": [{"registration_id": reg, "position": self.subscribers[reg], "backlog": backlog}
                            for reg, backlog in self.subscriber_backlogs().items()],
        }


def _stream_key(key: bytes) -> tuple[int, StreamKey] | None:
    if len(key) < _KEY.size:
        return None
    registration_id, session_id, stream_id, length = _KEY.unpack_from(key)
    channel = key[_KEY.size:_KEY.size + max(0, min(length, len(key) - _KEY.size))]
    return registration_id, StreamKey(session_id, stream_id, channel.decode("ascii", "replace"))


def backlog_from_rows(rows: list[tuple[int, int, str, int, bytes]]) -> list[StreamBacklog]:
    """The streams in ``CountersReader.counters()`` rows ``(id, type id, label, value, key)``,
    sorted by (session, stream, channel)."""
    streams: dict[StreamKey, StreamBacklog] = {}
    for _id, type_id, _label, value, key in rows:
        if type_id not in _POSITION_TYPES or (parsed := _stream_key(key)) is None:
            continue
        registration_id, stream = parsed
        s = streams.setdefault(stream, StreamBacklog(stream))
        if type_id in (PUBLISHER_LIMIT, PUBLISHER_POSITION):
            s.publisher = s.publisher or PublisherPosition(registration_id)
            if type_id == PUBLISHER_LIMIT:
                s.publisher.limit = value
            else:
                s.publisher.position = value
        elif type_id in (SENDER_POSITION, SENDER_LIMIT):
            s.sender = s.sender or SenderPosition(registration_id)
            if type_id == SENDER_POSITION:
                s.sender.position = value
            else:
                s.sender.limit = value
        elif type_id in (RECEIVER_HWM, RECEIVER_POSITION):
            s.receiver = s.receiver or ReceiverPosition(registration_id)
            if type_id == RECEIVER_HWM:
                s.receiver.high_water_mark = value
            else:
                s.receiver.position = value
        else:
            s.subscribers[registration_id] = value
    return [streams[k] for k in sorted(streams)]
