"""The one definition of "who is a client": IP parsing and the per-source key.

Used by the Echo server's per-IP limits (:mod:`aeron_py.duologue.core.per_ip`), the driver's
endpoint filter (:mod:`aeron_py.endpoint_filter`, whose C side is handed the same prefix
lengths) and the blocklist (:mod:`aeron_py.duologue.blocklist`; network parsing lives here).
The analytics job computes the same key in Spark SQL (:func:`aeron_py.analytics.rules.with_source_key`; its tests compare it with this one).

Pure Python: no Aeron, no I/O.
"""
from __future__ import annotations

import ipaddress
from typing import Union

from .validation import require_int

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
Network = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]
_MAPPED_V4 = ipaddress.IPv6Network("::ffff:0:0/96")


def parse_address(text: str) -> IPAddress:
    """An IP literal (IPv6 may be bracketed or scoped); IPv4-mapped IPv6 becomes the IPv4 it carries."""
    if not isinstance(text, str):
        raise TypeError(f"an IP address must be a str, got {type(text).__name__}")
    body = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    try:
        address = ipaddress.ip_address(body)
    except ValueError:
        raise ValueError(f"{text!r} is not an IP address") from None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def canonical_ip(ip: str) -> str:
    """Canonical text of one address (for exact owner comparisons); drops an IPv6 scope."""
    address = parse_address(ip)
    return str(type(address)(int(address)))


def source_key(ip: str, ipv4_prefix: int = 32, ipv6_prefix: int = 64) -> str:
    """The per-source key: the address masked to the prefix length of its family.

    IPv4 at /32 is the address itself (``'192.0.2.7'``); anything else is written as a
    network (``'2001:db8:1:2::/64'``, ``'192.0.2.0/24'``).
    """
    require_int("IPv4 prefix", ipv4_prefix, min=0, max=32)
    require_int("IPv6 prefix", ipv6_prefix, min=0, max=128)
    address = parse_address(ip)
    if address.version == 4:
        if ipv4_prefix == 32:
            return str(address)
        mask = ((1 << ipv4_prefix) - 1) << (32 - ipv4_prefix)
        return f"{ipaddress.IPv4Address(int(address) & mask)}/{ipv4_prefix}"
    mask = ((1 << ipv6_prefix) - 1) << (128 - ipv6_prefix)
    return f"{ipaddress.IPv6Address(int(address) & mask)}/{ipv6_prefix}"


def unmap_network(network: Network) -> Network:
    """IPv4-mapped IPv6 networks become the IPv4 network they stand for."""
    if isinstance(network, ipaddress.IPv6Network) and network.prefixlen >= 96:
        if network.network_address in _MAPPED_V4:
            v4 = ipaddress.IPv4Address(int(network.network_address) & 0xFFFFFFFF)
            return ipaddress.IPv4Network((v4, network.prefixlen - 96))
    return network


def bare_address(text: str) -> str:
    """An address without brackets or zone (``[fe80::1%eth0]`` → ``fe80::1``)."""
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    return text.split("%", 1)[0]


def parse_network(text: str) -> Network:
    """An address or CIDR prefix as a network; raises ``ValueError`` with the reason."""
    try:
        network = ipaddress.ip_network(bare_address(text), strict=True)
    except ValueError:
        try:  # strict=False only also accepts host bits set: if it parses so, that was the fault
            loose = ipaddress.ip_network(bare_address(text), strict=False)
        except ValueError:
            raise ValueError(f"{text!r} is not an IP address or CIDR prefix") from None
        raise ValueError(f"{text!r} has host bits set; did you mean {loose}?") from None
    return unmap_network(network)
