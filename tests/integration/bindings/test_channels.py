"""Channel features through the real driver: MDC (dynamic, manual), session-id filters,
image handlers, bad URIs."""
from __future__ import annotations

import re

import pytest

import aeron_py
from aeron_py import ChannelUri
from conftest import free_udp_port, wait_until

pytestmark = [pytest.mark.timeout(30), pytest.mark.integration]


def drain(sub, into: list[bytes]) -> int:
    return sub.poll(lambda d, h: into.append(d), 10)


def test_mdc_dynamic_one_publication_two_subscribers(aeron):
    control = free_udp_port()
    pub = aeron.add_publication(ChannelUri.udp(control=("127.0.0.1", control), control_mode="dynamic"), 5)
    subs = [aeron.add_subscription(
        ChannelUri.udp(("127.0.0.1", free_udp_port()), control=("127.0.0.1", control), control_mode="dynamic"), 5)
        for _ in range(2)]
    wait_until(lambda: all(s.is_connected for s in subs), 10, "both MDC subscribers to connect")
    pub.offer_until(b"to everyone", timeout=5)
    for sub in subs:
        got: list[bytes] = []
        wait_until(lambda: drain(sub, got) or got, 5, "MDC message")
        assert got == [b"to everyone"]


def test_mdc_manual_destinations(aeron):
    ports = [free_udp_port(), free_udp_port()]
    subs = [aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{p}", 6) for p in ports]
    pub = aeron.add_exclusive_publication("aeron:udp?control-mode=manual", 6)
    for p in ports:
        pub.add_destination(f"aeron:udp?endpoint=127.0.0.1:{p}")
    wait_until(lambda: all(s.is_connected for s in subs), 10, "manual MDC destinations")
    pub.offer_until(b"manual", timeout=5)
    for sub in subs:
        got: list[bytes] = []
        wait_until(lambda: drain(sub, got) or got, 5, "manual MDC message")
        assert got == [b"manual"]
    pub.remove_destination(f"aeron:udp?endpoint=127.0.0.1:{ports[1]}")


def test_session_id_subscription_receives_only_that_session(aeron, udp_port):
    endpoint = f"127.0.0.1:{udp_port}"
    only_x = aeron.add_subscription(f"aeron:udp?endpoint={endpoint}|session-id=4242", 9)
    every = aeron.add_subscription(f"aeron:udp?endpoint={endpoint}", 9)
    pub_x = aeron.add_exclusive_publication(f"aeron:udp?endpoint={endpoint}|session-id=4242", 9)
    pub_y = aeron.add_exclusive_publication(f"aeron:udp?endpoint={endpoint}|session-id=5353", 9)
    wait_until(lambda: pub_x.is_connected and pub_y.is_connected, 10, "both sessions to connect")
    assert pub_x.session_id == 4242 and pub_y.session_id == 5353
    pub_x.offer_until(b"from x", timeout=5)
    pub_y.offer_until(b"from y", timeout=5)
    everything: list[bytes] = []
    wait_until(lambda: drain(every, everything) >= 0 and len(everything) >= 2, 5, "both on the open subscription")
    got: list[tuple[bytes, int]] = []
    wait_until(lambda: only_x.poll(lambda d, h: got.append((d, h.session_id)), 10) or got, 5, "x")
    assert drain(only_x, []) == 0
    assert got == [(b"from x", 4242)]
    assert sorted(everything) == [b"from x", b"from y"]


def test_image_handlers_fire_with_source_identity(aeron, udp_port):
    available: list[aeron_py.Image] = []
    unavailable: list[aeron_py.Image] = []
    channel = f"aeron:udp?endpoint=127.0.0.1:{udp_port}"
    sub = aeron.add_subscription(channel, 11, on_available_image=available.append,
                                 on_unavailable_image=unavailable.append)
    pub = aeron.add_publication(channel, 11)
    wait_until(lambda: available, 10, "on_available_image")
    image = available[0]
    assert image.session_id == pub.session_id
    assert re.fullmatch(r"127\.0\.0\.1:\d+", image.source_identity)
    assert not image.is_live  # a snapshot: live access goes through the subscription
    with pytest.raises(aeron_py.AeronError, match="snapshot"):
        image.position
    pub.close()
    wait_until(lambda: unavailable, 15, "on_unavailable_image")
    assert unavailable[0].correlation_id == image.correlation_id
    sub.close()


def test_bad_uri_raises_aeron_error_with_driver_text(aeron):
    with pytest.raises(aeron_py.AeronError) as caught:
        aeron.add_publication("aeron:bogus?endpoint=127.0.0.1:1", 1)
    assert "invalid URI scheme or transport" in str(caught.value)
    assert "aeron:bogus" in str(caught.value)
    with pytest.raises(aeron_py.AeronError, match="unknown host"):
        aeron.add_subscription("aeron:udp?endpoint=no-such-host.invalid:4000", 1)


def test_empty_channel_is_a_value_error(aeron):
    with pytest.raises(ValueError, match="channel must not be empty"):
        aeron.add_publication("", 1)


def test_error_summary_keeps_the_drivers_cause(aeron):
    """An error the driver reports reads "generic error, see message" on its first line:
    error_summary names the call and the real cause (what the echo clients log)."""
    import socket

    from aeron_py.errors import aeron_cause, error_summary

    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        port = taken.getsockname()[1]
        with pytest.raises(aeron_py.AeronError) as caught:
            aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", 1)
    assert "generic error" in str(caught.value).splitlines()[0]
    assert aeron_cause(caught.value) == "(98) Address already in use"
    assert error_summary(caught.value) == "aeron_async_add_poll: (98) Address already in use"
    plain = aeron_py.AeronError("aeron_publication_offer: (-1) not connected")
    assert error_summary(plain) == aeron_cause(plain) == "aeron_publication_offer: (-1) not connected"
    assert error_summary(aeron_py.AeronError("")) == "AeronError"


def test_a_subscription_on_port_0_says_which_port_it_bound(driver, aeron) -> None:
    sub = aeron.add_subscription("aeron:udp?endpoint=127.0.0.1:0", 61)
    wait_until(lambda: sub.resolved_channel() is not None, 5, "the endpoint bound")
    [address] = sub.local_sockaddrs()
    host, port = address.rsplit(":", 1)
    assert host == "127.0.0.1" and int(port) > 0
    assert sub.resolved_channel() == f"aeron:udp?endpoint=127.0.0.1:{port}" and sub.resolved_endpoint() == address
    pub = aeron.add_publication(sub.resolved_channel(), 61)  # the resolved channel is usable as is
    wait_until(lambda: pub.is_connected, 5, "a publication to the resolved port")
    ipc = aeron.add_subscription("aeron:ipc", 61)
    assert ipc.local_sockaddrs() == [] and ipc.resolved_channel() == "aeron:ipc"
    sub.close()
    with pytest.raises(aeron_py.AeronError):
        sub.local_sockaddrs()


def test_re_adding_a_channel_whose_endpoint_is_still_closing_succeeds(driver, aeron) -> None:
    """A publication added right after the last one on its channel closed can find the send
    endpoint still CLOSING (RetryLaterError, "please retry"): Aeron.add_* adds again until its
    timeout. (test_errors_typed.py provokes the RetryLaterError itself, deterministically.)"""
    channel = "aeron:udp?control=127.0.0.2:0|control-mode=manual"
    for _ in range(50):
        pub = aeron.add_exclusive_publication(channel, 62, timeout=5)
        pub.close()
