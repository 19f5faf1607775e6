"""await pub.offer(): back pressure and not-connected waited out on the loop, timeouts,
cancellation, close while an offer waits; under asyncio and uvloop."""
from __future__ import annotations

import asyncio

import pytest

import aeron_py.asyncio as aio
from aeron_py import BACK_PRESSURED, AeronTimeoutError, PublicationClosedError

pytestmark = [pytest.mark.integration, pytest.mark.timeout(60)]

DEADLINE = 10.0
TERM = 64 * 1024  # smallest term: back pressure after ~32 KiB unread


class Ticker:
    """A coroutine that counts loop turns: proof that the loop was not blocked."""

    def __init__(self) -> None:
        self.ticks = 0
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(0.001)
            self.ticks += 1


async def test_offer_waits_out_back_pressure_while_the_loop_runs(driver: object, channel: tuple[str, int]) -> None:
    uri, stream = channel
    async with aio.Aeron(driver=driver) as aeron:
        sub = await aeron.add_subscription(uri, stream, with_header=False)
        pub = await aeron.add_exclusive_publication(f"{uri}|term-length={TERM}", stream)
        await pub.wait_connected(DEADLINE)
        chunk = bytes(1000)
        offered, pressured = 0, 0
        for _ in range(10_000):  # fill the window with nobody reading, until the pressure stays (bounded)
            result = pub.sync.offer(chunk)
            if result > 0:
                offered, pressured = offered + 1, 0
                continue
            pressured = pressured + 1 if result == BACK_PRESSURED else 0
            if pressured >= 50:  # back pressured for 50 ms in a row: the receiver window is full
                break
            await asyncio.sleep(0.001)
        else:
            pytest.fail("the publication never stayed back pressured")
        ticker = Ticker()
        pending = asyncio.ensure_future(pub.offer(b"after the pressure", timeout=DEADLINE))
        start_ticks = ticker.ticks
        for _ in range(int(DEADLINE * 1000)):  # bounded: wait until the ticker has clearly run
            await asyncio.sleep(0.001)
            if ticker.ticks - start_ticks >= 20:
                break
        assert not pending.done(), "the offer should still be back pressured (nobody reads)"
        assert ticker.ticks - start_ticks >= 20, "the loop was blocked while the offer waited"
        received = 0
        while not pending.done() or received < offered + 1:  # reading relieves the pressure
            batch = await asyncio.wait_for(sub.receive_batch(100), DEADLINE)
            received += len(batch)
            assert received <= offered + 1
        assert await pending > 0
        assert batch[-1].data == b"after the pressure"
        ticker.task.cancel()


async def test_offer_timeout_names_the_outcome(driver: object, channel: tuple[str, int]) -> None:
    async with aio.Aeron(driver=driver) as aeron:
        pub = await aeron.add_publication(*channel)  # no subscriber: NOT_CONNECTED
        with pytest.raises(AeronTimeoutError, match="NOT_CONNECTED"):
            await pub.offer(b"nobody", timeout=0.05)


async def test_cancelled_offer_offers_nothing(driver: object, channel: tuple[str, int]) -> None:
    async with aio.Aeron(driver=driver) as aeron:
        pub = await aeron.add_publication(*channel)
        pending = asyncio.ensure_future(pub.offer(b"never", timeout=None))
        ticker = Ticker()
        for _ in range(1000):
            await asyncio.sleep(0.001)
            if ticker.ticks >= 5:
                break
        assert pending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await pending
        sub = await aeron.add_subscription(*channel, with_header=False)
        await sub.wait_connected(DEADLINE)
        await pub.offer(b"after", timeout=DEADLINE)
        assert (await asyncio.wait_for(sub.receive(), DEADLINE)).data == b"after"  # not "never"
        ticker.task.cancel()


async def test_close_while_offer_waits_raises_closed(driver: object, channel: tuple[str, int]) -> None:
    async with aio.Aeron(driver=driver) as aeron:
        pub = await aeron.add_publication(*channel)
        pending = asyncio.ensure_future(pub.offer(b"x", timeout=DEADLINE))
        for _ in range(3):
            await asyncio.sleep(0)
        assert not pending.done()
        pub.close()
        with pytest.raises(PublicationClosedError, match="CLOSED"):
            await asyncio.wait_for(pending, DEADLINE)
        with pytest.raises(PublicationClosedError):
            await pub.offer(b"y")


async def test_image_events_as_awaitables_and_async_iterator(driver: object, channel: tuple[str, int]) -> None:
    async with aio.Aeron(driver=driver) as aeron:
        sub = await aeron.add_subscription(*channel)
        pub = await aeron.add_publication(*channel)
        event = await asyncio.wait_for(sub.image_events.next(), DEADLINE)
        assert event.available and event.image.session_id == pub.session_id
        assert event.image.source_address is not None and event.image.source_address[0] == "127.0.0.1"
        pub.close()  # end of stream: the image goes away
        gone = await asyncio.wait_for(anext(aiter(sub.image_events)), DEADLINE)
        assert not gone.available and gone.image.session_id == pub.session_id
        waiting = asyncio.ensure_future(sub.image_events.next())
        await asyncio.sleep(0)
        sub.close()
        with pytest.raises(aio.SubscriptionClosedError):
            await asyncio.wait_for(waiting, DEADLINE)
        assert [e async for e in sub.image_events] == []  # the iterator ends once closed


async def test_adds_fail_with_the_drivers_message(driver: object) -> None:
    async with aio.Aeron(driver=driver) as aeron:
        with pytest.raises(Exception, match="endpoint|control|invalid|URI|uri"):
            await aeron.add_subscription("aeron:udp?endpoint=not-a-host:notaport", 1)
        with pytest.raises(ValueError, match="fragment_limit"):
            await aeron.add_subscription("aeron:ipc", 1, fragment_limit=0)


async def test_mdc_destinations_are_added_and_removed_by_id(driver: object) -> None:
    from conftest import free_udp_port  # a free loopback UDP port

    ports = (free_udp_port(), free_udp_port())
    async with aio.Aeron(driver=driver) as aeron:
        subs = [await aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{p}", 3999, with_header=False)
                for p in ports]
        pub = await aeron.add_exclusive_publication("aeron:udp?control-mode=manual", 3999)
        ids = [await pub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{p}") for p in ports]
        assert len(set(ids)) == 2
        await pub.wait_connected(DEADLINE)
        await pub.remove_destination_by_id(ids[0])
        await pub.offer(b"to the second only", timeout=DEADLINE)
        assert (await asyncio.wait_for(subs[1].receive(), DEADLINE)).data == b"to the second only"
        with pytest.raises(TypeError, match="needs an exclusive publication"):
            shared = await aeron.add_publication("aeron:udp?control-mode=manual", 3998)
            await shared.remove_destination_by_id(ids[1])
