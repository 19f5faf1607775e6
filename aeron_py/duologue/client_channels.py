"""A duologue client's channels: the URIs of its publications, and the address a server sees.

:func:`publication_channel` makes a client publication's URI, sending from a chosen local
address through a manual-MDC publication when ``interface`` is given (Aeron's own
``interface=`` only accepts addresses configured on a network interface); :func:`source_ip`
is the address the server will count the client under.
"""
from __future__ import annotations

import socket

from ..channel import ChannelUri

__all__ = ["DEFAULT_TERM_LENGTH", "publication_channel", "source_ip"]

#: Term length of a client's publications (Aeron's minimum; messages are <= 1 KiB).
DEFAULT_TERM_LENGTH = 64 * 1024


def publication_channel(address: str, port: int, *, session_id: int | None = None, interface: str | None = None,
                        term_length: int | None = None) -> tuple[ChannelUri, ChannelUri | None]:
    """A client publication to ``address:port``: its URI, and the destination to add to
    it when it sends from ``interface`` (a manual-MDC publication)."""
    if interface is None:
        return ChannelUri.udp(endpoint=(address, port), reliable=True, session_id=session_id,
                              term_length=term_length), None
    uri = ChannelUri.udp(control=(interface, 0), control_mode="manual", reliable=True, session_id=session_id,
                         term_length=term_length)
    return uri, ChannelUri.udp(endpoint=(address, port))



def source_ip(address: str, port: int, interface: str | None = None) -> str:
    """The address a server at ``address:port`` sees: ``interface``, else the kernel's route choice."""
    if interface is not None:
        return interface
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as probe:  # connect() sends nothing
        probe.connect((address, port))
        return str(probe.getsockname()[0])
