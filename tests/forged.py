"""Forged Aeron frames for hostile-traffic tests: what an attacker sends with a plain UDP
socket, no Aeron client and no handshake (the layouts: :mod:`aeron_py.echo.load.forged`)."""
from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

from aeron_py.echo.load.forged import DATA_TYPE, SETUP_TYPE, data_frame, setup_frame

__all__ = ["DATA_TYPE", "SETUP_TYPE", "data_frame", "raw_socket", "setup_frame"]


@contextmanager
def raw_socket(source: str) -> Iterator[socket.socket]:
    """A UDP socket whose datagrams leave from ``source`` (127.0.0.x)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((source, 0))
        yield s
