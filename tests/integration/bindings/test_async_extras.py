"""Cancelled adds (aeron_async_add_*_cancel), next session ids (aeron_async_next_session_id) and counter
metadata (aeron_counters_reader_counter_owner_id, _reference_id, _metadata_key, _free_for_reuse_deadline_ms)."""
from __future__ import annotations

import pytest

from aeron_py import Aeron, MediaDriver
from conftest import wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


def _registrations(driver: MediaDriver) -> set[int]:
    with driver.stat() as stat:
        reader = stat.counters_reader()
        return {reader.registration_id(c.id) for c in stat.counters() if c.label.startswith("pub-")}


def test_a_cancelled_add_leaves_nothing_in_the_driver(driver: MediaDriver, aeron: Aeron) -> None:
    pending = aeron.async_add_publication("aeron:ipc", 71)
    registration = pending.registration_id
    assert pending.cancel() is True and pending.cancel() is False
    kept = aeron.add_publication("aeron:ipc", 72)  # the client goes on; a later add completes
    wait_until(lambda: kept.registration_id in _registrations(driver), 5, "the kept publication's counters")
    wait_until(lambda: registration not in _registrations(driver), 10, "the cancelled publication removed")


def test_a_completed_add_cannot_be_cancelled(aeron: Aeron) -> None:
    pending = aeron.async_add_subscription("aeron:ipc", 73)
    sub = wait_until(pending.poll, 5, "the subscription")
    assert pending.cancel() is False and not sub.is_closed


def test_next_session_id_is_free_for_a_channel(aeron: Aeron) -> None:
    first = aeron.next_session_id(74)
    second = aeron.next_session_id(74)
    assert -2**31 <= first < 2**31 and first != second
    pub = aeron.add_exclusive_publication(f"aeron:ipc?session-id={second}", 74)
    assert pub.session_id == second


def test_counter_metadata_says_who_allocated_it(aeron: Aeron) -> None:
    counter = aeron.add_counter(1010, "with metadata", key=b"\x07key")
    reader = aeron.counters_reader()
    assert reader.owner_id(counter.counter_id) == aeron.client_id
    assert reader.key(counter.counter_id).startswith(b"\x07key")
    assert reader.reference_id(counter.counter_id) in (0, -1, counter.registration_id)
    assert reader.free_for_reuse_deadline_ms(counter.counter_id) > 0
    with pytest.raises(IndexError):
        reader.owner_id(reader.max_counter_id + 1)
