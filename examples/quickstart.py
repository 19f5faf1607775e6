"""A runnable tour of aeron_py: driver, client, IPC and UDP streams, claims, big messages, stats.

Run it from anywhere (it needs only ``aeron_py`` installed)::

    python examples/quickstart.py

Every step prints what it does; every wait has a deadline, so the tour either finishes
(exit status 0) or stops with an error that names the step that did not complete.
Nothing leaves the machine: UDP goes over 127.0.0.1 on a port the OS picks.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable

import aeron_py
from aeron_py import (
    Aeron,
    BackoffIdleStrategy,
    ChannelUri,
    Image,
    MediaDriver,
    OfferError,
    Publication,
    Subscription,
)

STREAM_ID = 1001
#: How long any single step may wait before the tour gives up.
STEP_TIMEOUT = 5.0
BIG_MESSAGE_LENGTH = 100 * 1024


def step(title: str) -> None:
    """Print a step heading."""
    print(f"\n== {title}", flush=True)


def say(text: str) -> None:
    print(f"   {text}", flush=True)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = STEP_TIMEOUT) -> None:
    """Idle (without spinning) until ``condition()`` is true, or raise TimeoutError naming ``what``."""
    idle = BackoffIdleStrategy()
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() >= deadline:
            raise TimeoutError(f"gave up after {timeout} s waiting for {what}")
        idle.idle(0)


def receive(sub: Subscription, count: int) -> list[bytes]:
    """Poll ``sub`` with a BackoffIdleStrategy until ``count`` messages arrived (bounded)."""
    received: list[bytes] = []
    idle = BackoffIdleStrategy()  # spin a little, yield, then park up to 1 ms: kind to 2 cores
    deadline = time.monotonic() + STEP_TIMEOUT
    while len(received) < count:
        if time.monotonic() >= deadline:
            raise TimeoutError(f"only {len(received)} of {count} messages arrived on {sub.channel}")
        # The handler gets a *copy* of the payload (safe to keep) and a copy of the header.
        fragments = sub.poll(lambda data, header: received.append(data), 10)
        idle.idle(fragments)  # work done resets the back-off; none makes it back off further
    return received


def claim_and_write(pub: Publication, payload: bytes) -> int:
    """Write ``payload`` in place with try_claim, retrying the retryable refusals (bounded)."""
    idle = BackoffIdleStrategy()
    deadline = time.monotonic() + STEP_TIMEOUT
    while True:
        try:
            claim = pub.try_claim(len(payload))
        except OfferError as error:
            if not error.retryable or time.monotonic() >= deadline:
                raise
            idle.idle(0)
            continue
        # Inside the block, buf is a writable view straight into the log buffer:
        # a clean exit commits the message, an exception aborts it.
        with claim as buf:
            buf[:] = payload
        return claim.position


def tour_ipc(aeron: Aeron) -> None:
    step("IPC: a publication and a subscription on aeron:ipc (shared memory, no sockets)")
    sub = aeron.add_subscription("aeron:ipc", STREAM_ID)
    pub = aeron.add_publication("aeron:ipc", STREAM_ID)
    wait_for(lambda: pub.is_connected, "the IPC publication to see its subscriber")
    say(f"publication session {pub.session_id}, connected={pub.is_connected}")

    # offer() never blocks: it returns the new position, or NOT_CONNECTED / BACK_PRESSURED /
    # ADMIN_ACTION (negative ints) for the caller to retry. offer_until() does the retrying.
    result = pub.offer(b"first, with offer()")
    if result < 0:
        say(f"offer() said {result}; retrying with offer_until()")
        pub.offer_until(b"first, with offer()", timeout=STEP_TIMEOUT)
    pub.offer_until(b"second, with offer_until()", timeout=STEP_TIMEOUT)
    for message in receive(sub, 2):
        say(f"received {message!r}")

    position = claim_and_write(pub, b"third, written in place by try_claim()")
    say(f"try_claim committed at position {position}; received {receive(sub, 1)[0]!r}")
    pub.close()
    sub.close()


def tour_udp(aeron: Aeron) -> None:
    step("UDP on loopback: image callbacks, offer_until, a 100 KiB reassembled message")
    events: list[str] = []

    # Image callbacks run on the client's conductor thread: keep them tiny (no client calls).
    def on_available(image: Image) -> None:
        events.append(f"available: session {image.session_id} from {image.source_identity}")

    def on_unavailable(image: Image) -> None:
        events.append(f"unavailable: session {image.session_id}")

    # Port 0 lets the OS choose; resolved_endpoint() tells us which port it chose.
    sub = aeron.add_subscription(ChannelUri.udp(("127.0.0.1", 0)), STREAM_ID,
                                 on_available_image=on_available, on_unavailable_image=on_unavailable)
    wait_for(lambda: bool(sub.resolved_endpoint()), "the subscription to bind a port")
    endpoint = sub.resolved_endpoint()
    channel = ChannelUri.udp(endpoint, reliable=True)
    say(f"subscription bound to {endpoint}; publishing on {channel}")
    pub = aeron.add_publication(channel, STREAM_ID)

    wait_for(lambda: pub.is_connected and bool(events), "the UDP image to become available")
    say(events[0])

    pub.offer_until(b"hello over UDP", timeout=STEP_TIMEOUT)
    say(f"received {receive(sub, 1)[0]!r}")

    big = bytes(i % 251 for i in range(BIG_MESSAGE_LENGTH))
    say(f"one frame carries at most {pub.max_payload_length} bytes; "
        f"one message at most {pub.max_message_length} bytes")
    pub.offer_until(big, timeout=STEP_TIMEOUT)
    [reassembled] = receive(sub, 1)
    if reassembled != big:
        raise AssertionError("the 100 KiB message came back different")
    frames = -(-len(big) // pub.max_payload_length)
    say(f"sent {len(big)} bytes as ~{frames} fragments; poll() handed back one "
        f"{len(reassembled)}-byte message, identical")

    pub.close()  # the subscriber sees the stream end and the image goes away
    wait_for(lambda: len(events) >= 2, "the image to become unavailable after the publication closed")
    say(events[1])
    sub.close()


def tour_stats(driver: MediaDriver) -> None:
    step("DriverStat: the driver's counters, read from its CnC file (what AeronStat shows)")
    with driver.stat() as stat:
        system = stat.system_counters()
        for label in ("Bytes sent", "Bytes received", "NAKs sent", "Errors"):
            if label in system:
                say(f"{label:>15}: {system[label]}")
        say(f"{len(stat.counters())} counters in all; driver heartbeat {stat.heartbeat_age():.3f} s ago")


def main() -> int:
    step(f"aeron_py {aeron_py.__version__} over Aeron {aeron_py.aeron_version()}")
    # An embedded C media driver in a fresh /dev/shm directory (deleted on close), then a
    # client connected to it. Both are context managers: leaving the block closes them.
    # 1 MiB terms keep shared memory small yet allow messages up to 128 KiB (term / 8);
    # linger 0 lets a closed publication go away at once.
    with MediaDriver(term_buffer_length=1 << 20, ipc_term_buffer_length=1 << 20,
                     publication_linger_timeout_ns=0) as driver, Aeron(driver=driver) as aeron:
        say(f"media driver in {driver.dir}, client id {aeron.client_id}")
        tour_ipc(aeron)
        tour_udp(aeron)
        tour_stats(driver)
    step("done: client and driver closed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
