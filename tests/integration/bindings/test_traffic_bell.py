"""The driver's traffic bell and quiet idle strategy (aeron_py.traffic,
cpp/plugins/traffic_bell/traffic_bell.c),
through the real C driver and UDP on loopback: what rings it and what does not, no lost
ring between a poll and a wait, signals, closed drivers, a quiet driver that still
delivers, and one that a client's request wakes."""
from __future__ import annotations

import signal
import threading

import pytest

from aeron_py import Aeron, MediaDriver
from aeron_py.errors import AeronError
from aeron_py.traffic import QuietIdle, TrafficBell
from conftest import free_udp_port, wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

STREAM = 1810


def connected_pair(aeron: Aeron, port: int):
    channel = f"aeron:udp?endpoint=127.0.0.1:{port}"
    sub = aeron.add_subscription(channel, STREAM)
    pub = aeron.add_publication(channel, STREAM)
    wait_until(lambda: pub.is_connected and sub.is_connected, 10, "connected")
    return pub, sub


def receive(sub, count: int = 1) -> list[bytes]:
    got: list[bytes] = []
    wait_until(lambda: sub.poll(lambda buf, header: got.append(bytes(buf)), 10) >= 0 and len(got) >= count,
               10, f"{count} message(s)")
    return got


def heartbeats_received(driver: MediaDriver) -> int:
    with driver.stat() as stat:
        return stat.system_counters()["Heartbeats received"]


@pytest.fixture
def quiet_driver():
    with MediaDriver(publication_linger_timeout_ns=0, quiet_idle=QuietIdle(after=0.0, period=0.05)) as d:
        yield d


def test_data_rings_the_bell_and_wakes_a_waiter(driver: MediaDriver) -> None:
    bell = driver.traffic
    with Aeron(driver=driver) as aeron:
        pub, sub = connected_pair(aeron, free_udp_port())
        seen = bell.sequence()
        woke: list[bool] = []
        waiter = threading.Thread(target=lambda: woke.append(bell.wait(seen, 20.0)))
        waiter.start()
        wait_until(lambda: pub.offer(b"ring") > 0, 5, "offer")
        waiter.join(25)
        assert woke == [True]
        assert bell.sequence() > seen
        assert receive(sub) == [b"ring"]  # the data is in the log buffer once the bell rang


def test_heartbeats_do_not_ring_the_bell(driver: MediaDriver) -> None:
    bell = driver.traffic
    with Aeron(driver=driver) as aeron:
        pub, sub = connected_pair(aeron, free_udp_port())  # kept open: they heartbeat
        seen = bell.sequence()
        before = heartbeats_received(driver)
        wait_until(lambda: heartbeats_received(driver) >= before + 5, 10, "five heartbeats (100 ms apart)", step=0.01)
        assert pub.is_connected and sub.is_connected
        assert bell.sequence() == seen
        assert bell.wait(seen, 0.0) is False


def test_a_ring_between_the_poll_and_the_wait_is_not_lost(driver: MediaDriver) -> None:
    bell = driver.traffic
    with Aeron(driver=driver) as aeron:
        pub, sub = connected_pair(aeron, free_udp_port())
        seen = bell.sequence()  # read before the (last, empty) poll ...
        wait_until(lambda: pub.offer(b"early") > 0, 5, "offer")
        wait_until(lambda: bell.sequence() != seen, 10, "the ring")
        # ... so a wait after the ring returns at once instead of sleeping out its timeout
        assert bell.wait(seen, 30.0) is True
        assert receive(sub) == [b"early"]


def test_end_of_stream_rings_the_bell(driver: MediaDriver) -> None:
    bell = driver.traffic
    with Aeron(driver=driver) as aeron:
        pub, sub = connected_pair(aeron, free_udp_port())
        seen = bell.sequence()
        pub.close()
        assert bell.wait(seen, 20.0) is True


def test_quiet_driver_still_delivers_and_goes_quiet(quiet_driver: MediaDriver) -> None:
    bell = quiet_driver.traffic
    assert quiet_driver.quiet_idle == QuietIdle(after=0.0, period=0.05)
    with Aeron(driver=quiet_driver) as aeron:
        pub, sub = connected_pair(aeron, free_udp_port())
        for i in range(5):
            bell.touch()
            wait_until(lambda: pub.offer(b"%d" % i) > 0, 5, "offer")
        assert receive(sub, 5) == [b"0", b"1", b"2", b"3", b"4"]
        wait_until(lambda: bell.quiet_for() > 0.2, 5, "a quiet spell")
        seen = bell.sequence()
        wait_until(lambda: pub.offer(b"after quiet") > 0, 5, "offer")
        assert bell.wait(seen, 20.0) is True
        assert receive(sub) == [b"after quiet"]


