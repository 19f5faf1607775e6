"""The Echo server's blocklist file format.

Moved to :mod:`aeron_py.echo.blocklist`; this import path stays for existing code.
"""
from __future__ import annotations

from .echo.blocklist import (  # noqa: F401
    Blocklist, BlocklistError, Entry, Network, parse_network,
)

__all__ = [
    "Blocklist", "BlocklistError", "Entry", "Network", "parse_network",
]
