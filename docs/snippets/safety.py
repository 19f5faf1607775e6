"""The safety contract in action: each misuse ends in a Python exception, never a crash."""
import time

from aeron_py import Aeron, BackoffIdleStrategy, MediaDriver


def poll_until(sub, handler, timeout: float = 5.0) -> None:
    """Poll until the handler got a message (bounded)."""
    idle, deadline = BackoffIdleStrategy(), time.monotonic() + timeout
    while sub.poll(handler, 1) == 0:
        if time.monotonic() > deadline:
            raise TimeoutError("no message within 5 s")
        idle.idle(0)


with MediaDriver() as driver, Aeron(driver=driver) as aeron:
    sub = aeron.add_subscription("aeron:ipc", 7)
    pub = aeron.add_publication("aeron:ipc", 7)

    # 1. A header is a view valid only during the handler; keep header.copy() instead.
    kept = []
    pub.offer_until(b"one", timeout=5)
    poll_until(sub, lambda data, header: kept.append((header, header.copy())))
    view, copy = kept[0]
    try:
        view.session_id
    except ValueError as error:
        print("header view after the handler:", type(error).__name__)
    print("header copy:", copy.session_id == pub.session_id)

    # 2. Polling a subscription from its own handler raises; the message is not lost.
    def reentrant(data, header):
        sub.poll(lambda *args: None, 1)

    pub.offer_until(b"two", timeout=5)
    try:
        poll_until(sub, reentrant)
    except RuntimeError as error:
        print("re-entrant poll:", type(error).__name__)

    # 3. A claim's memoryview dies with the claim.
    with pub.try_claim(5) as buffer:
        buffer[:] = b"three"
    try:
        buffer[0] = 0
    except ValueError as error:
        print("claim buffer after commit:", type(error).__name__)

    # 4. Closing the subscription inside its own handler is deferred until the poll returns.
    def closing(data, header):
        sub.close()
        print("closed inside the handler; is_closed =", sub.is_closed)

    pub.offer_until(b"four", timeout=5)
    poll_until(sub, closing)
print("the process is still alive")
