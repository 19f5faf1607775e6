"""Subscriptions and images (``aeron_subscription_t``, ``aeron_image_t``).

Handlers are called as ``handler(data: bytes, header: Header)``.  ``data`` is a copy,
so a handler may keep it; ``header`` is a copy of the frame header.  Messages larger
than the MTU are reassembled before the handler sees them (:meth:`Subscription.poll`).

If a handler raises, polling stops at that message: it counts as delivered, every
later message stays in the log for the next poll, and the exception propagates to
the caller of ``poll``.  Nothing is silently dropped.

Thread-safety: a subscription and its images belong to one thread at a time.
"""
from __future__ import annotations

import enum
from collections.abc import Callable
from typing import Any, Optional

from . import _aeron
from .channel import split_endpoint

Header = _aeron.Header
FragmentHandler = Callable[[bytes, Any], Any]


class Action(enum.IntEnum):
    """What a controlled-poll handler returns (``aeron_controlled_fragment_handler_action_t``).

    ABORT: not consumed, redelivered next poll. BREAK: consumed, stop polling.
    COMMIT: consumed, position committed, continue. CONTINUE: consumed, continue.
    A handler returning ``None`` means CONTINUE.
    """

    ABORT = _aeron.ACTION_ABORT
    BREAK = _aeron.ACTION_BREAK
    COMMIT = _aeron.ACTION_COMMIT
    CONTINUE = _aeron.ACTION_CONTINUE


class Image:
    """One publisher's stream within a subscription.

    Images from :meth:`Subscription.images` / :meth:`Subscription.image_by_session_id`
    are *live* (retained; release with :meth:`close` or a ``with`` block).  Images
    passed to ``on_available_image`` / ``on_unavailable_image`` callbacks are
    snapshots of the constants; their live operations raise.
    """

    __slots__ = ("_image", "_assembler")

    def __init__(self, handle: Any) -> None:
        self._image = handle
        self._assembler: Optional[_aeron.FragmentAssembler] = None

    session_id = property(lambda self: self._image.session_id, doc="The publisher's session id.")
    source_identity = property(lambda self: self._image.source_identity,
                               doc="Where the stream comes from: 'a.b.c.d:port', '[v6]:port' or 'aeron:ipc'.")
    correlation_id = property(lambda self: self._image.correlation_id, doc="The driver's id for this image.")
    join_position = property(lambda self: self._image.join_position)
    term_buffer_length = property(lambda self: self._image.term_buffer_length,
                                  doc="Term length the sender chose (the image maps about 3x this).")
    mtu_length = property(lambda self: self._image.mtu_length)
    initial_term_id = property(lambda self: self._image.initial_term_id)
    is_live = property(lambda self: self._image.is_live)

    @property
    def source_address(self) -> tuple[str, int] | None:
        """``source_identity`` split into (host, port); None for IPC."""
        identity = self._image.source_identity
        if identity.startswith("aeron:"):
            return None
        return split_endpoint(identity)

    @property
    def position(self) -> int:
        """``aeron_image_position``."""
        return self._image.position

    @property
    def is_end_of_stream(self) -> bool:
        """``aeron_image_is_end_of_stream``."""
        return self._image.is_end_of_stream

    @property
    def is_closed(self) -> bool:
        """``aeron_image_is_closed``."""
        return self._image.is_closed

    def _reassembler(self) -> _aeron.FragmentAssembler:
        if self._assembler is None:
            self._assembler = _aeron.FragmentAssembler()
        return self._assembler

    def poll(self, handler: FragmentHandler, fragment_limit: int = 10) -> int:
        """Deliver up to ``fragment_limit`` fragments, reassembled (``aeron_image_controlled_poll``)."""
        return self._image.poll(handler, fragment_limit, self._reassembler())

    def controlled_poll(self, handler: FragmentHandler, fragment_limit: int = 10) -> int:
        """Like :meth:`poll`; the handler returns an :class:`Action`."""
        return self._image.controlled_poll(handler, fragment_limit, self._reassembler())

    def poll_batch(self, fragment_limit: int = 100) -> list[bytes]:
        """The next messages as a list (no per-message Python call)."""
        return self._image.poll_batch(fragment_limit, self._reassembler())

    def reject(self, reason: str) -> None:
        """Ask the driver to reject this image's publisher (``aeron_image_reject``)."""
        self._image.reject(reason)

    def close(self) -> None:
        """Release a live image (``aeron_subscription_image_release``). Idempotent."""
        self._image.close()

    def __enter__(self) -> "Image":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        kind = "live" if self._image.is_live else "snapshot"
        return f"<Image session={self.session_id} source={self.source_identity} {kind}>"


