"""Helpers for the Echo 2.0 integration tests: port blocks, servers, a raw protocol peer.

Every test module takes ports from its own range (below the kernel's ephemeral range,
which starts at 32768) in blocks that are checked free before use, so lingering ports
of an earlier test never clash with a later one.
"""
from __future__ import annotations

import re
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from aeron_py import Aeron, ChannelUri, MediaDriver
from aeron_py.echo import STREAM_ID, session_from_crypt
from aeron_py.duologue.client_channels import publication_channel
from aeron_py.duologue.server import DuologueServer, ServerOptions
from aeron_py.echo.server import echo_server
from aeron_py.duologue.core.contract import ServerConfig
from conftest import wait_until  # noqa: F401  (re-exported for the echo tests)

HOST = "127.0.0.1"


def udp_port_free(port: int, host: str = HOST) -> bool:
    """True when ``host:port`` can be bound for UDP right now."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


@dataclass(frozen=True)
class Ports:
    """One server's ports: all-clients ``port``/``control`` and duologue ``base``."""

    port: int
    control: int
    base: int


class PortBlocks:
    """Hands out disjoint, currently free port blocks from ``[start, stop)``."""

    def __init__(self, start: int, stop: int, size: int = 40) -> None:
        assert 20000 <= start < stop <= 32768, "keep test ports in [20000, 32768)"
        self._next, self._stop, self._size = start, stop, size

    def take(self, clients: int = 8) -> Ports:
        needed = 10 + 2 * clients
        assert needed <= self._size, f"block of {self._size} ports too small for {clients} clients"
        while self._next + self._size <= self._stop:
            first = self._next
            self._next += self._size
            if all(udp_port_free(p) for p in (first, first + 1, *range(first + 10, first + needed))):
                return Ports(first, first + 1, first + 10)
        raise RuntimeError("test port range exhausted")


def make_server(ports: Ports, clients: int = 8, *, start: bool = True, options: dict[str, Any] | None = None,
                **config: Any) -> DuologueServer:
    """An :class:`DuologueServer` on ``ports`` (started unless ``start=False``); ``options``
    go to :class:`ServerOptions`, keywords to :class:`ServerConfig`."""
    glue = {"address": HOST, **(options or {})}
    server = echo_server(ServerConfig(max_clients=clients, clients_base_port=ports.base, **config),
                        ServerOptions(port=ports.port, control_port=ports.control, **glue))
    return server.start() if start else server


def wait_idle(server: DuologueServer, timeout: float = 5.0) -> None:
    """Wait until the server holds no duologue and no channel (all resources returned)."""
    def idle() -> bool:
        s = server.stats
        return (s.duologues, s.ports_in_use, s.sessions_in_use, s.source_keys, server.channel_count) == (0, 0, 0, 0, 0)
    wait_until(idle, timeout, f"server to return every resource (stats {server.stats})")


CONNECT_RE = re.compile(rb"(-?[0-9]+) CONNECT ([0-9]+) ([0-9]+) ([0-9A-F]+)")


@dataclass(frozen=True)
class Handshake:
    """What a CONNECT told a raw peer."""

    initial_pub: Any
    broadcast_sub: Any
    data_port: int
    control_port: int
    session: int


class RawPeer:
    """A hand-driven Echo 2.0 peer on plain aeron_py channels (own embedded driver)."""

    def __init__(self, ports: Ports, term_length: int = 64 * 1024) -> None:
        self.ports = ports
        self.driver = MediaDriver(publication_linger_timeout_ns=0, term_buffer_length=term_length)
        self.aeron = Aeron(driver=self.driver)
        self._resources: list[Any] = []

    def publication(self, port: int, session_id: int | None = None, interface: str | None = None) -> Any:
        """An exclusive publication to ``HOST:port`` (sent from ``interface`` if given)."""
        uri, destination = publication_channel(HOST, port, session_id=session_id, interface=interface)
        pub = self.aeron.add_exclusive_publication(uri, STREAM_ID)
        self._resources.append(pub)
        if destination is not None:
            pub.add_destination(destination)
        return pub

    def keep(self, resource: Any) -> None:
        """Close ``resource`` (a publication or subscription made here) with the peer."""
        self._resources.append(resource)

    def subscription(self, control_port: int, session_id: int | None = None) -> Any:
        sub = self.aeron.add_subscription(ChannelUri.udp(
            control=(HOST, control_port), control_mode="dynamic", reliable=True, session_id=session_id), STREAM_ID)
        self._resources.append(sub)
        return sub

    def initial(self, interface: str | None = None) -> tuple[Any, Any]:
        """The initial publication and broadcast subscription, connected."""
        pub = self.publication(self.ports.port, interface=interface)
        sub = self.subscription(self.ports.control)
        wait_until(lambda: pub.is_connected and sub.is_connected, 5, "initial channels to connect")
        return pub, sub

    @staticmethod
    def send(pub: Any, data: bytes, timeout: float = 5.0) -> None:
        wait_until(lambda: pub.offer(data) > 0, timeout, f"offer of {data[:40]!r}")

    @staticmethod
    def receive(sub: Any, match: Callable[[bytes], bool], timeout: float = 5.0) -> bytes:
        """The first message on ``sub`` for which ``match`` is true (others are dropped)."""
        found: list[bytes] = []

        def poll() -> bool:
            found.extend(m for m in sub.poll_batch(10) if match(m))
            return bool(found)

        wait_until(poll, timeout, "a matching message")
        return found[0]

    @staticmethod
    def silent(sub: Any, seconds: float) -> list[bytes]:
        """Everything ``sub`` receives during ``seconds`` (used to assert silence)."""
        got: list[bytes] = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            got.extend(sub.poll_batch(10))
            time.sleep(0.01)
        return got

    def reply_to(self, sub: Any, pub: Any, timeout: float = 5.0) -> bytes:
        """The next broadcast addressed to ``pub``'s session (signed decimal prefix)."""
        prefix = f"{pub.session_id} ".encode()
        return self.receive(sub, lambda m: m.startswith(prefix), timeout)

    def handshake(self, key: int = 0x611786D9, interface: str | None = None) -> Handshake:
        """HELLO -> CONNECT (asserting its form); the session comes from the crypt."""
        pub, sub = self.initial(interface)
        self.send(pub, f"HELLO {key:X}".encode())
        reply = self.reply_to(sub, pub)
        match = CONNECT_RE.fullmatch(reply)
        assert match is not None, f"expected CONNECT, got {reply!r}"
        assert match.group(1) == str(pub.session_id).encode()  # signed decimal of the initial session
        session = session_from_crypt(key, int(match.group(4), 16))
        return Handshake(pub, sub, int(match.group(2)), int(match.group(3)), session)

    def open_duologue(self, hs: Handshake, interface: str | None = None) -> tuple[Any, Any]:
        """The duologue publication and subscription of ``hs``, connected."""
        pub = self.publication(hs.data_port, hs.session, interface)
        sub = self.subscription(hs.control_port, hs.session)
        wait_until(lambda: pub.is_connected and sub.is_connected, 5, "duologue channels to connect")
        return pub, sub

    def close(self) -> None:
        for resource in reversed(self._resources):
            resource.close()
        self.aeron.close()
        self.driver.close()


@contextmanager
def raw_peer(ports: Ports, term_length: int = 64 * 1024) -> Iterator[RawPeer]:
    """A :class:`RawPeer` whose publications use ``term_length`` (16 MiB: a stock client's)."""
    peer = RawPeer(ports, term_length)
    try:
        yield peer
    finally:
        peer.close()
