"""Client counters (aeron_async_add_counter, aeron_async_add_static_counter, aeron_counter_*) on a real driver."""
from __future__ import annotations

import threading
from typing import Any

import pytest

from aeron_py import Aeron, AeronError, MediaDriver

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


def test_a_counter_is_in_the_cnc_file_for_every_reader(driver: MediaDriver, aeron: Aeron) -> None:
    counter = aeron.add_counter(1001, "orders processed", key=b"\x01\x02")
    assert counter.value == 0 and counter.increment() == 1 and counter.increment(41) == 42
    assert counter.compare_and_set(42, 100) and not counter.compare_and_set(42, 7) and counter.value == 100
    counter.value = -5
    with driver.stat() as stat:
        [row] = [c for c in stat.counters() if c.id == counter.counter_id]
        assert (row.label, row.type_id, row.value) == ("orders processed", 1001, -5)
    counter.close()
    counter.close()  # idempotent
    assert counter.is_closed
    with pytest.raises(AeronError, match="counter is closed"):
        counter.increment()


def test_a_static_counter_is_shared_and_outlives_its_clients(driver: MediaDriver) -> None:
    with Aeron(driver=driver) as one, Aeron(driver=driver) as two:
        first = one.add_counter(1002, "shared", registration_id=77)
        second = two.add_counter(1002, "shared", registration_id=77)
        assert first.counter_id == second.counter_id
        first.value = 9
        assert second.value == 9
        counter_id = first.counter_id
    with driver.stat() as stat:
        assert [c.value for c in stat.counters() if c.id == counter_id] == [9]  # kept by the driver


def test_increments_from_threads_are_atomic(aeron: Aeron) -> None:
    counter = aeron.add_counter(1003, "from threads")

    def work() -> None:
        for _ in range(10_000):
            counter.increment()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert counter.value == 40_000


@pytest.mark.parametrize("bad", [
    dict(type_id=2**31, label="x"), dict(type_id=True, label="x"), dict(type_id=1, label="é" * 200),
    dict(type_id=1, label="x", key=b"k" * 113), dict(type_id=1, label="x", key="text"),
    dict(type_id=1, label="x", registration_id=2**63),
])
def test_bad_counters_are_refused_before_the_driver(aeron: Aeron, bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        aeron.add_counter(**bad)


def test_a_closed_clients_counter_raises(driver: MediaDriver) -> None:
    client = Aeron(driver=driver)
    counter = client.add_counter(1004, "short lived")
    client.close()
    assert counter.is_closed
    with pytest.raises(AeronError, match="client is closed"):
        _ = counter.value
    counter.close()  # nothing left to close
