"""The offer contract: retryable codes come back as ints, terminal ones raise typed errors."""
from __future__ import annotations

import pytest

import aeron_py
from conftest import wait_until

pytestmark = [pytest.mark.timeout(30), pytest.mark.integration]


def test_not_connected_before_any_subscriber(aeron, udp_port):
    pub = aeron.add_publication(f"aeron:udp?endpoint=127.0.0.1:{udp_port}", 3)
    assert pub.offer(b"nobody listens") == aeron_py.NOT_CONNECTED
    with pytest.raises(aeron_py.NotConnectedError) as caught:
        pub.try_claim(8)
    assert caught.value.retryable and caught.value.code == aeron_py.NOT_CONNECTED


def test_back_pressured_against_a_full_small_term(aeron):
    sub = aeron.add_subscription("aeron:ipc?term-length=64k", 4)
    pub = aeron.add_publication("aeron:ipc?term-length=64k", 4)
    wait_until(lambda: pub.is_connected, 5, "connect")
    payload = b"z" * 1024
    results = [pub.offer(payload) for _ in range(200)]  # 200 KiB into a 64 KiB window, nobody polls
    assert aeron_py.BACK_PRESSURED in results
    assert all(r > 0 or r in (aeron_py.BACK_PRESSURED, aeron_py.ADMIN_ACTION) for r in results)
    assert sub.poll(lambda d, h: None, 100) > 0  # draining relieves the pressure
    wait_until(lambda: pub.offer(payload) > 0, 5, "offer after drain")


def test_closed_publication_raises_typed_error(aeron):
    pub = aeron.add_publication("aeron:ipc", 5)
    pub.close()
    pub.close()  # idempotent
    with pytest.raises(aeron_py.PublicationClosedError) as caught:
        pub.offer(b"too late")
    assert caught.value.code == aeron_py.CLOSED and not caught.value.retryable
    with pytest.raises(aeron_py.PublicationClosedError):
        pub.try_claim(4)


def test_offer_until_times_out_naming_the_result(aeron, udp_port):
    pub = aeron.add_publication(f"aeron:udp?endpoint=127.0.0.1:{udp_port}", 6)
    with pytest.raises(aeron_py.AeronTimeoutError, match="NOT_CONNECTED"):
        pub.offer_until(b"x", timeout=0.2)


def test_offer_batch_offers_in_order_and_stops_at_back_pressure(aeron):
    sub = aeron.add_subscription("aeron:ipc?term-length=64k", 7)
    pub = aeron.add_publication("aeron:ipc?term-length=64k", 7)
    wait_until(lambda: pub.is_connected, 5, "connect")
    assert pub.offer_batch([b"a", bytearray(b"b"), memoryview(b"c")]) == 3
    got: list[bytes] = []
    wait_until(lambda: sub.poll(lambda d, h: got.append(d), 10) or len(got) >= 3, 5, "batch delivery")
    assert got == [b"a", b"b", b"c"]
    flood = [b"q" * 1024] * 200  # more than the 64 KiB window takes while nobody polls
    offered = pub.offer_batch(flood)
    assert 0 < offered < len(flood)


def test_offer_batch_on_closed_publication_raises(aeron):
    pub = aeron.add_publication("aeron:ipc", 8)
    pub.close()
    with pytest.raises(aeron_py.PublicationClosedError):
        pub.offer_batch([b"x"])
