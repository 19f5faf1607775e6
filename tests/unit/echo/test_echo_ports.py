"""Tests for aeron_py.duologue.core.ports.PortAllocator (docs/spec/echo2.md §3 "Port allocator")."""

from __future__ import annotations

import random

import pytest

from aeron_py.duologue.core.ports import AllocationError, PortAllocator

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize(("base", "clients", "words"), [
    (0, 1, ["base port 0"]),
    (65536, 1, ["base port 65536"]),
    (65535, 1, ["top port 65536", "65535"]),
    (60000, 3000, ["top port 65999"]),
    (9000, 0, ["max_clients", "0"]),
    (9000, -2, ["max_clients", "-2"]),
])
def test_range_validation_names_the_values(base: int, clients: int, words: list[str]) -> None:
    with pytest.raises(ValueError) as info:
        PortAllocator(base, clients)
    for word in words:
        assert word in str(info.value)


@pytest.mark.parametrize("bad", [9000.0, "9000", True])
def test_non_int_arguments_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match="must be an int"):
        PortAllocator(bad, 1)  # type: ignore[arg-type]


def test_edges_of_the_port_space_are_valid() -> None:
    assert sorted(PortAllocator(65534, 1, random.Random(0)).allocate(2)) == [65534, 65535]
    assert sorted(PortAllocator(1, 1, random.Random(0)).allocate(2)) == [1, 2]


def test_allocates_exactly_the_range_then_raises() -> None:
    allocator = PortAllocator(9010, 4, random.Random(1))
    assert allocator.capacity == 8
    got = allocator.allocate(3) + allocator.allocate(5)
    assert sorted(got) == list(range(9010, 9018))
    assert allocator.available == 0 and allocator.in_use == 8
    with pytest.raises(AllocationError, match="asked for 1 ports but only 0"):
        allocator.allocate(1)


def test_over_asking_allocates_nothing() -> None:
    allocator = PortAllocator(9010, 1, random.Random(2))
    first = allocator.allocate(1)
    with pytest.raises(AllocationError, match="asked for 2"):
        allocator.allocate(2)
    assert allocator.available == 1
    assert allocator.allocate(1) != first


def test_allocation_is_random_not_sequential() -> None:
    orders = {tuple(PortAllocator(1000, 50, random.Random(seed)).allocate(100)) for seed in range(3)}
    assert len(orders) == 3
    assert tuple(range(1000, 1100)) not in orders


def test_free_then_reuse() -> None:
    allocator = PortAllocator(9010, 1, random.Random(3))
    a, b = allocator.allocate(2)
    allocator.free(a)
    assert a not in allocator and b in allocator
    assert allocator.allocate(1) == [a]


def test_double_free_and_foreign_ports_raise() -> None:
    allocator = PortAllocator(9010, 2, random.Random(4))
    port = allocator.allocate(1)[0]
    allocator.free(port)
    with pytest.raises(ValueError, match=f"port {port}: not allocated"):
        allocator.free(port)
    with pytest.raises(ValueError, match="outside"):
        allocator.free(9000)
    never = next(p for p in range(9010, 9014) if p != port)
    with pytest.raises(ValueError, match="not allocated"):
        allocator.free(never)
    assert allocator.available == 4


def test_count_validation() -> None:
    allocator = PortAllocator(9010, 1)
    assert allocator.allocate(0) == []
    with pytest.raises(ValueError, match="-1"):
        allocator.allocate(-1)


def test_never_hands_out_a_port_twice_over_many_operations() -> None:
    rng = random.Random(5)
    allocator = PortAllocator(20000, 16, random.Random(6))
    held: set[int] = set()
    for _ in range(5000):
        if held and (rng.random() < 0.5 or allocator.available == 0):
            port = rng.choice(sorted(held))
            allocator.free(port)
            held.remove(port)
        else:
            count = rng.randint(1, min(2, allocator.available))
            got = allocator.allocate(count)
            assert len(set(got)) == count and not held & set(got)
            assert all(20000 <= p < 20032 for p in got)
            held |= set(got)
        assert allocator.in_use == len(held) and allocator.available == 32 - len(held)


def test_retired_ports_are_never_handed_out_again() -> None:
    ports = PortAllocator(9000, 2, random.Random(1))
    taken = ports.allocate(2)
    ports.retire(taken[0])  # allocated: leaves service when freed
    free_before = ports.available
    ports.retire(next(p for p in range(9000, 9004) if p not in taken))  # free: leaves at once
    assert ports.available == free_before - 1 and ports.retired == 2
    for port in taken:
        ports.free(port)
    assert ports.available == 2 and taken[0] not in ports.allocate(2)
    with pytest.raises(AllocationError):
        ports.allocate(1)
    with pytest.raises(ValueError, match="outside"):
        ports.retire(8999)


def test_busy_ports_are_avoided_while_others_are_free() -> None:
    allocator = PortAllocator(9000, 8, random.Random(3))
    busy = {9000, 9001, 9002, 9003, 9004, 9005}
    for _ in range(50):
        got = allocator.allocate(2, busy)
        assert not busy & set(got)
        for port in got:
            allocator.free(port)
    assert allocator.available == 16


@pytest.mark.parametrize("free_ports", [2, 3, 5])
def test_only_busy_ports_left_are_still_handed_out_all_or_nothing(free_ports: int) -> None:
    """The chosen ports may all be busy; allocation never fails for that, nor takes one twice."""
    allocator = PortAllocator(9000, 4, random.Random(4))
    held = allocator.allocate(8 - free_ports)
    got = allocator.allocate(2, set(range(9000, 9008)))  # every port busy
    assert len(set(got)) == 2 and not set(got) & set(held) and allocator.available == free_ports - 2
