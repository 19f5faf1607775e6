"""Polling many subscriptions and images with one call (:class:`PollSet`).

A server holding one subscription per client would otherwise call ``sub.poll(...)`` for
each of them on every pass of its loop, a Python call per idle subscription.  A
:class:`PollSet` polls all of them inside the extension and returns only the messages:

>>> ps: PollSet[int] = PollSet()
>>> ps.add(sub, 42)                        # a Subscription or a live Image, with any key
>>> for key, session_id, data in ps.poll(fragment_limit=10):
...     handle(key, session_id, data)
>>> for key, session_id in ps.end_of_stream():
...     free_slot(key)                     # that publisher closed cleanly and was drained

Contract (enforced in the extension, ``cpp/binding/poll_set.cpp``):

* ``poll`` calls ``aeron_subscription_controlled_poll`` (``aeron_image_controlled_poll`` for
  an Image) once per entry with ``fragment_limit`` fragments, reassembling messages larger
  than the MTU like :meth:`Subscription.poll`, and returns ``[(key, session_id, bytes),
  ...]`` in delivery order (per stream, the order published), ``[]`` when nothing arrived.
  ``max_messages`` caps the total; the next poll then starts after the entry that filled
  the cap, so no entry starves.  No Python code runs while the C client delivers: the
  payloads are copied and the Python objects built after the last C call.
* The set holds strong references to its subscriptions/images and keys (an entry keeps its
  subscription open until it is removed or closed).
* An entry whose subscription, image or client was closed (from Python, another thread or
  :meth:`Aeron.close`) is dropped by the next ``poll``/``end_of_stream`` and never touched
  again: after ``Aeron.close()`` a poll returns ``[]``.  ``remove`` of such an entry
  returns True until a poll dropped it, then False.
* Polling the set while one of its subscriptions is being polled (from a handler of
  ``Subscription.poll``) raises ``RuntimeError`` before anything is consumed, as does a
  second poll of the set itself while it runs (another thread, a finalizer).
* ``end_of_stream()`` reports each image that reached its end of stream
  (``aeron_image_is_end_of_stream``: the publication closed and everything it sent was
  consumed) once, as ``(key, session_id)``.  It walks each subscription's images with
  ``aeron_subscription_for_each_image``, which also lets the C client free the logs of
  images that went away.

Thread-safety: like a subscription, a set belongs to one thread at a time.  A key that
refers back to its set makes a reference cycle: ``clear()`` breaks it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Generic, TypeVar

from . import _aeron

if TYPE_CHECKING:
    from .subscription import Image, Subscription

K = TypeVar("K")


class PollSet(_aeron.PollSet, Generic[K]):
    """Subscriptions and images polled by one call, each with a key (see the module docstring).

    ``poll(fragment_limit=10, max_messages=None)`` is inherited from the extension (no
    Python frame on the call).  ``fragment_limit`` and ``max_messages`` must be ints in
    ``[0, 2**31 - 1]`` (ValueError otherwise).
    """

    __slots__ = ()

    if TYPE_CHECKING:
        def add(self, owner: Subscription | Image, key: K) -> None:
            """Add ``owner`` with ``key``: ValueError if present, TypeError if not a Subscription/Image."""

        def remove(self, owner: Subscription | Image) -> bool:
            """Remove ``owner``; False if it is not in the set."""

        def poll(self, /, fragment_limit: int = 10, max_messages: int | None = None) -> list[tuple[K, int, bytes]]:
            """The messages of every entry as (key, session_id, data), in delivery order."""

        def end_of_stream(self) -> list[tuple[K, int]]:
            """(key, session_id) of each image that reached end of stream since the last call."""

        def __contains__(self, owner: object) -> bool: ...

    def __repr__(self) -> str:
        return f"<PollSet entries={len(self)}>"


_aeron._adopt_fast_methods(PollSet)
