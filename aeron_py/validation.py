"""Argument checks shared by the package, with one message form for every refused value.

A ``require_*`` function returns the value it was given when that is acceptable, else
raises ``ValueError`` reading ``"<name> must be <allowed>, got <value!r>"``. ``name`` is
written by the caller as the user knows the value: ``"ServerOptions.port"``,
``"set_port_owner: port"``. An ``optional_*`` function also accepts ``None``. A ``bool``
is never taken for a number, though Python makes it an ``int``.

Pure Python (the sans-I/O Echo core uses it too).
"""
from __future__ import annotations

import math
from typing import TypeGuard

__all__ = ["is_int", "is_number", "optional_int", "optional_positive", "require_int", "require_positive"]


def is_int(value: object) -> TypeGuard[int]:
    """True for an ``int`` that is not a ``bool``."""
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> TypeGuard[int | float]:
    """True for an ``int`` or ``float`` that is not a ``bool`` (NaN and infinities included)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _int_range(min: int | None, max: int | None) -> str:
    """The allowed ints, as a message says them."""
    if min is not None and max is not None:
        return f"an int in [{min}, {max}]"
    if min is not None:
        return f"an int >= {min}"
    return "an int" if max is None else f"an int <= {max}"


def _in_range(value: object, min: int | None, max: int | None) -> TypeGuard[int]:
    """True for an int (not a bool) with ``min <= value <= max`` (None: no bound)."""
    return is_int(value) and (min is None or value >= min) and (max is None or value <= max)


def require_int(name: str, value: object, *, min: int | None = None, max: int | None = None,
                error: type[ValueError] = ValueError) -> int:
    """``value`` if it is an int (not a bool) in ``[min, max]``, both bounds inclusive and
    None for none; else raise ``error``: ``"<name> must be an int in [min, max], got <value!r>"``."""
    if _in_range(value, min, max):
        return value
    raise error(f"{name} must be {_int_range(min, max)}, got {value!r}")


def optional_int(name: str, value: object, *, min: int | None = None, max: int | None = None) -> int | None:
    """``value`` if it is None or passes :func:`require_int`; else raise ``ValueError``:
    ``"<name> must be None or an int in [min, max], got <value!r>"``."""
    if value is None or _in_range(value, min, max):
        return value
    raise ValueError(f"{name} must be None or {_int_range(min, max)}, got {value!r}")


def _number_range(or_zero: bool, unit: str) -> str:
    """The allowed numbers, as a message says them."""
    return f"a number{f' of {unit}' if unit else ''} {'>=' if or_zero else '>'} 0"


def _positive(value: object, or_zero: bool) -> TypeGuard[int | float]:
    """True for a finite int or float (not a bool) > 0, or >= 0 when ``or_zero``."""
    return is_number(value) and value < math.inf and (value > 0 or (or_zero and value == 0))


def require_positive(name: str, value: object, *, or_zero: bool = False, unit: str = "") -> float:
    """``value`` if it is a finite int or float (not a bool, not NaN) > 0, or >= 0 when
    ``or_zero``; else raise ``ValueError``: ``"<name> must be a number of <unit> > 0, got
    <value!r>"`` (``unit``, e.g. ``"seconds"``, is left out when empty)."""
    if _positive(value, or_zero):
        return value
    raise ValueError(f"{name} must be {_number_range(or_zero, unit)}, got {value!r}")


def optional_positive(name: str, value: object, *, or_zero: bool = False, unit: str = "") -> float | None:
    """``value`` if it is None or passes :func:`require_positive`; else raise ``ValueError``:
    ``"<name> must be None or a number of <unit> > 0, got <value!r>"``."""
    if value is None or _positive(value, or_zero):
        return value
    raise ValueError(f"{name} must be None or {_number_range(or_zero, unit)}, got {value!r}")
