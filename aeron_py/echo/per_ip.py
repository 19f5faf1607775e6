"""Per-IP duologue counting.

Moved to :mod:`aeron_py.echo.core.per_ip`; this import path stays for existing code.
``address_key`` is the old name of :func:`aeron_py.addresses.client_key` with IPv4 at /32.
"""
from __future__ import annotations

import warnings

from ..addresses import canonical_ip, client_key
from .core.per_ip import PerIpCounter

__all__ = ["PerIpCounter", "address_key", "canonical_ip"]


def address_key(ip: str, ipv6_prefix: int = 64) -> str:
    """Deprecated: ``aeron_py.addresses.client_key(ip, 32, ipv6_prefix)``."""
    warnings.warn("aeron_py.echo.per_ip.address_key is deprecated: use aeron_py.addresses.client_key(ip, 32, "
                  "ipv6_prefix)", DeprecationWarning, stacklevel=2)
    return client_key(ip, 32, ipv6_prefix)