ImageHandler = Callable[[Image], Any]


def wrap_image_handler(handler: ImageHandler | None) -> Callable[[Any], Any] | None:
    """Adapt a user's image callback to the extension's raw Image snapshots."""
    if handler is None:
        return None
    return lambda raw: handler(Image(raw))


class Subscription:
    """A subscription (``aeron_subscription_t``); made by ``Aeron.add_subscription``."""

    __slots__ = ("_sub", "_assembler", "_work", "__weakref__")

    def __init__(self, handle: Any, work: Callable[[], int] | None = None) -> None:
        self._sub = handle
        self._assembler = _aeron.FragmentAssembler()
        self._work = work

    def poll(self, handler: FragmentHandler, fragment_limit: int = 10) -> int:
        """Deliver up to ``fragment_limit`` fragments, reassembling messages larger than the MTU.

        Returns the number of fragments consumed (``aeron_subscription_controlled_poll``).
        """
        return self._sub.poll(handler, fragment_limit, self._assembler)

    def poll_fragments(self, handler: FragmentHandler, fragment_limit: int = 10) -> int:
        """Like :meth:`poll` but without reassembly: the handler sees raw fragments."""
        return self._sub.poll(handler, fragment_limit)

    def controlled_poll(self, handler: FragmentHandler, fragment_limit: int = 10) -> int:
        """Like :meth:`poll`; the handler returns an :class:`Action` (None = CONTINUE)."""
        return self._sub.controlled_poll(handler, fragment_limit, self._assembler)

    def poll_batch(self, fragment_limit: int = 100) -> list[bytes]:
        """Up to ``fragment_limit`` messages as a list of bytes, with no Python call per message."""
        return self._sub.poll_batch(fragment_limit, self._assembler)

    @property
    def is_connected(self) -> bool:
        """``aeron_subscription_is_connected``: at least one image."""
        return self._sub.is_connected

    @property
    def is_closed(self) -> bool:
        return self._sub.is_closed

    @property
    def channel(self) -> str:
        return self._sub.channel

    @property
    def stream_id(self) -> int:
        return self._sub.stream_id

    @property
    def registration_id(self) -> int:
        return self._sub.registration_id

    @property
    def image_count(self) -> int:
        """``aeron_subscription_image_count``."""
        return self._sub.image_count

    def images(self) -> list[Image]:
        """The current images, retained: close them (or use ``with``) when done."""
        return [Image(raw) for raw in self._sub.images()]

    def image_by_session_id(self, session_id: int) -> Image | None:
        """``aeron_subscription_image_by_session_id``: a retained image, or None."""
        raw = self._sub.image_by_session_id(session_id)
        return None if raw is None else Image(raw)

    def resolved_endpoint(self) -> str:
        """``aeron_subscription_resolved_endpoint``: the bound address (useful with port 0)."""
        return self._sub.resolved_endpoint()

    def add_destination(self, uri: object, *, timeout: float = 5.0) -> None:
        """Add a multi-destination-subscription (MDS) destination and wait for the driver."""
        from .client import wait_for

        wait_for(self._sub.async_add_destination(str(uri)).poll, timeout, f"add_destination({uri})", self._work)

    def remove_destination(self, uri: object, *, timeout: float = 5.0) -> None:
        """Remove an MDS destination and wait for the driver."""
        from .client import wait_for

        wait_for(self._sub.async_remove_destination(str(uri)).poll, timeout, f"remove_destination({uri})",
                 self._work)

    def close(self) -> None:
        """``aeron_subscription_close``; releases images retained through it. Idempotent."""
        self._sub.close()

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Subscription {self._sub.channel} stream={self._sub.stream_id}>"
