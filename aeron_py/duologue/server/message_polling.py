"""Message polling: one call into C per pass reads every subscription; messages go to the core.

The duologue subscriptions are members of one :class:`~aeron_py.PollSet` (added when
a duologue goes live, removed when it closes: :mod:`.channels`), the all-clients
subscription of another (its own fragment limit): a pass costs two calls however
many duologues exist, and returns only the messages, each with its subscription's
key and its session id.  A message is routed to the announced image of that session
id (unique among one subscription's images, :mod:`.image_admission`): HELLOs to the
core's all-clients rules, duologue messages to that duologue's.  Polling also tells
the C client that the subscription's image list was read, which lets it free the
logs of images that went away.
"""
from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from .channels import DuologueChannels
from .image_admission import ImageAdmission
from .images import duologue_of
from ..core.protocol import IPC_SOURCE
from .steps import Steps

if TYPE_CHECKING:
    from ...poll_set import PollSet
    from .blocklist_watch import BlocklistWatch
    from ..core.contract import Action
    from ..core.server import DuologueServerCore

__all__ = ["MessagePolling", "POLL_LIMIT", "POLL_LIMIT_ALL_CLIENTS"]

#: Fragments per duologue subscription per pass (fairness between duologues).
POLL_LIMIT = 10
#: Fragments of the all-clients subscription per pass (HELLOs of every client).
POLL_LIMIT_ALL_CLIENTS = 64


class MessagePolling:
    """Reads the two :class:`~aeron_py.PollSet` s and hands each message to the core."""

    def __init__(self, core: DuologueServerCore, admission: ImageAdmission, channels: DuologueChannels,
                 hello_set: PollSet[int | None], poll_set: PollSet[int], watch: BlocklistWatch | None = None) -> None:
        self._core = core
        self._admission = admission
        self._channels = channels
        self._hello_set = hello_set  # the all-clients subscriptions (UDP, and IPC when served)
        self._poll_set = poll_set  # every live duologue's subscription, keyed by session
        self._watch = watch  # the blocklist in force, if the server has one

    def poll(self, now: float) -> Steps:
        """Read every subscription (two calls) and feed the core (its actions of each message
        yielded, executed before the next message is looked at); the number of messages."""
        work = 0
        for key, session_id, data in self._hello_set.poll(POLL_LIMIT_ALL_CLIENTS):
            yield self._deliver(key, session_id, data, now)
            work += 1
        for session, session_id, data in self._poll_set.poll(POLL_LIMIT):
            yield self._deliver(session, session_id, data, now)
            work += 1
        return work

    def _deliver(self, key: int | None, session_id: int, data: bytes, now: float) -> list[Action]:
        """One message of subscription ``key`` (all-clients or a duologue's: :func:`.images.duologue_of`)
        from ``session_id`` to the core."""
        duologue = duologue_of(key)
        if duologue is not None and not self._channels.is_live(duologue):
            return []  # closed by an earlier message of this batch
        image_id = self._admission.image_for(key, session_id)
        if image_id is None:  # cannot happen: image events are handled before polling
            self._core.log_summary.log(logging.WARNING, "message:unknown_image", now,
                                       "message from unannounced session %d dropped", session_id)
            return []
        if duologue is None:  # the core's facts: the source's blocklist entry, the ports still bound
            return self._core.hello_received(image_id, data, now, blocked=self._blocked(image_id),
                                             busy_ports=self._channels.busy_ports)
        return self._core.duologue_message(duologue, image_id, data, now)

    def _blocked(self, image_id: int) -> str | None:
        """The blocklist entry in force now for initial image ``image_id``'s source, or None."""
        if self._watch is None:
            return None
        host = self._admission.source_host(image_id)
        return None if host is None or host == IPC_SOURCE else self._watch.is_blocked(host)
