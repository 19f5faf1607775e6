"""Per-IP duologue counting (docs/spec/echo2.md §3 "Per-IP counter", §4 decision 9).

IPv4 addresses count individually; IPv6 addresses are aggregated by a network prefix
(default /64, one typical customer allocation); IPv4-mapped IPv6 addresses
(``::ffff:a.b.c.d``) are treated as the IPv4 address they carry.
"""

from __future__ import annotations

import logging

from ...addresses import canonical_ip as canonical_ip  # re-exported (echo's public names)
from ...addresses import source_key
from .protocol import IPC_SOURCE

logger = logging.getLogger(__name__)

#: Addresses whose key is remembered (parsing one costs microseconds, and a flood repeats
#: the same few addresses hundreds of thousands of times a second); cleared when full.
KEY_CACHE_SIZE = 65_536


class PerIpCounter:
    """Counts duologues per address key; unknown keys count 0, entries vanish at 0."""

    def __init__(self, ipv6_prefix: int = 64) -> None:
        source_key("::", 32, ipv6_prefix)  # validates the prefix
        self._prefix = ipv6_prefix
        self._counts: dict[str, int] = {}
        self._keys: dict[str, str] = {}

    def source_key(self, ip: str) -> str:
        """The accounting key used for ``ip``: :func:`aeron_py.addresses.source_key`, IPv4 at /32
        (the same-host IPC clients all count under ``IPC_SOURCE``)."""
        key = self._keys.get(ip)
        if key is None:
            if ip == IPC_SOURCE:
                return IPC_SOURCE
            if len(self._keys) >= KEY_CACHE_SIZE:
                self._keys.clear()
            key = self._keys[ip] = source_key(ip, 32, self._prefix)
        return key

    def count(self, ip: str) -> int:
        """Current count for ``ip``'s key (0 if unknown)."""
        return self._counts.get(self.source_key(ip), 0)

    def increment(self, ip: str) -> int:
        """Add one for ``ip``'s key; returns the new count."""
        key = self.source_key(ip)
        self._counts[key] = self._counts.get(key, 0) + 1
        return self._counts[key]

    def decrement(self, ip: str) -> int:
        """Remove one for ``ip``'s key (never below 0); returns the new count."""
        key = self.source_key(ip)
        current = self._counts.get(key, 0)
        if current <= 0:
            logger.warning("per-IP count for %s is already 0; decrement ignored", key)
            return 0
        if current == 1:
            del self._counts[key]
            return 0
        self._counts[key] = current - 1
        return current - 1

    def __len__(self) -> int:
        """Number of keys with a non-zero count."""
        return len(self._counts)
