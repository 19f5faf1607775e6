"""Forged Aeron frames for hostile-traffic tests: what an attacker sends with a plain UDP
socket, no Aeron client and no handshake (layouts from Aeron's aeron_udp_protocol.h)."""
from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from contextlib import contextmanager

SETUP_TYPE, DATA_TYPE = 0x05, 0x01


def setup_frame(session_id: int, stream_id: int, term_length: int, initial_term_id: int = 7) -> bytes:
    """A 40-byte SETUP: frame header (length, version, flags, type) + setup fields."""
    return struct.pack("<iBBhiiiiiiii", 40, 0, 0, SETUP_TYPE, 0, session_id, stream_id, initial_term_id,
                       initial_term_id, term_length, 1408, 0)


def data_frame(session_id: int, term_id: int, term_offset: int, payload: bytes, stream_id: int) -> bytes:
    """A DATA frame (begin+end flags) carrying ``payload`` at ``term_offset``."""
    header = struct.pack("<iBBhiiiiq", 32 + len(payload), 0, 0xC0, DATA_TYPE, term_offset, session_id, stream_id,
                         term_id, 0)
    return header + payload


@contextmanager
def raw_socket(source: str) -> Iterator[socket.socket]:
    """A UDP socket whose datagrams leave from ``source`` (127.0.0.x)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind((source, 0))
        yield s
