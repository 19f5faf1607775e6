"""The typed errors the extension raises, each provoked for real through a driver on loopback:
the class (chosen by the codes, never the text), ``errcode`` and ``cause_code``."""
from __future__ import annotations

import errno
import socket
from collections.abc import Callable, Iterator
from typing import TypeVar

import pytest

import aeron_py
from aeron_py import (AddressInUseError, Aeron, AeronError, DriverTimeoutError, MediaDriver, PendingAdd,
                      RetryLaterError)
from aeron_py.duologue.server.creation import is_driver_timeout

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

T = TypeVar("T")
GENERIC_ERROR, RESOURCE_TEMPORARILY_UNAVAILABLE, DRIVER_TIMEOUT = 11, 10, 1000  # Aeron's codes


@pytest.fixture
def taken_port() -> Iterator[int]:
    """A UDP port on 127.0.0.1 that a socket of this test holds."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as taken:
        taken.bind(("127.0.0.1", 0))
        yield taken.getsockname()[1]


def test_the_typed_errors_are_aeron_errors_exported_everywhere() -> None:
    for cls in (AddressInUseError, DriverTimeoutError, RetryLaterError):
        assert issubclass(cls, AeronError) and issubclass(cls, RuntimeError)
        assert cls is getattr(aeron_py.errors, cls.__name__) is getattr(aeron_py._aeron, cls.__name__)
        assert cls.__module__ == "aeron_py._aeron" and cls.__name__ in aeron_py.__all__
    made_in_python = AeronError("no C call")
    assert made_in_python.errcode is None and made_in_python.cause_code is None


def test_a_subscription_on_a_taken_port_is_address_in_use(aeron: Aeron, taken_port: int) -> None:
    """The driver's EADDRINUSE reaches the client as "generic error" (-11) with the driver's
    "(98) Address already in use" in the message: cause_code says 98, the class says so too."""
    with pytest.raises(AddressInUseError) as caught:
        aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{taken_port}", 1)
    exc = caught.value
    assert type(exc) is AddressInUseError and isinstance(exc, AeronError)
    assert exc.errcode == -GENERIC_ERROR and exc.cause_code == errno.EADDRINUSE
    assert "(98) Address already in use" in str(exc)  # the text is kept as it was


def test_a_publication_on_a_taken_control_port_is_address_in_use(aeron: Aeron, taken_port: int) -> None:
    """The Echo server's duologue publication (dynamic MDC control port), asked without
    blocking as the server does: the failed add's poll raises it."""
    pending = aeron.async_add_exclusive_publication(
        f"aeron:udp?control=127.0.0.1:{taken_port}|control-mode=dynamic", 2)
    with pytest.raises(AddressInUseError) as caught:
        _until_answered(pending, lambda: 0)
    assert caught.value.errcode == -GENERIC_ERROR and caught.value.cause_code == errno.EADDRINUSE


def test_no_driver_at_the_directory_is_a_driver_timeout(tmp_path) -> None:
    with pytest.raises(DriverTimeoutError, match="cannot connect to a media driver") as caught:
        Aeron(dir=str(tmp_path / "no-driver-here"), timeout=0.2)
    assert caught.value.errcode == caught.value.cause_code == -DRIVER_TIMEOUT
    assert "CnC file not created" in str(caught.value)


def test_an_add_the_driver_never_answers_is_a_driver_timeout() -> None:
    """An INVOKER driver that is never run again answers nothing: the C client gives the add
    up after its driver timeout (TIMED_OUT, "no response from media driver"). The client's
    liveness check of the driver is pushed past the test (keepalive_interval_ns), so the add's
    own deadline is what fires."""
    with MediaDriver(threading_mode="INVOKER") as driver:
        driver.do_work()  # a fresh heartbeat for the client's connect
        with Aeron(driver=driver, use_conductor_agent_invoker=True, timeout=1.0,
                   keepalive_interval_ns=120_000_000_000) as aeron:
            pending = aeron.async_add_publication("aeron:ipc", 3)
            with pytest.raises(DriverTimeoutError) as caught:
                _until_answered(pending, aeron.do_work)
    exc = caught.value
    assert exc.errcode == exc.cause_code == -DRIVER_TIMEOUT
    assert "no response from media driver" in str(exc)
    assert is_driver_timeout(exc)  # what the Echo server's channel creation acts on


def test_an_add_on_a_channel_whose_endpoint_is_closing_is_retry_later(udp_port: int) -> None:
    """Both agents invoked from this thread: the client sends "remove the subscription" and
    "add one on the same channel" before the driver runs; the driver removes the last
    subscription of the endpoint (now CLOSING until its receiver lets go, later in the same
    duty cycle) and refuses the add with RESOURCE_TEMPORARILY_UNAVAILABLE."""
    channel = f"aeron:udp?endpoint=127.0.0.1:{udp_port}"
    with MediaDriver(threading_mode="INVOKER") as driver:
        driver.do_work()
        with Aeron(driver=driver, use_conductor_agent_invoker=True, timeout=5.0) as aeron:
            def both() -> int:
                return driver.do_work() + aeron.do_work()

            sub = _until_answered(aeron.async_add_subscription(channel, 4), both)
            sub.close()
            again = aeron.async_add_subscription(channel, 4)
            while aeron.do_work() > 0:  # the client sends both commands; the driver has not run
                pass
            with pytest.raises(RetryLaterError) as caught:
                _until_answered(again, both)
            assert caught.value.errcode == caught.value.cause_code == -RESOURCE_TEMPORARILY_UNAVAILABLE
            assert "found in CLOSING state" in str(caught.value)
            # as Aeron.add_* does: the same add again succeeds once the endpoint is gone
            for _ in range(100):
                try:
                    _until_answered(aeron.async_add_subscription(channel, 4), both).close()
                    break
                except RetryLaterError:
                    continue
            else:
                raise AssertionError("the endpoint stayed CLOSING through 100 adds")


def test_an_archive_connect_nobody_answers_is_a_timeout_by_its_cause(aeron: Aeron, udp_port: int) -> None:
    """The C archive client's "connect timeout" has the catch-all code -1: the binding, which
    knows the connect's deadline passed, gives it cause_code ETIMEDOUT; that makes it an
    ArchiveTimeoutError (errcode still -1)."""
    from aeron_py.archive import AeronArchive, ArchiveTimeoutError

    with pytest.raises(ArchiveTimeoutError) as caught:
        AeronArchive.connect(aeron, control_channel=f"aeron:udp?endpoint=127.0.0.1:{udp_port}", message_timeout=0.3)
    assert caught.value.errcode == -1 and caught.value.cause_code == errno.ETIMEDOUT
    assert "connect timeout" in str(caught.value)


def _until_answered(pending: PendingAdd[T], work: Callable[[], int], timeout: float = 10.0) -> T:
    """Poll ``pending`` (running ``work`` between polls) until the driver's answer, at most
    ``timeout`` s of polls: the add's handle, or what its poll raises."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        work()
        handle = pending.poll()
        if handle is not None:
            return handle
        time.sleep(0.001)  # pacing only: the answer is what ends the loop
    raise AssertionError(f"{pending.description}: no answer within {timeout} s")
