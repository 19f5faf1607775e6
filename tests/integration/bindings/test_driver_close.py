"""MediaDriver.close() is bounded (issue 22, part 5).

aeron_driver_close joins the driver's agent thread, which ends only at the end of its
current duty cycle or idle: a driver whose shared agent sleeps 4 s per idle (Aeron's
``sleep-ns`` idle strategy) makes an unbounded close wait up to 4 s, the way a driver
stuck in a long duty cycle would make it wait for as long as that lasts.  A bounded close
returns at its timeout, logs it, and the close finishes on its own thread.
"""
from __future__ import annotations

import logging
import os
import time

import pytest

from aeron_py import Aeron, MediaDriver
from conftest import wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

SLEEP_S = 4.0


def sleepy_driver() -> MediaDriver:
    """A SHARED driver whose agent sleeps SLEEP_S between duty cycles that found no work."""
    return MediaDriver(idle_strategy="sleep-ns", shared_idle_strategy_init_args=f"{int(SLEEP_S * 1000)}ms")


def started_sleeping(driver: MediaDriver) -> None:
    """Wait until the agent has done its start-up work and is asleep (a client connected)."""
    with Aeron(driver=driver, timeout=3 * SLEEP_S + 5):
        pass
    time.sleep(0.2)  # not synchronisation: only makes the sleep being measured a long one


def test_an_unbounded_close_waits_for_the_agent_to_wake() -> None:
    driver = sleepy_driver()
    started_sleeping(driver)
    started = time.monotonic()
    assert driver.close(timeout=None) is True
    assert time.monotonic() - started > 0.5  # it waited for the sleeping agent
    assert driver.is_stopped and not os.path.exists(driver.dir)


def test_a_bounded_close_returns_at_its_timeout_and_finishes_in_the_background(
        caplog: pytest.LogCaptureFixture) -> None:
    driver = sleepy_driver()
    started_sleeping(driver)
    started = time.monotonic()
    with caplog.at_level(logging.ERROR, logger="aeron_py.driver"):
        assert driver.close(timeout=0.2) is False
    assert time.monotonic() - started < SLEEP_S / 2
    assert driver.is_closed and not driver.is_stopped
    assert "did not end its duty cycle or idle within 0.2 s" in caplog.text and driver.dir in caplog.text
    assert driver.close() is False or driver.is_stopped  # idempotent: says how far it got
    wait_until(lambda: driver.is_stopped, 3 * SLEEP_S, "the background close to finish")
    assert driver.close() is True and not os.path.exists(driver.dir)


def test_a_quick_driver_closes_within_the_default_bound() -> None:
    with MediaDriver() as driver:
        pass
    assert driver.is_stopped and driver.close() is True


@pytest.mark.parametrize("timeout", [-1, float("nan"), float("inf"), True, "1"])
def test_a_bad_timeout_is_refused_and_the_driver_stays_open(timeout: object) -> None:
    with MediaDriver() as driver:
        with pytest.raises(ValueError, match="timeout must be None or a number of seconds"):
            driver.close(timeout=timeout)  # type: ignore[arg-type]
        assert not driver.is_closed and not driver.is_stopped


def test_the_native_close_takes_odd_timeouts_without_harm() -> None:
    for timeout in (float("nan"), float("inf"), -5.0, 1e300):
        driver = MediaDriver()
        native = driver._driver  # noqa: SLF001 - the binding itself, reachable from Python
        assert native is not None
        assert native.close(timeout) is True and native.is_stopped
        assert native.close(timeout) is True  # idempotent
        driver._driver = None  # noqa: SLF001 - closed underneath: the wrapper must not close again
