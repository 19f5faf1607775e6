"""Keepalive thinning (cpp/plugins/keepalive_thinning/keepalive_thinning.h,
``MediaDriver(keepalive_interval_ns=...)``).

An idle Aeron stream sends a heartbeat every 100 ms and a status message every 200 ms;
with thinning only one of each per interval reaches the socket, except those that say
something new (the first heartbeat after data, a status message after consumption, end
of stream). The driver's own counters tell what happened: "Heartbeats sent" and "Status
Messages sent" count every one made, the CnC counter "aeron_py keepalives thinned" those
kept off the wire, the "... received" counters (same driver, loopback) those that arrived.
"""
from __future__ import annotations

import os

import pytest

from aeron_py import Aeron, MediaDriver
from aeron_py._aeron import DriverContext
from conftest import free_udp_port, wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

STREAM = 1820
SECOND = 1_000_000_000


def keepalives(driver: MediaDriver) -> tuple[int, int, int]:
    """(sent, thinned, received): heartbeats and status messages together"""
    with driver.stat() as stat:
        counters = stat.counters()
        system = stat.system_counters()
    thinned = [c.value for c in counters if c.label == "aeron_py keepalives thinned"]
    return (system["Heartbeats sent"] + system["Status Messages sent"], (thinned[0] if thinned else -1),
            system["Heartbeats received"] + system["Status Messages received"])


def heartbeats_received(driver: MediaDriver) -> int:
    with driver.stat() as stat:
        return stat.system_counters()["Heartbeats received"]


def connected_pair(aeron: Aeron):
    channel = f"aeron:udp?endpoint=127.0.0.1:{free_udp_port()}"
    lost: list[int] = []
    sub = aeron.add_subscription(channel, STREAM, on_unavailable_image=lambda image: lost.append(image.session_id))
    pub = aeron.add_publication(channel, STREAM)
    wait_until(lambda: pub.is_connected and sub.image_count == 1, 10, "connected")
    return pub, sub, lost


def test_idle_keepalives_are_thinned_and_the_stream_stays_alive() -> None:
    # The image times out after 1.2 s without a packet, the publication after 1.2 s without
    # a status message: the thinned keepalives (one of each per 0.4 s) must keep both, over
    # more than three timeouts.
    with MediaDriver(keepalive_interval_ns=400_000_000, image_liveness_timeout_ns=1_200_000_000,
                     publication_connection_timeout_ns=1_200_000_000, publication_linger_timeout_ns=0) as driver, Aeron(driver=driver) as aeron:
        pub, sub, lost = connected_pair(aeron)
        sent0, thinned0, received0 = keepalives(driver)
        assert thinned0 >= 0, "the thinned counter is in the CnC file"
        wait_until(lambda: keepalives(driver)[1] - thinned0 >= 60, 30, "60 keepalives thinned")
        assert lost == [] and sub.image_count == 1 and pub.is_connected
        sent, thinned, received = keepalives(driver)
        # every keepalive made was either thinned or received (loopback loses none; some may be in flight)
        assert abs((sent - sent0) - (thinned - thinned0) - (received - received0)) <= 2
        assert 0 < received - received0 < thinned - thinned0


def test_without_the_option_nothing_is_thinned() -> None:
    with MediaDriver(publication_linger_timeout_ns=0) as driver, Aeron(driver=driver) as aeron:
        pub, sub, lost = connected_pair(aeron)
        sent0, thinned0, received0 = keepalives(driver)
        wait_until(lambda: keepalives(driver)[0] - sent0 >= 15, 20, "15 keepalives sent")
        sent, thinned, received = keepalives(driver)
        assert lost == [] and sub.image_count == 1 and pub.is_connected
        assert thinned0 == thinned == -1, "no counter without the option"
        assert received - received0 >= sent - sent0 - 2


def test_the_first_heartbeat_after_data_goes_out_at_once() -> None:
    # With a 2 s interval, a heartbeat arriving within 1 s of the one before can only be
    # the one carrying the new position after the offer.
    with MediaDriver(keepalive_interval_ns=2 * SECOND, publication_linger_timeout_ns=0) as driver, \
            Aeron(driver=driver) as aeron:
        pub, sub, _ = connected_pair(aeron)
        wait_until(lambda: keepalives(driver)[1] >= 3, 20, "thinning under way")
        received = heartbeats_received(driver)
        wait_until(lambda: heartbeats_received(driver) > received, 20, "a heartbeat after the interval")
        received = heartbeats_received(driver)
        got: list[bytes] = []
        wait_until(lambda: pub.offer(b"tail") > 0, 5, "offer")
        wait_until(lambda: sub.poll(lambda buf, header: got.append(bytes(buf)), 10) >= 0 and got, 5, "the message")
        wait_until(lambda: heartbeats_received(driver) > received, 1, "the heartbeat with the new position")