def test_a_clients_request_wakes_a_quiet_driver_and_keepalives_do_not() -> None:
    # quiet for a full second between duty cycles: before the requests counted, each step of
    # an add (the command, then the channel's and the log's asynchronous work) waited for one
    quiet = QuietIdle(after=0.5, period=1.0)
    with MediaDriver(publication_linger_timeout_ns=0, quiet_idle=quiet) as driver, Aeron(driver=driver) as aeron:
        bell = driver.traffic
        # the client sends a keepalive every 0.5 s: they leave the driver quiet
        wait_until(lambda: bell.quiet_for() > 1.5, 10, "quiet through the client's keepalives")
        seen = bell.sequence()
        requested = bell.quiet_for()
        subs = [aeron.add_subscription("aeron:ipc", STREAM + i) for i in range(3)]  # IPC: no datagram rings
        # each add touched the bell: the driver was quiet for less than a second when it answered
        assert bell.quiet_for() < requested, (bell.quiet_for(), requested)
        assert bell.sequence() == seen  # a touch, not a ring: no waiter is woken by a request
        assert all(sub.channel == "aeron:ipc" for sub in subs)


def cycle_thresholds(driver: MediaDriver) -> list[str]:
    """The "threshold=..." of the driver's three "work cycle exceeded threshold" counters."""
    with driver.stat() as stat:
        labels = [c.label for c in stat.counters() if "work cycle exceeded threshold" in c.label]
    return sorted(label.split("threshold=")[1].split()[0] for label in labels)


def test_deep_quiet_slows_the_idle_driver_and_still_delivers() -> None:
    quiet = QuietIdle(after=0.0, period=0.01, deep_after=0.3, deep_period=0.2)
    with MediaDriver(publication_linger_timeout_ns=0, quiet_idle=quiet) as driver:
        bell = driver.traffic
        with Aeron(driver=driver) as aeron:
            pub, sub = connected_pair(aeron, free_udp_port())
            wait_until(lambda: bell.quiet_for() > 0.5, 10, "deep quiet")
            with driver.stat() as stat:
                before, started = stat.system_counters()["Heartbeats sent"], bell.quiet_for()
                assert bell.wait(bell.sequence(), 2.0) is False  # 2 s of silence
                sent, window = stat.system_counters()["Heartbeats sent"] - before, bell.quiet_for() - started
            # Aeron heartbeats an idle publication every 0.1 s; deep quiet runs a duty cycle,
            # and so at most one heartbeat, per 0.2 s (a slow machine sends fewer, never more)
            assert 0 < sent <= window / 0.2 + 2, (sent, window)
            assert pub.is_connected and sub.is_connected
            seen = bell.sequence()
            wait_until(lambda: pub.offer(b"after deep quiet") > 0, 5, "offer")
            assert bell.wait(seen, 20.0) is True
            assert receive(sub) == [b"after deep quiet"]


def test_quiet_idle_raises_the_stall_thresholds_by_its_longest_period() -> None:
    with MediaDriver(endpoint_filter=None) as plain:
        assert cycle_thresholds(plain) == ["100ms"] * 3  # Aeron's default
    with MediaDriver(quiet_idle=QuietIdle(after=1.0, period=0.05)) as quiet:
        assert cycle_thresholds(quiet) == ["150ms"] * 3
    with MediaDriver(quiet_idle=QuietIdle(after=1.0, period=0.05, deep_after=5.0, deep_period=0.25)) as deep:
        assert cycle_thresholds(deep) == ["350ms"] * 3


def test_touch_counts_as_traffic_without_ringing(driver: MediaDriver) -> None:
    bell = driver.traffic
    seen = bell.sequence()
    wait_until(lambda: bell.quiet_for() > 0.01, 5, "some quiet")
    bell.touch()
    assert bell.quiet_for() < 0.01 or bell.last_traffic() > 0
    assert bell.sequence() == seen


