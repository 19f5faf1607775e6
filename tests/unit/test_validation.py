"""aeron_py.validation: bools refused, inclusive bounds, one message form naming field and value."""
from __future__ import annotations

import math
import re

import pytest

from aeron_py.channel import ChannelUriError
from aeron_py.validation import (
    is_int,
    is_number,
    optional_int,
    optional_positive,
    require_int,
    require_positive,
)

pytestmark = pytest.mark.timeout(30)


@pytest.mark.parametrize("value", [0, -5, 2**70])
def test_ints_are_ints(value: int) -> None:
    assert is_int(value) and is_number(value)


@pytest.mark.parametrize("value", [True, False, 1.0, "1", None])
def test_bools_and_others_are_not_ints(value: object) -> None:
    assert not is_int(value)


@pytest.mark.parametrize("value", [True, False, "1", None, 1j])
def test_bools_and_others_are_not_numbers(value: object) -> None:
    assert not is_number(value)


def test_require_int_bounds_are_inclusive() -> None:
    assert require_int("X.port", 1, min=1, max=65535) == 1
    assert require_int("X.port", 65535, min=1, max=65535) == 65535
    assert require_int("X.count", 0, min=0) == 0
    assert require_int("X.low", -(2**31), max=0) == -(2**31)
    assert require_int("X.any", -7) == -7


@pytest.mark.parametrize(("value", "low", "high", "allowed"), [
    (0, 1, 65535, "an int in [1, 65535]"),
    (65536, 1, 65535, "an int in [1, 65535]"),
    (-1, 0, None, "an int >= 0"),
    (6, None, 5, "an int <= 5"),
])
def test_require_int_out_of_range_names_field_range_and_value(
        value: int, low: int | None, high: int | None, allowed: str) -> None:
    with pytest.raises(ValueError) as info:
        require_int("ServerConfig.max_clients", value, min=low, max=high)
    assert str(info.value) == f"ServerConfig.max_clients must be {allowed}, got {value!r}"


@pytest.mark.parametrize("value", [True, False, 1.0, "1", None])
def test_require_int_refuses_bools_and_non_ints(value: object) -> None:
    with pytest.raises(ValueError, match=re.escape(f"X.n must be an int >= 0, got {value!r}")):
        require_int("X.n", value, min=0)
    with pytest.raises(ValueError, match=re.escape(f"X.n must be an int, got {value!r}")):
        require_int("X.n", value)


def test_require_int_raises_the_given_error() -> None:
    with pytest.raises(ChannelUriError, match=r"port must be an int in \[0, 65535\], got -1"):
        require_int("port", -1, min=0, max=65535, error=ChannelUriError)


def test_optional_int_takes_none_and_checks_the_rest() -> None:
    assert optional_int("X.cap", None, min=1) is None
    assert optional_int("X.cap", 1, min=1) == 1
    for bad in (0, True, 1.5, "2"):
        with pytest.raises(ValueError) as info:
            optional_int("X.cap", bad, min=1)
        assert str(info.value) == f"X.cap must be None or an int >= 1, got {bad!r}"


@pytest.mark.parametrize("value", [1, 0.001, 1e300, 2**70])
def test_require_positive_takes_finite_numbers_above_zero(value: float) -> None:
    assert require_positive("X.expiry", value) == value


@pytest.mark.parametrize("value", [0, 0.0, -0.0, -1, -math.inf, math.inf, math.nan, True, False, "1", None])
def test_require_positive_refuses_zero_nan_infinities_bools_others(value: object) -> None:
    with pytest.raises(ValueError) as info:
        require_positive("X.expiry", value, unit="seconds")
    assert str(info.value) == f"X.expiry must be a number of seconds > 0, got {value!r}"


def test_require_positive_or_zero() -> None:
    assert require_positive("X.linger", 0, or_zero=True) == 0
    assert require_positive("X.linger", 0.0, or_zero=True) == 0.0
    for bad in (-0.5, math.nan, math.inf, True):
        with pytest.raises(ValueError, match=re.escape(f"X.linger must be a number >= 0, got {bad!r}")):
            require_positive("X.linger", bad, or_zero=True)


def test_optional_positive() -> None:
    assert optional_positive("X.timeout", None) is None
    assert optional_positive("X.timeout", 2.5) == 2.5
    assert optional_positive("X.timeout", 0, or_zero=True) == 0
    for bad in (0, math.nan, math.inf, False):
        with pytest.raises(ValueError) as info:
            optional_positive("X.timeout", bad, unit="seconds")
        assert str(info.value) == f"X.timeout must be None or a number of seconds > 0, got {bad!r}"
