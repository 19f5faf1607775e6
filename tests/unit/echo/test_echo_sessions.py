"""Tests for aeron_py.duologue.core.sessions.SessionAllocator (docs/spec/echo2.md §3 "Session allocator")."""

from __future__ import annotations

import random

import pytest

from aeron_py.duologue.core.ports import AllocationError
from aeron_py.duologue.core.sessions import DEFAULT_SESSION_MAX, DEFAULT_SESSION_MIN, SessionAllocator

pytestmark = pytest.mark.timeout(30)


class StuckRng(random.Random):
    """An rng whose randrange always returns the range's lowest value."""

    def randrange(self, start: int, stop: int | None = None, step: int = 1) -> int:  # type: ignore[override]
        return 0 if stop is None else start


def test_default_range_is_the_reserved_one() -> None:
    assert (DEFAULT_SESSION_MIN, DEFAULT_SESSION_MAX) == (1, 2**31 - 1)
    allocator = SessionAllocator(rng=random.Random(0))
    ids = [allocator.allocate() for _ in range(1000)]
    assert len(set(ids)) == 1000
    assert all(1 <= i < 2**31 - 1 for i in ids)


@pytest.mark.parametrize(("low", "high"), [(5, 5), (6, 5)])
def test_empty_range_rejected(low: int, high: int) -> None:
    with pytest.raises(ValueError, match=f"\\[{low}, {high}\\)"):
        SessionAllocator(low, high)


def test_non_int_bounds_rejected() -> None:
    with pytest.raises(ValueError, match="must be an int"):
        SessionAllocator(1.0, 5)  # type: ignore[arg-type]


def test_exhaustion_then_free_and_reuse() -> None:
    allocator = SessionAllocator(5, 9, random.Random(1))
    ids = {allocator.allocate() for _ in range(4)}
    assert ids == {5, 6, 7, 8}
    with pytest.raises(AllocationError, match="all 4 session ids"):
        allocator.allocate()
    allocator.free(7)
    assert allocator.allocate() == 7
    assert allocator.in_use == 4


def test_double_free_and_unknown_free_raise() -> None:
    allocator = SessionAllocator(0, 10, random.Random(2))
    sid = allocator.allocate()
    allocator.free(sid)
    with pytest.raises(ValueError, match=f"session id {sid}: not allocated"):
        allocator.free(sid)
    with pytest.raises(ValueError, match="not allocated"):
        allocator.free(99)


def test_fallback_scan_terminates_when_random_draws_collide() -> None:
    allocator = SessionAllocator(100, 110, StuckRng())
    ids = [allocator.allocate() for _ in range(10)]
    assert sorted(ids) == list(range(100, 110))
    with pytest.raises(AllocationError):
        allocator.allocate()


def test_memory_follows_ids_in_use_not_range() -> None:
    allocator = SessionAllocator(-(2**62), 2**62, random.Random(3))
    ids = [allocator.allocate() for _ in range(100)]
    for sid in ids[:60]:
        allocator.free(sid)
    assert allocator.in_use == 40
    assert len(allocator._used) == 40  # the only per-id storage


def test_no_duplicates_in_a_nearly_full_range() -> None:
    allocator = SessionAllocator(0, 3000, random.Random(4))
    ids = [allocator.allocate() for _ in range(3000)]
    assert sorted(ids) == list(range(3000))
