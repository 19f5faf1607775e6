"""A UDP man in the middle on loopback, for secure-transport tests: a publication sends to the
relay's port, the relay forwards to the subscription's endpoint and carries the replies (status
messages, NAKs) back, recording every datagram both ways, dropping a share of them if asked
(loss), and injecting datagrams of a test's making as if from either side. Real sockets,
one thread, bounded: the capture keeps at most ``max_capture`` datagrams."""
from __future__ import annotations

import random
import select
import socket
import threading
from types import TracebackType

UP, DOWN = "up", "down"  # publication -> subscription, and back


class UdpRelay:
    def __init__(self, upstream: tuple[str, int], *, host: str = "127.0.0.1", loss: float = 0.0, seed: int = 7,
                 max_capture: int = 200_000) -> None:
        self.upstream = upstream
        self.loss = loss
        self.captured: list[tuple[str, bytes]] = []
        self.dropped = {UP: 0, DOWN: 0}
        self._random = random.Random(seed)
        self._max_capture = max_capture
        self._front = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # the publication's side
        self._front.bind((host, 0))
        self._back = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)   # the subscription's side
        self._back.bind((host, 0))
        self.port = self._front.getsockname()[1]
        self._publisher: tuple[str, int] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="udp-relay", daemon=True)

    def __enter__(self) -> "UdpRelay":
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5.0)
        self._front.close()
        self._back.close()

    def datagrams(self, direction: str) -> list[bytes]:
        with self._lock:
            return [data for d, data in self.captured if d == direction]

    def inject_up(self, datagram: bytes) -> None:
        """Send to the subscription's endpoint from the relay (where the publication's come from)."""
        self._back.sendto(datagram, self.upstream)

    def inject_down(self, datagram: bytes) -> None:
        """Send to the publication from the relay's front port (where status messages come from)."""
        if self._publisher is None:
            raise RuntimeError("the publication has not sent anything through the relay yet")
        self._front.sendto(datagram, self._publisher)

    def _run(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self._front, self._back], [], [], 0.05)
            for sock in ready:
                try:
                    data, source = sock.recvfrom(65536)
                except OSError:
                    continue
                if sock is self._front:
                    self._publisher = source
                    self._forward(UP, data, self._back, self.upstream)
                elif self._publisher is not None:
                    self._forward(DOWN, data, self._front, self._publisher)

    def _forward(self, direction: str, data: bytes, out: socket.socket, to: tuple[str, int]) -> None:
        with self._lock:
            if len(self.captured) < self._max_capture:
                self.captured.append((direction, data))
        if self.loss and self._random.random() < self.loss:
            self.dropped[direction] += 1
            return
        try:
            out.sendto(data, to)
        except OSError:
            pass
