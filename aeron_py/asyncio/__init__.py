"""asyncio-native Aeron: ``import aeron_py.asyncio as aio``.

>>> async with aio.Aeron(driver=driver) as aeron:
...     sub = await aeron.add_subscription(channel, 10)
...     pub = await aeron.add_publication(channel, 10)
...     await pub.offer(b"hello", timeout=5)       # waits out back pressure, loop keeps running
...     message = await sub.receive()               # Message(data, header)
...     async for message in sub: ...               # until the subscription is closed
...     batch = await sub.receive_batch(100)
...     event = await sub.image_events.next()       # ImageEvent(available, image)

Waking: Aeron gives no file descriptor, so ``receive()`` polls once inline and, when
nothing is there, waits while a waker polls for it.  The default
``waker="thread"`` polls on a thread that parks in Aeron's backoff idle strategy with the
GIL released and hands messages over with ``call_soon_threadsafe``; ``waker="timer"``
polls on the loop itself (a short spin of loop iterations, then loop timers of 1 ms,
backing off to 4 ms).  See
:mod:`aeron_py.asyncio.wakers` and ``benchmarks/results/async.json`` for their costs.
Works with uvloop too.  Not imported by ``import aeron_py``.
"""
from __future__ import annotations

from .backoff import Backoff
from .client import Aeron
from .publication import Publication
from .subscription import ImageEvent, ImageEvents, Message, Subscription, SubscriptionClosedError
from .wakers import ThreadWaker, TimerWaker

__all__ = ["Aeron", "Backoff", "ImageEvent", "ImageEvents", "Message", "Publication", "Subscription",
           "SubscriptionClosedError", "ThreadWaker", "TimerWaker"]