def test_end_of_stream_is_never_thinned() -> None:
    # The end-of-stream heartbeat carries the same position as the idle ones before it:
    # thinned, the image would only learn of the end at its 2 s interval.
    with MediaDriver(keepalive_interval_ns=2 * SECOND, publication_linger_timeout_ns=0) as driver, \
            Aeron(driver=driver) as aeron:
        pub, sub, lost = connected_pair(aeron)
        wait_until(lambda: keepalives(driver)[1] >= 3, 20, "thinning under way")
        image = sub.images()[0]
        received = heartbeats_received(driver)
        wait_until(lambda: heartbeats_received(driver) > received, 20, "a heartbeat after the interval")
        pub.close()
        wait_until(lambda: image.is_end_of_stream, 1, "the image's end of stream")
        wait_until(lambda: lost, 10, "the image to go")


@pytest.mark.parametrize("value", [0, 99_999_999, 2 * SECOND + 1, True, 1.5])
def test_bad_intervals_are_refused(value: object) -> None:
    with pytest.raises(ValueError, match="keepalive_interval_ns"):
        MediaDriver(keepalive_interval_ns=value)


def test_context_setting_is_checked_and_readable() -> None:
    context = DriverContext()
    assert context.get_keepalive_interval_ns() == 0
    with pytest.raises(ValueError, match="> 0"):
        context.set_keepalive_interval_ns(0)
    context.set_keepalive_interval_ns(SECOND)
    context.set_keepalive_interval_ns(2 * SECOND)
    assert context.get_keepalive_interval_ns() == 2 * SECOND
    for bad in ((-1, 10), (10, 65536), (20, 10)):
        with pytest.raises(ValueError, match="keepalive_ports"):
            context.set_keepalive_ports(bad)
    context.set_keepalive_ports((9000, 9100))


def test_only_channels_bound_to_the_given_ports_are_thinned() -> None:
    # The subscription binds the port (its status messages may be thinned); the
    # publication sends from an ephemeral port outside the range: every heartbeat arrives.
    port = free_udp_port()
    with MediaDriver(keepalive_interval_ns=400_000_000, keepalive_ports=(port, port),
                     publication_linger_timeout_ns=0) as driver, Aeron(driver=driver) as aeron:
        channel = f"aeron:udp?endpoint=127.0.0.1:{port}"
        sub = aeron.add_subscription(channel, STREAM)
        pub = aeron.add_publication(channel, STREAM)
        wait_until(lambda: pub.is_connected and sub.image_count == 1, 10, "connected")
        with driver.stat() as stat:
            before = stat.system_counters()
        thinned0 = keepalives(driver)[1]
        wait_until(lambda: keepalives(driver)[1] - thinned0 >= 8, 20, "8 status messages thinned")
        with driver.stat() as stat:
            after = stat.system_counters()
        sent = after["Heartbeats sent"] - before["Heartbeats sent"]
        received = after["Heartbeats received"] - before["Heartbeats received"]
        assert sent >= 10 and abs(sent - received) <= 2
        assert after["Status Messages received"] - before["Status Messages received"] < 8


def test_a_running_drivers_context_refuses_changes_and_a_closed_one_refuses_reads() -> None:
    from aeron_py import _aeron

    context = DriverContext()
    context.set_dir(f"/dev/shm/aeron-py-test-keepalive-{os.getpid()}")
    context.set_dir_delete_on_start(True)
    context.set_dir_delete_on_shutdown(True)
    context.set_threading_mode(_aeron.THREADING_MODE_SHARED)
    context.set_keepalive_interval_ns(SECOND)
    driver = _aeron.Driver(context)
    try:
        with pytest.raises(Exception, match="belongs to a driver"):
            context.set_keepalive_ports((1, 2))
        with pytest.raises(Exception, match="belongs to a driver"):
            context.set_keepalive_interval_ns(SECOND)
        assert context.get_keepalive_interval_ns() == SECOND  # readable while its driver runs
    finally:
        driver.close()
    with pytest.raises(Exception, match="closed with its driver"):
        context.get_keepalive_interval_ns()
