"""An eavesdropper on the loopback interface: every IPv4 UDP datagram, as a packet socket sees it.

A packet socket (``AF_PACKET``) on ``lo`` receives a copy of every frame the kernel
sends through it, whatever the addresses: what an observer of the link would record.
It needs ``CAP_NET_RAW`` (root on the CI machine); :func:`capture_available` says
whether this process has it.
"""
from __future__ import annotations

import select
import socket
import struct
import threading
from dataclasses import dataclass

_ETH_P_ALL = 0x0003
_ETH_HEADER = 14
_IPV4 = 0x0800
_UDP = 17


def capture_available() -> bool:
    try:
        socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(_ETH_P_ALL)).close()
    except (AttributeError, PermissionError, OSError):
        return False
    return True


@dataclass(frozen=True)
class Datagram:
    source: tuple[str, int]
    destination: tuple[str, int]
    payload: bytes


class LoopbackCapture:
    """Records the UDP datagrams on ``lo`` whose source or destination port is in ``ports``."""

    def __init__(self, ports: range) -> None:
        self._ports = ports
        self._socket = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(_ETH_P_ALL))
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 * 1024 * 1024)
        self._socket.bind(("lo", 0))
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._datagrams: list[Datagram] = []
        self._thread = threading.Thread(target=self._run, name="loopback-capture", daemon=True)

    def __enter__(self) -> "LoopbackCapture":
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(5)
        self._socket.close()

    @property
    def datagrams(self) -> list[Datagram]:
        with self._lock:
            return list(self._datagrams)

    def _run(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._socket], [], [], 0.05)
            if not ready:
                continue
            frame, (_, _, packet_type, *_rest) = self._socket.recvfrom(65536 + _ETH_HEADER)
            if packet_type == socket.PACKET_OUTGOING:
                continue  # the same frame comes in once more on lo
            datagram = self._parse(frame)
            if datagram is not None:
                with self._lock:
                    self._datagrams.append(datagram)

    def _parse(self, frame: bytes) -> Datagram | None:
        if len(frame) < _ETH_HEADER + 28 or struct.unpack_from("!H", frame, 12)[0] != _IPV4:
            return None
        ip = frame[_ETH_HEADER:]
        header_length = (ip[0] & 0x0F) * 4
        if ip[9] != _UDP:
            return None
        source_port, destination_port, length = struct.unpack_from("!HHH", ip, header_length)
        if source_port not in self._ports and destination_port not in self._ports:
            return None
        payload = ip[header_length + 8:header_length + length]
        return Datagram((socket.inet_ntoa(ip[12:16]), source_port), (socket.inet_ntoa(ip[16:20]), destination_port),
                        bytes(payload))
