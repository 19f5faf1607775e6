"""await sub.receive(), async for, receive_batch, cancellation and close, with both wakers,
under asyncio and uvloop (the loop parametrization comes from conftest)."""
from __future__ import annotations

import asyncio
import gc
import random

import pytest

import aeron_py.asyncio as aio
from aeron_py import Aeron, AeronError, ClientClosedError
from aio_helpers import wait_for_condition

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

DEADLINE = 10.0


async def _connected(aeron: aio.Aeron, channel: tuple[str, int], **sub_options: object) -> tuple[aio.Publication, aio.Subscription]:
    sub = await aeron.add_subscription(*channel, **sub_options)  # type: ignore[arg-type]
    pub = await aeron.add_publication(*channel)
    await pub.wait_connected(DEADLINE)
    await sub.wait_connected(DEADLINE)
    return pub, sub


async def test_receive_and_async_for(driver: object, channel: tuple[str, int], waker: str) -> None:
    async with aio.Aeron(driver=driver, waker=waker) as aeron:  # type: ignore[arg-type]
        pub, sub = await _connected(aeron, channel)
        sent = [f"message {i}".encode() for i in range(6)]
        for data in sent:
            await pub.offer(data, timeout=DEADLINE)
        first = await asyncio.wait_for(sub.receive(), DEADLINE)
        assert first.data == sent[0]
        assert first.header is not None and first.header.session_id == pub.session_id
        rest: list[bytes] = []

        async def collect() -> None:
            async for message in sub:
                rest.append(message.data)
                if len(rest) == len(sent) - 1:
                    break

        await asyncio.wait_for(collect(), DEADLINE)
        assert rest == sent[1:]
        assert sub.queued == 0


async def test_receive_waits_without_blocking_the_loop(driver: object, channel: tuple[str, int], waker: str) -> None:
    async with aio.Aeron(driver=driver, waker=waker) as aeron:  # type: ignore[arg-type]
        pub, sub = await _connected(aeron, channel, with_header=False)
        pending = asyncio.ensure_future(sub.receive())
        ticks = 0
        for _ in range(20):  # the loop keeps running other coroutines while the receive waits
            await asyncio.sleep(0.001)
            ticks += 1
        assert not pending.done() and ticks == 20
        await pub.offer(b"late", timeout=DEADLINE)
        message = await asyncio.wait_for(pending, DEADLINE)
        assert message == aio.Message(b"late", None)
        if waker == "timer":  # nobody receives now: the loop-timer waker has nothing scheduled
            assert aeron._waker is not None and aeron._waker._handle is None  # type: ignore[attr-defined]


async def test_receive_batch_keeps_order(driver: object, channel: tuple[str, int], waker: str) -> None:
    async with aio.Aeron(driver=driver, waker=waker) as aeron:  # type: ignore[arg-type]
        pub, sub = await _connected(aeron, channel, with_header=False, fragment_limit=7)
        sent = [i.to_bytes(4, "little") for i in range(50)]
        for data in sent:
            await pub.offer(data, timeout=DEADLINE)
        got: list[bytes] = []
        for _ in range(len(sent)):  # bounded: each batch has at least one message
            batch = await asyncio.wait_for(sub.receive_batch(16), DEADLINE)
            assert 1 <= len(batch) <= 16
            got.extend(m.data for m in batch)
            if len(got) == len(sent):
                break
        assert got == sent
        with pytest.raises(ValueError, match="max_messages"):
            await sub.receive_batch(0)


async def test_cancelled_receive_after_wake_up_keeps_the_message(driver: object, channel: tuple[str, int]) -> None:
    """The receiver is woken (the message is taken from Aeron and queued) and cancelled before
    it runs: the message stays queued for the next receive."""
    async with aio.Aeron(driver=driver, waker="timer") as aeron:
        pub, sub = await _connected(aeron, channel, with_header=False)
        receiver = asyncio.ensure_future(sub.receive())
        await wait_for_condition(lambda: sub._waiters, DEADLINE, "the receiver to wait")
        assert aeron._waker is not None
        aeron._waker.unwant(sub)  # this test polls in the waker's place, to cancel at the exact moment
        await pub.offer(b"precious", timeout=DEADLINE)
        # take it from Aeron exactly as the waker does, then cancel the woken receiver before it runs
        await wait_for_condition(lambda: sub._poll_here() > 0, DEADLINE, "the message to arrive")
        assert receiver.cancel()
        with pytest.raises(asyncio.CancelledError):
            await receiver
        assert sub.queued == 1
        assert (await asyncio.wait_for(sub.receive(), DEADLINE)).data == b"precious"


