"""A driver's counters file sized from the duologues it must hold (echo/capacity.py)."""
from __future__ import annotations

import pytest

from aeron_py.duologue.core.capacity import COUNTERS_PER_DUOLOGUE, counters_buffer_length

pytestmark = pytest.mark.timeout(10)

MIB = 1 << 20


def test_small_servers_keep_aerons_default() -> None:
    assert counters_buffer_length(0) == counters_buffer_length(64) == counters_buffer_length(3000) == 8 * MIB


def test_large_servers_get_room_for_every_duologue() -> None:
    for duologues in (4325, 5064, 10_064, 100_000):
        length = counters_buffer_length(duologues)
        assert length % MIB == 0
        # measured: 15 counters per duologue on either side, plus a HELLO image's 4
        assert length // 128 >= duologues * 19 + 1024
        assert length // 128 >= duologues * COUNTERS_PER_DUOLOGUE
    # 4,325 duologues filled Aeron's default 65,536 counters
    assert counters_buffer_length(4325) // 128 > 65_536


def test_never_above_aerons_maximum_and_refuses_nonsense() -> None:
    assert counters_buffer_length(10**9) == 500 * MIB
    for bad in (-1, 1.5, True, "10"):
        with pytest.raises(ValueError, match="duologues must be an int"):
            counters_buffer_length(bad)  # type: ignore[arg-type]
