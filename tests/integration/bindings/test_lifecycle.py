"""Driver and client lifecycle: defaults, invoker mode, closed driver detection, idempotent close."""
from __future__ import annotations

import os

import pytest

import aeron_py
from aeron_py import Aeron, MediaDriver, ThreadingMode
from conftest import wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


def test_default_driver_dir_is_unique_and_removed_on_close():
    with MediaDriver() as a, MediaDriver() as b:
        assert a.dir != b.dir and a.dir.startswith("/dev/shm/")
        assert os.path.isdir(a.dir)
        assert a.threading_mode is ThreadingMode.SHARED
    assert not os.path.exists(a.dir) and not os.path.exists(b.dir)
    a.close()  # idempotent


def test_unknown_driver_option_is_a_clear_type_error():
    with pytest.raises(TypeError, match="unknown option.*term_length_typo"):
        MediaDriver(term_length_typo=1)


def test_missing_parent_directory_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        MediaDriver(tmp_path / "missing" / "aeron")


def test_client_without_driver_fails_within_timeout(tmp_path):
    with pytest.raises(aeron_py.AeronError, match="cannot connect to a media driver"):
        Aeron(dir=str(tmp_path / "nothing-here"), timeout=0.5)


def test_invoker_driver_and_invoker_client_in_one_thread():
    with MediaDriver(threading_mode="INVOKER") as driver:
        with Aeron(driver=driver, use_conductor_agent_invoker=True, timeout=5) as aeron:
            # The add waits call aeron.do_work(); the driver needs its own duty cycle too,
            # so run both from this thread.
            pending_sub = aeron.async_add_subscription("aeron:ipc", 12)
            sub = wait_until(lambda: driver.do_work() >= 0 and aeron.do_work() >= 0 and pending_sub.poll(), 5,
                             "subscription via invokers")
            pending_pub = aeron.async_add_publication("aeron:ipc", 12)
            pub = wait_until(lambda: driver.do_work() >= 0 and aeron.do_work() >= 0 and pending_pub.poll(), 5,
                             "publication via invokers")
            wait_until(lambda: driver.do_work() >= 0 and aeron.do_work() >= 0 and pub.offer(b"invoked") > 0, 5,
                       "offer")
            got: list[bytes] = []
            wait_until(lambda: driver.do_work() >= 0 and sub.poll(lambda d, h: got.append(d), 10) and got, 5,
                       "poll")
            assert got == [b"invoked"]


def test_do_work_without_invoker_is_an_error(aeron):
    with pytest.raises(aeron_py.AeronError, match="use_conductor_agent_invoker"):
        aeron.do_work()


def test_client_detects_a_closed_driver():
    errors: list[tuple[int, str]] = []
    driver = MediaDriver(client_liveness_timeout_ns=2_000_000_000)
    client = Aeron(driver=driver, timeout=1.0, error_handler=lambda code, msg: errors.append((code, msg)))
    pub = client.add_publication("aeron:ipc", 13)
    driver.close()
    wait_until(lambda: errors, 10, "the error handler to report the dead driver")
    assert any("driver" in msg.lower() for _, msg in errors), errors
    wait_until(lambda: client.is_closed, 10, "the client to close itself")
    with pytest.raises(aeron_py.ClientClosedError):
        client.add_subscription("aeron:ipc", 13)
    with pytest.raises(aeron_py.PublicationClosedError):
        pub.offer(b"after the driver died")
    client.close()
    client.close()


def test_client_close_invalidates_handles(driver):
    client = Aeron(driver=driver)
    sub = client.add_subscription("aeron:ipc", 14)
    pub = client.add_publication("aeron:ipc", 14)
    client.close()
    with pytest.raises(aeron_py.PublicationClosedError):
        pub.offer(b"x")
    with pytest.raises(aeron_py.AeronError, match="closed"):
        sub.poll(lambda d, h: None, 1)
    sub.close()
    pub.close()


def test_idle_strategies_validate_and_idle():
    for idle in (aeron_py.BackoffIdleStrategy(), aeron_py.SleepingIdleStrategy(1000),
                 aeron_py.YieldingIdleStrategy(), aeron_py.NoOpIdleStrategy(), aeron_py.BusySpinIdleStrategy()):
        idle.idle(0)
        idle.idle(1)
    with pytest.raises(ValueError):
        aeron_py.SleepingIdleStrategy(0)
    with pytest.raises(ValueError):
        aeron_py.BackoffIdleStrategy(min_park_ns=10, max_park_ns=1)


def test_is_driver_active(driver, tmp_path):
    from aeron_py import _aeron

    assert _aeron.is_driver_active(driver.dir, 1000)
    assert not _aeron.is_driver_active(str(tmp_path), 100)  # exists, but no CnC file
    assert not _aeron.is_driver_active(str(tmp_path / "missing"), 100)


def test_async_adds_never_block_and_report_driver_errors(aeron):
    pending = aeron.async_add_exclusive_publication("aeron:ipc", 15)
    pub = wait_until(pending.poll, 5, "the exclusive publication")
    assert isinstance(pub, aeron_py.ExclusivePublication) and pending.poll() is pub
    assert pending.registration_id == pub.registration_id
    bad = aeron.async_add_subscription("aeron:udp?endpoint=no-such-host.invalid:4000", 15)
    with pytest.raises(aeron_py.AeronError, match="unknown host"):
        wait_until(bad.poll, 5, "the driver's answer")
