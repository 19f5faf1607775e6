"""Untethered subscriptions (``tether=false``) and the driver's untethered timeouts, on a real driver:
a subscriber that falls a window behind is let go instead of holding the publication back."""
from __future__ import annotations

import time

import pytest

from aeron_py import Aeron, BackoffIdleStrategy, MediaDriver
from aeron_py.publication import BACK_PRESSURED
from conftest import wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

TIMEOUTS = dict(untethered_window_limit_timeout_ns=200_000_000, untethered_resting_timeout_ns=200_000_000,
                ipc_term_buffer_length=65536, timer_interval_ns=10_000_000)
#: Five times both untethered timeouts: what the slow subscriber is given to be let go.
OBSERVE_S = 2.0


@pytest.mark.parametrize("tether", [False, True])
def test_a_slow_subscriber_is_let_go_only_when_untethered(tether: bool) -> None:
    gone: list[int] = []
    with MediaDriver(**TIMEOUTS) as driver, Aeron(driver=driver) as aeron:
        fast = aeron.add_subscription("aeron:ipc", 91)
        slow = aeron.add_subscription(f"aeron:ipc?tether={str(tether).lower()}", 91,
                                      on_unavailable_image=lambda image: gone.append(image.session_id))
        pub = aeron.add_publication("aeron:ipc", 91)
        wait_until(lambda: pub.is_connected and slow.image_count == 1, 5, "connect")
        offered = back_pressured = 0
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)
        deadline = time.monotonic() + OBSERVE_S
        while time.monotonic() < deadline and offered < 200:  # only `fast` is ever read
            result = pub.offer(b"x" * 1000)
            offered += result > 0
            back_pressured += result == BACK_PRESSURED
            read = fast.poll(lambda data, header: None, 100)
            aeron.poll_events()
            idle.idle(read + (result > 0))
        if tether:  # the slow tethered subscriber holds the window (32 KiB): nothing lets it go
            assert not gone and offered < 70 and back_pressured > 0 and slow.image_count == 1
        else:  # let go after the window limit, and the publication went on past several windows
            assert gone == [pub.session_id] and slow.image_count == 0 and offered >= 200