async def test_random_cancellations_lose_nothing(driver: object, channel: tuple[str, int], waker: str) -> None:
    """Receivers time out (are cancelled) at random moments while a producer sends: every message
    still arrives exactly once, in order."""
    rng = random.Random(7)
    async with aio.Aeron(driver=driver, waker=waker) as aeron:  # type: ignore[arg-type]
        pub, sub = await _connected(aeron, channel, with_header=False, fragment_limit=3)
        count = 200
        sent = [i.to_bytes(4, "little") for i in range(count)]

        async def produce() -> None:
            for i, data in enumerate(sent):
                await pub.offer(data, timeout=DEADLINE)
                if i % 10 == 0:
                    await asyncio.sleep(rng.choice((0, 0.0005, 0.002)))

        producer = asyncio.ensure_future(produce())
        got: list[bytes] = []
        cancelled = 0
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 30
        while len(got) < count and loop.time() < deadline:
            try:
                got.append((await asyncio.wait_for(sub.receive(), rng.choice((0, 0.0001, 0.001, 0.01)))).data)
            except TimeoutError:
                cancelled += 1
        await asyncio.wait_for(producer, DEADLINE)
        assert got == sent
        assert cancelled > 0


async def test_close_while_receiving_raises(driver: object, channel: tuple[str, int], waker: str) -> None:
    async with aio.Aeron(driver=driver, waker=waker) as aeron:  # type: ignore[arg-type]
        _pub, sub = await _connected(aeron, channel)
        pending = asyncio.ensure_future(sub.receive())
        iterating = asyncio.ensure_future(_drain(sub))
        await wait_for_condition(lambda: len(sub._waiters) == 2, DEADLINE, "both receivers to wait")
        sub.close()
        with pytest.raises(aio.SubscriptionClosedError, match="closed"):
            await asyncio.wait_for(pending, DEADLINE)
        assert await asyncio.wait_for(iterating, DEADLINE) == []  # async for just ends
        with pytest.raises(aio.SubscriptionClosedError):
            await sub.receive()
        sub.close()  # idempotent


async def test_client_close_while_receiving_raises(driver: object, channel: tuple[str, int], waker: str) -> None:
    aeron = aio.Aeron(driver=driver, waker=waker)  # type: ignore[arg-type]
    try:
        _pub, sub = await _connected(aeron, channel)
        pending = asyncio.ensure_future(sub.receive())
        await wait_for_condition(lambda: sub._waiters, DEADLINE, "the receiver to wait")
        aeron.close()
        with pytest.raises(ClientClosedError, match="closed"):
            await asyncio.wait_for(pending, DEADLINE)
        if waker == "thread":  # closing stopped (and joined) the poller thread
            assert not aeron._waker._thread.is_alive()  # type: ignore[union-attr]
        with pytest.raises(ClientClosedError):
            await aeron.add_subscription(*channel)
    finally:
        aeron.close()
    assert aeron.sync.is_closed


async def test_a_receive_whose_own_poll_fails_raises_and_never_waits(driver: object, channel: tuple[str, int],
                                                                    waker: str) -> None:
    async with aio.Aeron(driver=driver, waker=waker) as aeron:  # type: ignore[arg-type]
        sub = await aeron.add_subscription(*channel)
        sub.sync.close()  # behind the asyncio subscription's back: its next poll raises
        with pytest.raises(AeronError, match="closed"):
            await asyncio.wait_for(sub.receive(), DEADLINE)
        assert sub.is_closed


async def test_dropped_client_lets_its_poller_thread_end(driver: object, channel: tuple[str, int]) -> None:
    with Aeron(driver=driver) as sync_client:  # type: ignore[arg-type]
        aeron = aio.Aeron(client=sync_client, waker="thread")
        _pub, sub = await _connected(aeron, channel)
        pending = asyncio.ensure_future(sub.receive())
        await wait_for_condition(lambda: sub._waiters, DEADLINE, "the receiver to wait")
        pending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pending
        assert isinstance(aeron._waker, aio.ThreadWaker)
        thread = aeron._waker._thread
        del aeron, sub, _pub, pending  # never closed
        gc.collect()
        await wait_for_condition(lambda: not thread.is_alive(), DEADLINE, "the poller thread to end")
        assert not sync_client.is_closed  # a wrapped client is not closed by the wrapper


async def _drain(sub: aio.Subscription) -> list[bytes]:
    return [message.data async for message in sub]


def test_bad_arguments_are_refused(driver: object) -> None:
    with pytest.raises(ValueError, match="waker"):
        aio.Aeron(driver=driver, waker="poll")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="conductor"):
        aio.Aeron(driver=driver, use_conductor_agent_invoker=True)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_delay"):
        aio.Backoff(min_delay=0.01, max_delay=0.001)
