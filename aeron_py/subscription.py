"""Subscriptions and images (``aeron_subscription_t``, ``aeron_image_t``).

Handlers are called as ``handler(data, header)``:

* ``data`` is a ``bytes`` copy by default, so a handler may keep it.  With
  ``zero_copy=True`` it is a read-only ``memoryview`` of the log buffer that is dead
  once the handler returns: touching it, or any slice of it, raises ``ValueError``
  (it never reads freed memory).  Copy what you keep (``bytes(view)``).  A buffer
  export of the view still held when the handler returns (``pickle.PickleBuffer``, a C
  extension's ``Py_buffer``) makes the poll raise ``BufferError``.  Not guarded:
  libraries that keep the raw address after releasing the export, such as
  ``numpy.frombuffer`` — copy inside the handler (``numpy.frombuffer(view).copy()``).
* ``header`` is a :class:`HeaderView` valid only during the call (no allocation per
  message); after the handler returns its attributes raise ``ValueError``.  Keep
  ``header.copy()`` (a detached :class:`Header`) instead.  ``with_header=False``
  calls ``handler(data)``.

Messages larger than the MTU are reassembled before the handler sees them
(:meth:`Subscription.poll`; :meth:`Subscription.poll_fragments` shows raw fragments).

If a handler raises, polling stops at that message: it counts as delivered, every
later message stays in the log for the next poll, and the exception propagates to
the caller of ``poll``.  Nothing is silently dropped.

Safety contract (all enforced in the extension):

* polling a subscription (or one of its images) from its own handler, or from another
  thread while it is polling, raises ``RuntimeError``;
* closing a subscription, an image or the client from a handler, an image callback or
  another thread while a poll runs is *deferred*: the handle reports closed at once,
  the poll delivers nothing more, and the C close runs when the poll returns.

Thread-safety: a subscription and its images belong to one thread at a time.
"""
from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, SupportsIndex, SupportsInt

from . import _aeron
from .channel import split_endpoint
from .waiting import wait_for

Header = _aeron.Header
HeaderView = _aeron.HeaderView
FragmentHandler = Callable[..., Any]

#: Advice added to the extension's error when a callback snapshot is used as a live image.
SNAPSHOT_ADVICE = ("images passed to on_available_image/on_unavailable_image are snapshots of the constants; "
                   "use Subscription.image_by_session_id() or Subscription.images() for a live image")


class ImageSnapshotError(_aeron.AeronError):
    """A live operation (poll, position, reject, ...) on an Image handed to an image callback."""

    def __str__(self) -> str:
        return f"{super().__str__()}; {SNAPSHOT_ADVICE}"


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


class Image(_aeron.Image):
    """One publisher's stream within a subscription.

    Images from :meth:`Subscription.images` / :meth:`Subscription.image_by_session_id`
    are *live* (retained; release with :meth:`close` or a ``with`` block).  Images
    passed to ``on_available_image`` / ``on_unavailable_image`` callbacks are
    snapshots of the constants; their live operations raise.

    ``poll(handler, fragment_limit=10, zero_copy=False, with_header=True)``,
    ``controlled_poll(...)`` and ``poll_batch(fragment_limit=100)`` are inherited from
    the extension (``aeron_image_controlled_poll``, reassembling), and so are
    ``bounded_poll(handler, limit_position, ...)`` and ``bounded_controlled_poll(...)``
    (``aeron_image_bounded_controlled_poll``), which deliver only the messages that end at
    or before ``limit_position``.
    """

    __slots__ = ()

    @property
    def source_address(self) -> tuple[str, int] | None:
        """``source_identity`` split into (host, port); None for IPC."""
        identity = self.source_identity
        if identity.startswith("aeron:"):
            return None
        return split_endpoint(identity)

    def __enter__(self) -> "Image":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        kind = "live" if self.is_live else "snapshot"
        return f"<Image session={self.session_id} source={self.source_identity} {kind}>"


ImageHandler = Callable[[Image], Any]


class Subscription(_aeron.Subscription):
    """A subscription (``aeron_subscription_t``); made by ``Aeron.add_subscription``.

    Inherited from the extension (no Python frame on these calls):

    * ``poll(handler, fragment_limit=10, zero_copy=False, with_header=True)``: deliver up to
      ``fragment_limit`` fragments, reassembling messages larger than the MTU; returns the
      number of fragments consumed (``aeron_subscription_controlled_poll``).
    * ``controlled_poll(...)``: the handler returns an :class:`Action` (None = CONTINUE).
    * ``poll_fragments(...)``: like ``poll`` without reassembly.
    * ``poll_batch(fragment_limit=100)``: the next messages as a list of bytes.
    """

    __slots__ = ()

    if TYPE_CHECKING:  # the extension makes images as this module's Image (registered below)
        def image_at_index(self, index: SupportsInt | SupportsIndex) -> Image | None: ...

        def image_by_session_id(self, session_id: SupportsInt | SupportsIndex) -> Image | None: ...

    def add_destination(self, uri: object, *, timeout: float = 5.0) -> None:
        """Add a multi-destination-subscription (MDS) destination and wait for the driver."""
        wait_for(self.async_add_destination(str(uri)).poll, timeout, f"add_destination({uri})", self._work)

    def remove_destination(self, uri: object, *, timeout: float = 5.0) -> None:
        """Remove an MDS destination and wait for the driver."""
        wait_for(self.async_remove_destination(str(uri)).poll, timeout, f"remove_destination({uri})", self._work)

    def __enter__(self) -> "Subscription":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Subscription {self.channel} stream={self.stream_id}>"


_aeron._adopt_fast_methods(Image)
_aeron._adopt_fast_methods(Subscription)
_aeron._register_subscription_side(subscription=Subscription, image=Image, snapshot_error=ImageSnapshotError)
