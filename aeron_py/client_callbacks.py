"""The shapes of the client's callbacks (``Aeron(error_handler=..., on_...=...)``) and the
adapters from the extension's few raw callbacks to them. The conductor thread never calls
these: it queues events, and the client's event delivery calls them on a Python thread."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

ErrorHandler = Callable[[int, str], Any]
"""``(errcode, message)`` of a client error."""


@dataclass(frozen=True)
class PublicationErrorFrame:
    """An error a receiver sent for one of this client's publications (an Aeron ERR frame,
    e.g. after the subscriber's application rejected the image: ``image.reject(reason)``).

    ``registration_id``: the publication's (``pub.registration_id``); ``source``: the
    receiver's ``address:port``; ``error_code``: Aeron's; ``message``: the receiver's text."""

    registration_id: int
    destination_registration_id: int
    session_id: int
    stream_id: int
    receiver_id: int
    group_tag: int
    source: str
    error_code: int
    message: str


CounterHandler = Callable[[int, int], Any]
"""``(registration_id, counter_id)`` of a counter that became available or unavailable."""
NewPublicationHandler = Callable[[str, int, int, int], Any]
"""``(channel, stream_id, session_id, registration_id)`` of a publication the driver added."""
NewSubscriptionHandler = Callable[[str, int, int], Any]
"""``(channel, stream_id, registration_id)`` of a subscription the driver added."""


def callable_or_none(name: str, value: object) -> None:
    """TypeError naming the ``Aeron()`` argument unless ``value`` is None or callable."""
    if value is not None and not callable(value):
        raise TypeError(f"{name} must be a callable or None, got {type(value).__name__}")


def counter_events(on_available: CounterHandler | None,
                   on_unavailable: CounterHandler | None) -> Callable[[bool, int, int], None] | None:
    """The extension's one counter callback, dispatched to the two of ``Aeron()``."""
    if on_available is None and on_unavailable is None:
        return None

    def deliver(available: bool, registration_id: int, counter_id: int) -> None:
        handler = on_available if available else on_unavailable
        if handler is not None:
            handler(registration_id, counter_id)
    return deliver


def resource_events(on_publication: NewPublicationHandler | None, on_exclusive: NewPublicationHandler | None,
                    on_subscription: NewSubscriptionHandler | None) -> Callable[[str, str, int, int, int], None] | None:
    """The extension's one new-resource callback, dispatched to the three of ``Aeron()``."""
    if on_publication is None and on_exclusive is None and on_subscription is None:
        return None

    def deliver(kind: str, channel: str, stream_id: int, session_id: int, registration_id: int) -> None:
        if kind == "subscription":
            if on_subscription is not None:
                on_subscription(channel, stream_id, registration_id)
            return
        handler = on_exclusive if kind == "exclusive_publication" else on_publication
        if handler is not None:
            handler(channel, stream_id, session_id, registration_id)
    return deliver


def error_frames(handler: Callable[[PublicationErrorFrame], None]) -> Callable[[dict[str, Any]], None]:
    """The extension's error-frame callback (a dict of fields) as a :class:`PublicationErrorFrame`."""
    def deliver(fields: dict[str, Any]) -> None:
        handler(PublicationErrorFrame(**fields))
    return deliver
