"""Replay-merge: join a live stream from a recording, without a gap.

A subscriber that starts late replays the recording of a live stream from where it wants,
and the replay merges into the live stream once it has caught up: one image, every
message once, in order (``aeron_archive_replay_merge_t``). The live publication must offer
a dynamic multi-destination control endpoint (``control-mode=dynamic``, ``control=HOST:PORT``)
so the subscriber can add itself as a destination.

>>> merge = archive.replay_merge(recording_id,
...                              live_destination="aeron:udp?endpoint=127.0.0.1:0|control=127.0.0.1:40456")
>>> while not merge.is_merged:
...     merge.poll(handler, 10)
>>> merge.poll(handler, 10)    # live from here on, on the same image
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._aeron import archive as _native
from ..subscription import Subscription
from .errors import typed

#: How long the merge may make no progress before it fails (Aeron's default).
DEFAULT_PROGRESS_TIMEOUT_S = 5.0


class ReplayMerge:
    """A replay of a recording that merges into its live stream (make it with
    :meth:`AeronArchive.replay_merge`). Poll it like a subscription; it owns its
    subscription and closes it with itself."""

    def __init__(self, raw: _native.ReplayMerge, subscription: Subscription) -> None:
        self._raw = raw
        self._subscription = subscription

    def poll(self, handler: Callable[..., Any], fragment_limit: int = 10) -> int:
        """Advance the merge (``aeron_archive_replay_merge_do_work``), then poll the
        subscription: ``handler(data, header)`` per message, as :meth:`Subscription.poll`.
        Returns the number of fragments. Raises ArchiveError when the merge failed."""
        typed(self._raw.do_work)
        count: int = self._subscription.poll(handler, fragment_limit)
        return count

    @property
    def is_merged(self) -> bool:
        """True once the replay has stopped and the image is the live stream."""
        return typed(lambda: self._raw.is_merged)

    @property
    def has_failed(self) -> bool:
        return typed(lambda: self._raw.has_failed)

    @property
    def is_live_added(self) -> bool:
        """True once the live destination is added to the subscription."""
        return typed(lambda: self._raw.is_live_added)

    @property
    def is_closed(self) -> bool:
        closed: bool = self._raw.is_closed
        return closed

    @property
    def channel(self) -> str:
        """The subscription's channel (manual-control multi-destination)."""
        return self._subscription.channel

    def close(self) -> None:
        """Stop the replay, remove the destinations, close the subscription. Idempotent."""
        self._raw.close()
        self._subscription.close()

    def __enter__(self) -> "ReplayMerge":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


__all__ = ["DEFAULT_PROGRESS_TIMEOUT_S", "ReplayMerge"]
