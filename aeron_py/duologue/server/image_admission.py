"""Image admission: client images reach the core before any of their messages.

The C client calls the image callbacks on the loop's own thread (conductor agent
invoker) inside ``aeron.do_work()``; the callback (:meth:`ImageEvents.callback`)
only enqueues an :class:`ImageEvent` built from the snapshot the binding hands it
(the image's constants: nothing is listed, nothing retained, O(1) per event).  The
loop then has :meth:`ImageAdmission.to_core` hand the queued events to the core
*before* it polls (every image in a subscription's list had its callback in the
same duty cycle), so the core always knows an image before its first message.
Events of a duologue still being created wait until it is live (or gone).  See
:mod:`.images` for why no image handle is kept.

End of stream: a client that closes its duologue publication cleanly sends an end of
stream; once the server has read all of it the image is at its end (seconds before
the driver declares it unavailable).  :meth:`ImageAdmission.ends_of_stream` (every
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

from .channels import DuologueChannels
from .images import IPC_HELLOS, ImageBook, TrackedImage, duologue_of, reject_image
from .steps import Steps
from ..core.protocol import image_source

if TYPE_CHECKING:
    from ...poll_set import PollSet
    from ...subscription import Image, Subscription
    from ..core.contract import Action, RejectImage
    from ..core.server import DuologueServerCore

__all__ = ["ImageAdmission", "ImageEvent", "ImageEvents"]

logger = logging.getLogger("aeron_py.duologue.server")


@dataclass(frozen=True)
class ImageEvent:
    """An image came (``up``) or went on subscription ``key`` (None: all-clients)."""

    up: bool
    key: int | None
    image_id: int
    session_id: int
    source: str
    term_length: int


class ImageEvents:
    """The queue the conductor's image callbacks fill (enqueue only); :class:`ImageAdmission` empties it.

    Made before any subscription (they need its callbacks), so it stands alone."""

    def __init__(self) -> None:
        self.queue: deque[ImageEvent] = deque()

    def callback(self, key: int | None, up: bool) -> Callable[[Image], None]:
        """The callback for images coming (``up``) or going on subscription ``key``."""
        events = self.queue

        def callback(image: Image) -> None:  # conductor callback: enqueue only
            events.append(ImageEvent(up, key, image.correlation_id, image.session_id,
                                     image.source_identity, image.term_buffer_length))
        return callback


class ImageAdmission:
    """The announced images (an :class:`~.images.ImageBook`) and the events that change them."""

    def __init__(self, core: DuologueServerCore, events: ImageEvents, all_clients: Subscription,
                 poll_set: PollSet[int], channels: DuologueChannels,
                 ipc_all_clients: Subscription | None = None) -> None:
        self._core = core
        self._events = events
        self._all_clients = all_clients
        self._ipc_all_clients = ipc_all_clients
        self._poll_set = poll_set
        self._channels = channels
        self._images = ImageBook()

    def has_events(self) -> bool:
        """Whether image events wait for :meth:`to_core` (the loop skips the pass otherwise)."""
        return bool(self._events.queue)

    def to_core(self, now: float) -> Steps:
        """The queued image events to the core (the core's actions of each yielded); the number handed over."""
        queue = self._events.queue
        if not queue:
            return 0
        events = list(queue)
        queue.clear()
        done = 0
        for ev in events:
            if self._channels.is_pending(ev.key):  # its duologue is still being created: keep for later
                queue.append(ev)
                continue
            done += 1
            yield self._image_up(ev, now) if ev.up else self._image_down(ev, now)
        return done

    def ends_of_stream(self, now: float) -> Steps:
        """Duologue client images that reached their end of stream leave the core now."""
        ended = self._poll_set.end_of_stream()
        for session, session_id in ended:
            image_id = self._images.image_for(session, session_id)
            if image_id is None or not self._channels.is_live(session):
                continue  # never announced, or its duologue is gone already
            yield self._core.duologue_image_unavailable(session, image_id, now)
            self._images.remove(image_id)  # its unavailable event, later, is then ignored
        return len(ended)

    def reject(self, action: RejectImage) -> None:
        """The core's ``RejectImage``: the image is rejected by the driver (if it is still there)."""
        tracked = self._images.get(action.image_id)
        if tracked is None or not reject_image(self._subscription(tracked.key), tracked.session_id, action.reason):
            logger.debug("cannot reject image %d (%s): it is gone", action.image_id, action.reason)

    def forget_duologue(self, session: int) -> bool:
        """Forget every image of a duologue being closed; whether it had any."""
        return bool(self._images.remove_key(session))

    def image_for(self, key: int | None, session_id: int) -> int | None:
        """The announced image of ``session_id`` on subscription ``key`` (None: all-clients)."""
        return self._images.image_for(key, session_id)

    def source_port(self, image_id: int | None) -> int:
        """The UDP source port of an announced image (0: unknown), for telemetry."""
        tracked = self._images.get(image_id)
        return tracked.source_port if tracked is not None else 0

    def source_host(self, image_id: int) -> str | None:
        """The source address of an announced image (None: unknown)."""
        tracked = self._images.get(image_id)
        return tracked.source_host if tracked is not None else None

    def clear(self) -> None:
        self._images.clear()

    def _subscription(self, key: int | None) -> Subscription | None:
        if key is None:
            return self._all_clients
        return self._ipc_all_clients if key == IPC_HELLOS else self._channels.subscription(key)

    def _image_up(self, ev: ImageEvent, now: float) -> list[Action]:
        session = duologue_of(ev.key)
        if session is not None and not self._channels.is_live(session):
            return []  # the duologue is already closed (its subscription with it)
        if ev.image_id in self._images:
            return []
        try:
            source_host, source_port = image_source(ev.source)
        except ValueError as exc:
            logger.error("image %d has an unusable source: %s; rejecting it", ev.image_id, exc)
            reject_image(self._subscription(ev.key), ev.session_id, "bad source identity")
            return []
        self._images.add(TrackedImage(ev.image_id, ev.key, ev.session_id, ev.source, source_port, source_host))
        if session is None:
            return self._core.initial_image_available(ev.image_id, ev.session_id, ev.source, ev.term_length, now)
        return self._core.duologue_image_available(session, ev.image_id, ev.source, ev.term_length, now)

    def _image_down(self, ev: ImageEvent, now: float) -> list[Action]:
        if self._images.remove(ev.image_id) is None:
            return []  # never announced (its duologue was already gone)
        session = duologue_of(ev.key)
        if session is None:  # duologues whose CONNECT is still held have nobody waiting: closed
            return self._core.initial_image_unavailable(ev.image_id, now, self._channels.pending_sessions)
        return self._core.duologue_image_unavailable(session, ev.image_id, now)
