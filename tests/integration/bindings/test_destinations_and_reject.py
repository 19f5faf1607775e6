"""Multi-destination subscriptions, image rejection, and the GIL while idling."""
from __future__ import annotations

import threading

import pytest

import aeron_py
from conftest import free_udp_port, wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


def test_mds_subscription_receives_from_added_destinations(aeron):
    a, b = free_udp_port(), free_udp_port()
    sub = aeron.add_subscription("aeron:udp?control-mode=manual", 30)
    sub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{a}")
    pub_a = aeron.add_publication(f"aeron:udp?endpoint=127.0.0.1:{a}", 30)
    wait_until(lambda: pub_a.is_connected, 10, "publication to the first MDS destination")
    pub_a.offer_until(b"via a", timeout=5)
    got: list[bytes] = []
    wait_until(lambda: sub.poll(lambda d, h: got.append(d), 10) or got, 5, "message via a")
    sub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{b}")
    sub.remove_destination(f"aeron:udp?endpoint=127.0.0.1:{a}")
    assert got == [b"via a"]


def test_an_mdc_destination_is_removed_by_the_id_its_add_returned(aeron):
    a, b = free_udp_port(), free_udp_port()
    pub = aeron.add_exclusive_publication("aeron:udp?control-mode=manual", 33)
    sub_a = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{a}", 33)
    sub_b = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{b}", 33)
    id_a = pub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{a}")
    id_b = pub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{b}")
    assert isinstance(id_a, int) and id_a != id_b
    wait_until(lambda: sub_a.is_connected and sub_b.is_connected, 10, "both destinations")
    pub.remove_destination_by_id(id_a)
    wait_until(lambda: not sub_a.is_connected, 15, "the removed destination's image to go")
    assert sub_b.is_connected
    pub.remove_destination_by_id(id_a)  # already gone: the driver acknowledges, nothing else changes
    assert sub_b.is_connected
    assert pub.offer_until(b"still sending", timeout=5) > 0
    got: list[bytes] = []
    wait_until(lambda: sub_b.poll(lambda d, h: got.append(d), 10) or got, 5, "the message via b")
    assert got == [b"still sending"]


def test_rejected_image_goes_away(aeron, udp_port):
    gone: list[aeron_py.Image] = []
    channel = f"aeron:udp?endpoint=127.0.0.1:{udp_port}"
    sub = aeron.add_subscription(channel, 31, on_unavailable_image=gone.append)
    pub = aeron.add_publication(channel, 31)
    wait_until(lambda: pub.is_connected and sub.image_count == 1, 10, "connect")
    with sub.image_by_session_id(pub.session_id) as image:
        image.reject("not welcome here")
    wait_until(lambda: gone, 15, "the rejected image to become unavailable")
    assert gone[0].session_id == pub.session_id
    with aeron.add_subscription(channel, 99) as other:  # unrelated streams keep working
        assert other.stream_id == 99


def test_image_by_unknown_session_is_none(aeron):
    sub = aeron.add_subscription("aeron:ipc", 32)
    assert sub.image_by_session_id(123456) is None
    assert sub.images() == []


def test_idle_strategies_release_the_gil():
    progress = 0
    during_idle: list[int] = []
    done = threading.Event()

    def count() -> None:
        nonlocal progress
        while not done.is_set():
            progress += 1

    def idle() -> None:
        start = progress
        aeron_py.SleepingIdleStrategy(300_000_000).idle(0)  # 300 ms inside C
        during_idle.append(progress - start)

    counter = threading.Thread(target=count)
    idler = threading.Thread(target=idle)
    counter.start()
    idler.start()
    idler.join(timeout=5)
    done.set()
    counter.join(timeout=5)
    assert not idler.is_alive() and during_idle
    # Had the idle held the GIL, the counting thread could not have run during those 300 ms.
    assert during_idle[0] > 10_000
