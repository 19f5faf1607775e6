"""Message polling: every subscription's messages go to the core, routed by image.

Each subscription is read with its own poll (see :mod:`.images` for why no image
handle is kept); a message is routed to the announced image of its session id
(unique among one subscription's images), HELLOs to the core's all-clients rules,
duologue messages to that duologue's.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..subscription import Subscription
    from .channels import Duologue
    from .images import ImageBook
    from .server_core import Action, EchoServerCore

__all__ = ["MessagePolling"]

_POLL_LIMIT = 10  # fragments per duologue subscription per iteration (fairness)
_POLL_LIMIT_ALL_CLIENTS = 64


class MessagePolling:
    """Polling half of the server loop (a mixin: the state lives on the server)."""

    _core: EchoServerCore
    _all_clients: Subscription | None
    _duologues: dict[int, Duologue]
    _images: ImageBook

    if TYPE_CHECKING:
        def _execute(self, actions: list[Action], now: float) -> None: ...

    def _poll_images(self, now: float) -> int:
        """Read every subscription and feed the core; the number of messages."""
        work = 0
        if self._all_clients is not None:
            work += self._poll_subscription(None, self._all_clients, _POLL_LIMIT_ALL_CLIENTS, now)
        for session, d in list(self._duologues.items()):
            if self._duologues.get(session) is d:
                work += self._poll_subscription(session, d.sub, _POLL_LIMIT, now)
        return work

    def _poll_subscription(self, key: int | None, sub: Subscription, limit: int, now: float) -> int:
        received: list[tuple[bytes, int]] = []
        sub.poll(lambda data, header: received.append((data, header.session_id)), limit)
        for data, session_id in received:
            self._deliver(key, session_id, data, now)
        return len(received)

    def _deliver(self, key: int | None, session_id: int, data: bytes, now: float) -> None:
        """One message of subscription ``key`` from ``session_id`` to the core."""
        image_id = self._images.image_for(key, session_id)
        if image_id is None:  # cannot happen: image events are handled before polling
            self._core.log_summary.log(logging.WARNING, "message:unknown_image", now,
                                       "message from unannounced session %d dropped", session_id)
            return
        if key is None:
            actions = self._core.hello_received(image_id, data, now)
        elif key in self._duologues:
            actions = self._core.duologue_message(key, image_id, data, now)
        else:
            return  # closed by an earlier message of this batch
        self._execute(actions, now)
