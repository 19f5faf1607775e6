"""Echo over response channels: one request channel in, one response control port out, many clients.

Aeron's response channels (``control-mode=response``) let a server answer each client on
its own stream without a port per client, which is what Echo 2.0 spends two ports per
duologue on. The pattern:

* the server subscribes to the **request channel** (``aeron:udp?endpoint=HOST:PORT``);
* each client subscribes to a **response subscription**
  (``aeron:udp?control=HOST:CONTROL|control-mode=response``) and publishes its requests
  with ``response-correlation-id=<that subscription's registration id>``;
* for each client image on the request channel the server opens a **response
  publication** (``aeron:udp?control=HOST:CONTROL|control-mode=response|
  response-correlation-id=<the image's correlation id>``): the driver routes it to that
  client's response subscription only, through the one control port.

Run it (one process, its own embedded driver, loopback only)::

    python examples/echo_response_channels.py --clients 8 --messages 100
    python examples/echo_response_channels.py --media ipc

It prints each client's round-trip p50 and exits 0 when every client got back exactly its
own messages, in order; 1 otherwise. The docs' tutorial walks through it.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from aeron_py import Aeron, BackoffIdleStrategy, ChannelUri, Image, MediaDriver

REQUEST_STREAM, RESPONSE_STREAM = 1001, 1002


@dataclass
class Endpoints:
    """Where the server listens: the request channel and the response control port (UDP), or IPC."""

    media: str = "udp"
    host: str = "127.0.0.1"
    request_port: int = 40821
    control_port: int = 40822

    def request_subscription(self) -> ChannelUri:
        return ChannelUri.ipc() if self.media == "ipc" else ChannelUri.udp(endpoint=(self.host, self.request_port))

    def request_publication(self, response_subscription_id: int) -> ChannelUri:
        if self.media == "ipc":
            return ChannelUri.ipc(response_correlation_id=response_subscription_id)
        return ChannelUri.udp(endpoint=(self.host, self.request_port), response_correlation_id=response_subscription_id)

    def response_subscription(self) -> ChannelUri:
        if self.media == "ipc":
            return ChannelUri.ipc(control_mode="response")
        return ChannelUri.udp(control=(self.host, self.control_port), control_mode="response")

    def response_publication(self, image_correlation_id: int) -> ChannelUri:
        if self.media == "ipc":
            return ChannelUri.ipc(control_mode="response", response_correlation_id=image_correlation_id)
        return ChannelUri.udp(control=(self.host, self.control_port), control_mode="response",
                              response_correlation_id=image_correlation_id)


class EchoResponseServer:
    """Answers each request on its client's response publication (made when the client's image comes)."""

    def __init__(self, aeron: Aeron, endpoints: Endpoints) -> None:
        self._aeron, self._endpoints = aeron, endpoints
        self._arrived: list[Image] = []  # image snapshots from the callbacks, handled in step()
        self._left: list[Image] = []
        self._responses: dict[int, Any] = {}  # client image session id -> its response publication
        self.subscription = aeron.add_subscription(
            endpoints.request_subscription(), REQUEST_STREAM,
            on_available_image=self._arrived.append, on_unavailable_image=self._left.append)

    @property
    def clients(self) -> int:
        return len(self._responses)

    def step(self) -> int:
        """Open and close response publications as clients come and go, then echo what arrived."""
        while self._arrived:
            image = self._arrived.pop()
            uri = self._endpoints.response_publication(image.correlation_id)
            self._responses[image.session_id] = self._aeron.add_exclusive_publication(uri, RESPONSE_STREAM)
        while self._left:
            publication = self._responses.pop(self._left.pop().session_id, None)
            if publication is not None:
                publication.close()
        return self.subscription.poll(self._echo, 10)

    def _echo(self, data: bytes, header: Any) -> None:
        publication = self._responses.get(header.session_id)
        if publication is not None:  # always, once run() saw every client connected both ways
            publication.offer_until(data, timeout=5)


@dataclass
class EchoResponseClient:
    """One client: its response subscription, and requests that name it."""

    aeron: Aeron
    endpoints: Endpoints
    name: str
    received: list[bytes] = field(default_factory=list)
    rtts: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.responses = self.aeron.add_subscription(self.endpoints.response_subscription(), RESPONSE_STREAM)
        self.requests = self.aeron.add_exclusive_publication(
            self.endpoints.request_publication(self.responses.registration_id), REQUEST_STREAM)

    @property
    def connected(self) -> bool:
        return self.requests.is_connected and self.responses.is_connected

    def round_trip(self, server: EchoResponseServer, message: bytes, timeout: float = 5.0) -> None:
        sent = time.monotonic()
        self.requests.offer_until(message, timeout=timeout)
        idle = BackoffIdleStrategy(max_park_ns=100_000)
        deadline = sent + timeout
        before = len(self.received)
        while len(self.received) == before:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{self.name}: no answer to {message!r} within {timeout} s")
            idle.idle(server.step() + self.responses.poll(lambda data, header: self.received.append(data), 10))
        self.rtts.append(time.monotonic() - sent)


def run(endpoints: Endpoints, clients: int, messages: int, timeout: float = 10.0) -> dict[str, list[bytes]]:
    """Start a driver, the server and ``clients`` clients; each sends ``messages`` requests
    and waits for each answer. Returns what every client received."""
    with MediaDriver() as driver, Aeron(driver=driver) as aeron:
        server = EchoResponseServer(aeron, endpoints)
        everyone = [EchoResponseClient(aeron, endpoints, f"client-{i}") for i in range(clients)]
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)
        deadline = time.monotonic() + timeout
        while not (server.clients == clients and all(c.connected for c in everyone)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{server.clients}/{clients} clients connected within {timeout} s")
            idle.idle(server.step())
        for n in range(messages):
            for client in everyone:
                client.round_trip(server, f"{client.name} #{n}".encode())
        for client in everyone:
            print(f"{client.name}: {len(client.received)} echoes, rtt p50 "
                  f"{statistics.median(client.rtts) * 1e6:.0f} us", flush=True)
        return {client.name: client.received for client in everyone}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Echo over Aeron response channels: many clients, one response port.")
    p.add_argument("--clients", type=int, default=4, help="clients at once (4)")
    p.add_argument("--messages", type=int, default=10, help="round trips per client (10)")
    p.add_argument("--media", choices=("udp", "ipc"), default="udp", help="UDP on loopback, or IPC (udp)")
    p.add_argument("--port", type=int, default=40821, help="the request channel's port (40821)")
    p.add_argument("--control-port", type=int, default=40822, help="the response control port (40822)")
    args = p.parse_args(argv)
    if args.clients < 1 or args.messages < 1:
        p.error("--clients and --messages must be >= 1")
    endpoints = Endpoints(args.media, request_port=args.port, control_port=args.control_port)
    received = run(endpoints, args.clients, args.messages)
    expected = {name: [f"{name} #{n}".encode() for n in range(args.messages)] for name in received}
    if received != expected:
        print("some client got another client's answer, or lost one", file=sys.stderr)
        return 1
    print(f"OK: {args.clients} clients x {args.messages} echoes, each answered on its own response stream")
    return 0


if __name__ == "__main__":
    sys.exit(main())
