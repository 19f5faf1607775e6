"""aeron_py.archive.segment_file_base_position: Aeron's C function, its arguments checked first
(a length that is not a power of two would be masked into a wrong answer)."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aeron_py.archive import segment_file_base_position

pytestmark = pytest.mark.timeout(60)

TERM = 1 << 16
SEGMENT = 1 << 20


def test_known_answers() -> None:
    assert segment_file_base_position(0, 0, TERM, SEGMENT) == 0
    assert segment_file_base_position(0, SEGMENT - 1, TERM, SEGMENT) == 0
    assert segment_file_base_position(0, SEGMENT, TERM, SEGMENT) == SEGMENT
    assert segment_file_base_position(0, 3 * SEGMENT + 5, TERM, SEGMENT) == 3 * SEGMENT
    # a recording that started within its third term: segments count from that term's base
    start = 2 * TERM + 100
    assert segment_file_base_position(start, start, TERM, SEGMENT) == 2 * TERM
    assert segment_file_base_position(start, 2 * TERM + SEGMENT, TERM, SEGMENT) == 2 * TERM + SEGMENT


@given(st.integers(0, 2**40), st.integers(0, 2**40), st.integers(16, 30), st.integers(0, 4))
def test_the_base_is_a_segment_boundary_at_or_before_the_position(start: int, length: int, term_bits: int,
                                                                  terms_per_segment_bits: int) -> None:
    term, segment = 1 << term_bits, 1 << min(term_bits + terms_per_segment_bits, 30)
    base = segment_file_base_position(start, start + length, term, segment)
    term_base = start - start % term
    assert base <= start + length < base + segment
    assert (base - term_base) % segment == 0


@pytest.mark.parametrize(("args", "says"), [
    ((0, 0, 1000, SEGMENT), "term_length must be a power of two"),
    ((0, 0, TERM, TERM // 2), "segment_length must be a power of two and at least term_length"),
    ((0, 0, TERM, 3 * TERM), "segment_length must be a power of two"),
    ((-1, 0, TERM, SEGMENT), "start_position"),
    ((10, 5, TERM, SEGMENT), "need 0 <= start_position <= position"),
    ((0, 2**63, TERM, SEGMENT), "position"),
    ((0, 0, 2**31, SEGMENT), "term_length"),
    ((0, 0, 0, SEGMENT), "term_length"),
])
def test_bad_arguments_are_value_errors_that_name_them(args: tuple[int, int, int, int], says: str) -> None:
    with pytest.raises(ValueError) as bad:
        segment_file_base_position(*args)
    assert says in str(bad.value)


def test_non_ints_are_refused() -> None:
    with pytest.raises(ValueError, match="position must be an int"):
        segment_file_base_position(0, 1.5, TERM, SEGMENT)  # type: ignore[arg-type]
