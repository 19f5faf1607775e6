"""Which client images the Echo 2.0 glue has announced to its core, and their messages.

The glue never keeps an image retained (``aeron_subscription_image_*`` handles): the
C client's ``aeron_subscription_image_release`` only drops the reference while the
image is still in its subscription's image list, and an image leaves that list
*before* its unavailable-image callback runs (``aeron_client_conductor.c``,
``on_unavailable_image``).  A handle released after that is never freed, and its log
stays mapped for the life of the client.  So messages are read
with subscription polls (a :class:`~aeron_py.PollSet`) and routed by the frame's session
id (unique among one subscription's images), and an image is fetched only to reject it, and released
at once, between two conductor duty cycles (agent invoker: nothing can leave the list
in between).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from ...errors import AeronError
from ...subscription import Subscription

__all__ = ["IPC_HELLOS", "ImageBook", "TrackedImage", "duologue_of", "reject_image"]

logger = logging.getLogger(__name__)

#: The subscription key of the IPC all-clients subscription (same-host clients' HELLOs).
#: Keys: None, the UDP all-clients subscription; IPC_HELLOS; a session id (>= 1), a duologue's.
IPC_HELLOS = -1


def duologue_of(key: int | None) -> int | None:
    """The duologue whose subscription ``key`` is; None for an all-clients one (UDP or IPC)."""
    return None if key == IPC_HELLOS else key


@dataclass(frozen=True)
class TrackedImage:
    """An image announced to the core; ``key`` None or :data:`IPC_HELLOS` = all-clients, else duologue session."""

    image_id: int
    key: int | None
    session_id: int
    source: str
    source_port: int = 0  # the UDP port of ``source`` (split once, at announcement)
    source_host: str = ""  # its address, likewise


class ImageBook:
    """Announced images by correlation id and by (subscription key, session id)."""

    def __init__(self) -> None:
        self._by_id: dict[int, TrackedImage] = {}
        self._by_session: dict[tuple[int | None, int], int] = {}

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, image_id: object) -> bool:
        return image_id in self._by_id

    def add(self, image: TrackedImage) -> None:
        self._by_id[image.image_id] = image
        previous = self._by_session.get((image.key, image.session_id))
        if previous is not None and previous != image.image_id:
            logger.warning("images %d and %d share session %d on one subscription; routing to the newer",
                           previous, image.image_id, image.session_id)
        self._by_session[(image.key, image.session_id)] = image.image_id

    def get(self, image_id: int | None) -> TrackedImage | None:
        return None if image_id is None else self._by_id.get(image_id)

    def remove(self, image_id: int) -> TrackedImage | None:
        image = self._by_id.pop(image_id, None)
        if image is not None and self._by_session.get((image.key, image.session_id)) == image_id:
            del self._by_session[(image.key, image.session_id)]
        return image

    def remove_key(self, key: int) -> list[TrackedImage]:
        """Forget every image of duologue ``key``."""
        gone = [image for image in self._by_id.values() if image.key == key]
        for image in gone:
            self.remove(image.image_id)
        return gone

    def image_for(self, key: int | None, session_id: int) -> int | None:
        """The announced image of ``session_id`` on subscription ``key``, if any."""
        return self._by_session.get((key, session_id))

    def clear(self) -> None:
        self._by_id.clear()
        self._by_session.clear()


def reject_image(sub: Subscription | None, session_id: int, reason: str) -> bool:
    """Reject the image of ``session_id`` on ``sub`` (``aeron_image_reject``), releasing it at once."""
    image = sub.image_by_session_id(session_id) if sub is not None else None
    if image is None:
        return False
    try:
        image.reject(reason)
    except AeronError as exc:
        logger.warning("rejecting image of session %d failed: %s", session_id, exc)
        return False
    finally:
        image.close()
    return True