def test_a_raising_signal_handler_interrupts_a_wait(driver: MediaDriver) -> None:
    class Interrupted(Exception):
        pass

    def handler(signum: int, frame: object) -> None:
        raise Interrupted

    bell = driver.traffic
    previous = signal.signal(signal.SIGALRM, handler)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        with pytest.raises(Interrupted):
            bell.wait(bell.sequence(), 30.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_bell_outlives_its_driver_safely() -> None:
    d = MediaDriver(publication_linger_timeout_ns=0)
    bell = d.traffic
    d.close()
    del d
    assert bell.wait(bell.sequence(), 0.01) is False
    assert bell.fileno() >= 0
    bell.touch()


def test_bad_arguments_and_configurations() -> None:
    for bad in ({"after": -1.0}, {"period": 0.0}, {"period": 2.0}, {"after": float("inf")}, {"period": True},
                {"after": 2.0, "deep_after": 1.0}, {"deep_after": float("nan")}, {"deep_after": 5.0, "deep_period": 0},
                {"deep_period": 1.5}, {"deep_after": "5"}):
        with pytest.raises(ValueError, match="QuietIdle"):
            QuietIdle(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="endpoint filter"):
        MediaDriver(quiet_idle=QuietIdle(), endpoint_filter=None)
    with pytest.raises(ValueError, match="SHARED"):
        MediaDriver(quiet_idle=QuietIdle(), threading_mode="DEDICATED")
    with pytest.raises(TypeError, match="QuietIdle"):
        MediaDriver(quiet_idle=0.5)  # type: ignore[arg-type]
    with MediaDriver(endpoint_filter=None) as plain:
        with pytest.raises(AeronError, match="traffic bell"):
            plain.traffic
    with MediaDriver() as d:
        assert isinstance(d.traffic, TrafficBell)
        with pytest.raises(ValueError, match="timeout"):
            d.traffic.wait(0, -1.0)


def test_two_waiters_at_once_both_return_and_one_wakes(driver: MediaDriver) -> None:
    """One waiter at a time is the contract; two at once must still only mean a late
    return (at its timeout), never a hang or a crash."""
    bell = driver.traffic
    with Aeron(driver=driver) as aeron:
        pub, sub = connected_pair(aeron, free_udp_port())
        seen = bell.sequence()
        results: list[bool] = []
        waiters = [threading.Thread(target=lambda: results.append(bell.wait(seen, 3.0))) for _ in range(2)]
        for waiter in waiters:
            waiter.start()
        wait_until(lambda: pub.offer(b"both") > 0, 5, "offer")
        for waiter in waiters:
            waiter.join(10)
        assert not any(waiter.is_alive() for waiter in waiters)
        assert len(results) == 2 and True in results
        assert receive(sub) == [b"both"]


NATIVE_DEEP_MISUSE = r"""
import sys
from aeron_py import _aeron

def context(suffix):
    ctx = _aeron.DriverContext()
    ctx.set_dir(sys.argv[1] + suffix); ctx.set_dir_delete_on_start(True); ctx.set_dir_delete_on_shutdown(True)
    ctx.set_threading_mode(_aeron.THREADING_MODE_SHARED)
    return ctx

# hot, period, deep, deep period: deep below hot, deep periods outside (0, 1 s]
for i, bad in enumerate([(10**9, 10**7, 10**8, 10**8), (0, 10**7, 10**9, 0), (0, 10**7, 10**9, 2 * 10**9),
                         (0, 10**7, 10**9, -1)]):
    f = _aeron.EndpointFilter(0, 0.0, 1.0, 0, 0, 32, 64, 16, 16, 10**9)
    try:
        _aeron.Driver(context(f"-{i}"), endpoint_filter=f, quiet_idle_hot_ns=bad[0], quiet_idle_period_ns=bad[1],
                      quiet_idle_deep_ns=bad[2], quiet_idle_deep_period_ns=bad[3])
        print("accepted", bad)
    except ValueError:
        print("refused")
f = _aeron.EndpointFilter(0, 0.0, 1.0, 0, 0, 32, 64, 16, 16, 10**9)
d = _aeron.Driver(context("-ok"), endpoint_filter=f, quiet_idle_hot_ns=0, quiet_idle_period_ns=10**7,
                  quiet_idle_deep_ns=10**8, quiet_idle_deep_period_ns=10**8)
d.close()
print("OK")
"""


def test_native_deep_quiet_misuse_in_a_child_process(tmp_path) -> None:
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", NATIVE_DEEP_MISUSE, str(tmp_path / "drv")], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr  # negative would be death by a signal
    assert result.stdout.splitlines() == ["refused"] * 4 + ["OK"], result.stdout
