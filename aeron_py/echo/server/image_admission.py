"""Image admission: client images reach the core before any of their messages.

The C client calls the image callbacks on the loop's own thread (conductor agent
invoker) inside ``aeron.do_work()``; the callback only enqueues an
:class:`ImageEvent` built from the snapshot the binding hands it (the image's
constants: nothing is listed, nothing retained, O(1) per event).  The loop then
hands the queued events to the core *before* it polls (every image in a
subscription's list had its callback in the same duty cycle), so the core always
knows an image before its first message.  Events of a duologue still being created
wait until it is live (or gone).  See :mod:`.images` for why no image handle is kept.

End of stream: a client that closes its duologue publication cleanly sends an end of
stream; once the server has read all of it the image is at its end (seconds before
the driver declares it unavailable).  :meth:`ImageAdmission._ends_of_stream` (every
~50 ms: one C call walking the duologue subscriptions' images) treats such an image
as gone, so the duologue's slot is free at once; its ports still follow the port
rules of :mod:`.channels` (the image still drains in the driver).
"""
from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .images import ImageBook, TrackedImage, reject_image
from ..core.protocol import split_source_identity

if TYPE_CHECKING:
    from ...poll_set import PollSet
    from ...subscription import Image, Subscription
    from .channels import Duologue
    from .creation import Pending
    from ..core.server import Action, EchoServerCore

__all__ = ["ImageAdmission", "ImageEvent"]

logger = logging.getLogger("aeron_py.echo.server")


@dataclass(frozen=True)
class ImageEvent:
    """An image came (``up``) or went on subscription ``key`` (None: all-clients)."""

    up: bool
    key: int | None
    image_id: int
    session_id: int
    source: str
    term_length: int


class ImageAdmission:
    """Image half of the server loop (a mixin: the state lives on the server)."""

    _core: EchoServerCore
    _all_clients: Subscription | None
    _duologues: dict[int, Duologue]
    _pending: dict[int, Pending]
    _images: ImageBook
    _image_events: deque[ImageEvent]
    _poll_set: PollSet[int] | None

    if TYPE_CHECKING:
        def _execute(self, actions: list[Action], now: float) -> None: ...

    def _on_image(self, key: int | None, up: bool) -> Callable[[Image], None]:
        events = self._image_events

        def callback(image: Image) -> None:  # conductor callback: enqueue only
            events.append(ImageEvent(up, key, image.correlation_id, image.session_id,
                                     image.source_identity, image.term_buffer_length))
        return callback

    def _subscription(self, key: int | None) -> Subscription | None:
        if key is None:
            return self._all_clients
        d = self._duologues.get(key)
        return None if d is None else d.sub

    def _source_port(self, image_id: int | None) -> int:
        tracked = self._images.get(image_id)
        return split_source_identity(tracked.source)[1] if tracked is not None else 0

    def _image_events_to_core(self, now: float) -> int:
        if not self._image_events:
            return 0
        events = list(self._image_events)
        self._image_events.clear()
        done = 0
        for ev in events:
            if ev.key in self._pending:  # its duologue is still being created: keep for later
                self._image_events.append(ev)
                continue
            done += 1
            if ev.up:
                self._image_up(ev, now)
            else:
                self._image_down(ev, now)
        return done

    def _image_up(self, ev: ImageEvent, now: float) -> None:
        if ev.key is not None and ev.key not in self._duologues:
            return  # the duologue is already closed (its subscription with it)
        if ev.image_id in self._images:
            return
        try:
            split_source_identity(ev.source)
        except ValueError as exc:
            logger.error("image %d has an unusable source: %s; rejecting it", ev.image_id, exc)
            reject_image(self._subscription(ev.key), ev.session_id, "bad source identity")
            return
        self._images.add(TrackedImage(ev.image_id, ev.key, ev.session_id, ev.source))
        if ev.key is None:
            actions = self._core.initial_image_available(ev.image_id, ev.session_id, ev.source, ev.term_length, now)
        else:
            actions = self._core.duologue_image_available(ev.key, ev.image_id, ev.source, ev.term_length, now)
        self._execute(actions, now)

    def _image_down(self, ev: ImageEvent, now: float) -> None:
        if self._images.remove(ev.image_id) is None:
            return  # never announced (its duologue was already gone)
        if ev.key is None:
            actions = self._core.initial_image_unavailable(ev.image_id, now)
        else:
            actions = self._core.duologue_image_unavailable(ev.key, ev.image_id, now)
        self._execute(actions, now)

    def _ends_of_stream(self, now: float) -> int:
        """Duologue client images that reached their end of stream leave the core now."""
        if self._poll_set is None:
            return 0
        ended = self._poll_set.end_of_stream()
        for session, session_id in ended:
            image_id = self._images.image_for(session, session_id)
            if image_id is None or session not in self._duologues:
                continue  # never announced, or its duologue is gone already
            self._execute(self._core.duologue_image_unavailable(session, image_id, now), now)
            self._images.remove(image_id)  # its unavailable event, later, is then ignored
        return len(ended)
