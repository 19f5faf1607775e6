"""Random port allocation for duologues.

Moved to :mod:`aeron_py.echo.core.ports`; this import path stays for existing code.
"""
from __future__ import annotations

from .core.ports import (  # noqa: F401
    AllocationError, PortAllocator,
)

__all__ = [
    "AllocationError", "PortAllocator",
]
