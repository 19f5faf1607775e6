"""Message polling: one call into C per pass reads every subscription; messages go to the core.

The duologue subscriptions are members of one :class:`~aeron_py.PollSet` (added when
a duologue goes live, removed when it closes), the all-clients subscription of
another (its own fragment limit): a pass costs two calls however many duologues
exist, and returns only the messages, each with its subscription's key and its
session id.  A message is routed to the announced image of that session id (unique
among one subscription's images): HELLOs to the core's all-clients rules, duologue
messages to that duologue's.  Polling also tells the C client that the subscription's
image list was read, which lets it free the logs of images that went away.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...poll_set import PollSet
    from .channels import Duologue
    from .images import ImageBook
    from ..core.server import Action, EchoServerCore

__all__ = ["MessagePolling"]

#: Fragments per duologue subscription per pass (fairness between duologues).
POLL_LIMIT = 10
#: Fragments of the all-clients subscription per pass (HELLOs of every client).
POLL_LIMIT_ALL_CLIENTS = 64


class MessagePolling:
    """Polling half of the server loop (a mixin: the state lives on the server)."""

    _core: EchoServerCore
    _duologues: dict[int, Duologue]
    _images: ImageBook
    _hello_set: PollSet[None] | None
    _poll_set: PollSet[int] | None

    if TYPE_CHECKING:
        def _execute(self, actions: list[Action], now: float) -> None: ...

    def _poll_images(self, now: float) -> int:
        """Read every subscription (two calls) and feed the core; the number of messages."""
        work = 0
        if self._hello_set is not None:
            for _, session_id, data in self._hello_set.poll(POLL_LIMIT_ALL_CLIENTS):
                self._deliver(None, session_id, data, now)
                work += 1
        if self._poll_set is not None:
            for session, session_id, data in self._poll_set.poll(POLL_LIMIT):
                self._deliver(session, session_id, data, now)
                work += 1
        return work

    def _deliver(self, key: int | None, session_id: int, data: bytes, now: float) -> None:
        """One message of subscription ``key`` (None: all-clients) from ``session_id`` to the core."""
        if key is not None and key not in self._duologues:
            return  # closed by an earlier message of this batch
        image_id = self._images.image_for(key, session_id)
        if image_id is None:  # cannot happen: image events are handled before polling
            self._core.log_summary.log(logging.WARNING, "message:unknown_image", now,
                                       "message from unannounced session %d dropped", session_id)
            return
        if key is None:
            actions = self._core.hello_received(image_id, data, now)
        else:
            actions = self._core.duologue_message(key, image_id, data, now)
        self._execute(actions, now)
