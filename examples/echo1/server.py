"""Echo 1.0 server: the guide's "A Client And Server (Take 1)", written with aeron_py.

Usage (the reference's positional form, plus named options)::

    python examples/echo1/server.py DIRECTORY LOCAL_ADDRESS LOCAL_PORT [--duration S] [--verbose]
    python examples/echo1/server.py - 127.0.0.1 9000

``DIRECTORY`` is where this process's embedded media driver lives; ``-`` picks a fresh,
unique directory under /dev/shm that is deleted on exit. ``LOCAL_PORT`` 0 lets the OS
choose (the chosen port is printed).

Protocol (the guide's Take 1, stream 0x2044F002, one UTF-8 string per Aeron message):

1. The server subscribes to ``aeron:udp?endpoint=LOCAL_ADDRESS:LOCAL_PORT|reliable=true``.
   Each client publication that connects appears as an image, identified by its session id.
2. A client's first message must be ``HELLO <port>`` (decimal). The server then opens a
   publication to ``<the image's source IP>:<port>`` -- it connects *back* to the client.
3. Every later message from that client is sent back, byte for byte, on that publication.

Documented weaknesses of Echo 1.0 (the guide's "Implementation Weaknesses", plus the threat
model it sets up for Take 2), and how Echo 2.0 (``python -m aeron_py.echo_server``) fixes each:

- **The server connects back to clients, so NAT breaks it.** Replies go to the client's IP
  on a port the client names; a client behind NAT (or a firewall) never receives them
  unless it forwards that port. Having the application protocol carry ports is also
  distasteful. Echo 2.0 uses multi-destination-cast (``control-mode=dynamic``): clients
  only ever connect *out* to the server, from ephemeral ports, and no port is chosen by
  the client.
- **Spoofable.** The reply address is the packet's source IP plus a port the message
  claims. Anyone who can forge UDP source addresses can make this server set up a stream
  towards a victim's address and port (reflection). Echo 2.0 never sends to an address
  taken from a message: its replies ride on channels the client itself connected to.
- **No authentication.** Any sender with any session is served; nothing ties the reply
  channel to the client that said HELLO. Echo 2.0 gives each client a private duologue
  whose session id is chosen by the server and sent encrypted with a one-time pad the
  client supplied in its HELLO, so other parties cannot join it.
- **Unbounded per-client resources.** Every image gets per-client state and, after HELLO,
  a publication with its own log buffers; there is no limit on clients, none per IP, and
  no expiry. Echo 2.0 caps clients in total and per IP address, and expires duologues
  that nobody connects to.
- **Clients sending bad messages are not killed.** A bad ``HELLO`` is only logged: the
  client is never told, and every later message is parsed as another (bad) ``HELLO``.
  Echo 2.0 answers ``ERROR bad message`` and closes the duologue; the client exits.
- **Message sending is not robust.** A reply that cannot be offered in time is logged
  and dropped, and while one reply is being retried no other client is served. Echo 2.0
  bounds every send and closes only the duologue that cannot take its reply.
- **MTU handling is implicit.** Nothing bounds message length. Echo 2.0 limits messages
  (1024 bytes by default) and treats longer ones as bad messages.
- **Clients do not notice a missing or departed server** (see ``client.py``). The Echo
  2.0 client gives up when no CONNECT arrives in time and exits on ERROR.

Work stays off Aeron's threads here: image callbacks (which run on the client conductor
thread) only put events on a queue, and the main loop does everything else.
"""
from __future__ import annotations

import argparse
import logging
import queue
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass
from types import FrameType
from typing import Final

from aeron_py import (
    Aeron,
    AeronError,
    BackoffIdleStrategy,
    ChannelUri,
    ChannelUriError,
    Image,
    MediaDriver,
    Publication,
    Subscription,
)
from aeron_py.channel import format_endpoint, split_endpoint

logger = logging.getLogger("echo1.server")

#: The stream id the guide picked for every Echo channel.
STREAM_ID: Final = 0x2044F002
#: Term length for this example's channels: 64 KiB (Aeron's minimum) is plenty for echoes.
TERM_LENGTH: Final = 64 * 1024

_HELLO_RE: Final = re.compile(r"HELLO ([0-9]{1,5})")  # [0-9], not \d: no Unicode digits


class HelloError(ValueError):
    """A client's first message is not a valid ``HELLO <port>``."""


# ----------------------------------------------------------------- pure protocol functions


def decode(data: bytes) -> str:
    """One message as text: UTF-8, invalid sequences replaced by U+FFFD."""
    return data.decode("utf-8", errors="replace")


def printable(text: str, limit: int = 200) -> str:
    """``text`` safe for one log line: control and non-ASCII characters escaped, long text cut."""
    escaped = text.encode("unicode_escape").decode("ascii")
    return escaped if len(escaped) <= limit else escaped[:limit] + "..."


def parse_hello(message: str) -> int:
    """The port of a ``HELLO <port>`` message (the whole message, one space, port in [1, 65535])."""
    match = _HELLO_RE.fullmatch(message)
    if match is None:
        raise HelloError(f"expected 'HELLO <port>', got '{printable(message, 60)}'")
    port = int(match.group(1))
    if not 1 <= port <= 65535:
        raise HelloError(f"HELLO port {port} is not in [1, 65535]")
    return port


def reply_endpoint(source_identity: str, port: int) -> str:
    """Where to reply: the IP of ``source_identity`` ('ip:port' / '[v6]:port') with ``port``."""
    host, _source_port = split_endpoint(source_identity)
    return format_endpoint(host, port)


def udp_channel(endpoint: str) -> str:
    """The reliable unicast channel the guide builds for ``endpoint`` ('host:port')."""
    return str(ChannelUri.udp(endpoint, reliable=True))


# ----------------------------------------------------------------- shared CLI and driver glue


def port_argument(text: str) -> int:
    """argparse type: a UDP port in [0, 65535] (0: let the OS choose)."""
    if not re.fullmatch(r"[0-9]{1,5}", text) or int(text) > 65535:
        raise argparse.ArgumentTypeError(f"port must be a number in [0, 65535], got {text!r}")
    return int(text)


def address_argument(text: str) -> str:
    """argparse type: an IPv4/IPv6 address or host name usable in a channel URI."""
    try:
        format_endpoint(text, 0)
    except ChannelUriError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return text


def open_driver(directory: str) -> MediaDriver:
    """This process's embedded media driver in ``directory`` ('-': a unique, temporary one)."""
    if directory == "-":
        return MediaDriver(term_buffer_length=TERM_LENGTH)
    return MediaDriver(directory, term_buffer_length=TERM_LENGTH)


def bound_endpoint(subscription: Subscription, timeout: float = 5.0) -> str:
    """The 'host:port' a UDP subscription is bound to (the real port when 0 was asked for)."""
    idle = BackoffIdleStrategy()
    deadline = time.monotonic() + timeout
    while not (endpoint := subscription.resolved_endpoint()):
        if time.monotonic() >= deadline:
            raise AeronError(f"{subscription.channel}: no bound address after {timeout} s")
        idle.idle(0)
    return endpoint


def emit(text: str) -> None:
    """One line of the program's visible output (stdout, flushed at once)."""
    print(text, flush=True)


def stop_on_signals() -> threading.Event:
    """An event set by SIGINT or SIGTERM, so the main loop can close everything cleanly."""
    stop = threading.Event()

    def handler(signum: int, _frame: FrameType | None) -> None:
        logger.debug("signal %d: stopping", signum)
        stop.set()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
    return stop


# ----------------------------------------------------------------- the server


@dataclass
class ServerClient:
    """Per-client state: INITIAL until a good HELLO, then CONNECTED with a reply publication."""

    session_id: int
    source_identity: str
    reply: Publication | None = None

    @property
    def connected(self) -> bool:
        return self.reply is not None


class EchoServer:
    """Take 1's server: one subscription in, one publication back to each client."""

    def __init__(self, aeron: Aeron, endpoint: str, *, send_timeout: float = 1.0) -> None:
        self._aeron = aeron
        self._send_timeout = send_timeout
        self._clients: dict[int, ServerClient] = {}
        self._events: queue.SimpleQueue[tuple[str, int, str]] = queue.SimpleQueue()
        self.subscription: Subscription = aeron.add_subscription(
            udp_channel(endpoint), STREAM_ID,
            on_available_image=lambda image: self._queue_event("connected", image),
            on_unavailable_image=lambda image: self._queue_event("disconnected", image))

    def _queue_event(self, kind: str, image: Image) -> None:
        # Runs on the client conductor thread: record the event and return at once.
        self._events.put((kind, image.session_id, image.source_identity))

    @property
    def client_count(self) -> int:
        return len(self._clients)

    def do_work(self) -> int:
        """One duty cycle: handle received messages, then image events. Returns the work done."""
        received: list[tuple[int, bytes]] = []
        work = self.subscription.poll(lambda data, header: received.append((header.session_id, data)), 10)
        for session_id, data in received:
            self._on_message(session_id, data)
        while True:
            try:
                kind, session_id, source = self._events.get_nowait()
            except queue.Empty:
                break
            work += 1
            if kind == "connected":
                emit(f"client connected: session {session_id} from {source}")
            else:
                self._on_disconnected(session_id)
        return work

    def _client(self, session_id: int) -> ServerClient | None:
        client = self._clients.get(session_id)
        if client is None:
            # A message can arrive before its image's "connected" event is drained, so the
            # source comes from the image itself.
            image = self.subscription.image_by_session_id(session_id)
            if image is None:
                logger.warning("message from session %d, which has no image: ignored", session_id)
                return None
            with image:
                client = ServerClient(session_id, image.source_identity)
            self._clients[session_id] = client
        return client

    def _on_message(self, session_id: int, data: bytes) -> None:
        client = self._client(session_id)
        if client is None:
            return
        message = decode(data)
        emit(f"receive [{session_id}]: {printable(message)}")
        if client.connected:
            self._echo(client, data, message)
        else:
            self._on_hello(client, message)

    def _on_hello(self, client: ServerClient, message: str) -> None:
        try:
            endpoint = reply_endpoint(client.source_identity, parse_hello(message))
            channel = udp_channel(endpoint)
            client.reply = self._aeron.add_publication(channel, STREAM_ID)
        except (HelloError, ChannelUriError, AeronError) as error:
            # Weakness kept from the guide: the client is never told and stays INITIAL.
            emit(f"bad HELLO from session {client.session_id}: {error}")
            return
        emit(f"session {client.session_id}: replying on {channel}")

    def _echo(self, client: ServerClient, data: bytes, message: str) -> None:
        assert client.reply is not None
        try:
            client.reply.offer_until(data, timeout=self._send_timeout)
        except AeronError as error:
            # Weakness kept from the guide: a reply that cannot be sent is dropped.
            emit(f"send failed [{client.session_id}]: {error}")
            return
        emit(f"send [{client.session_id}]: {printable(message)}")

    def _on_disconnected(self, session_id: int) -> None:
        client = self._clients.pop(session_id, None)
        if client is not None and client.reply is not None:
            client.reply.close()
        emit(f"client disconnected: session {session_id}")

    def close(self) -> None:
        """Close every reply publication and the subscription."""
        for client in self._clients.values():
            if client.reply is not None:
                client.reply.close()
        self._clients.clear()
        self.subscription.close()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="echo1-server", description="Echo 1.0 (the guide's Take 1) server over Aeron UDP.")
    parser.add_argument("directory", help="media driver directory ('-': a unique temporary one)")
    parser.add_argument("local_address", type=address_argument, help="address to receive on, e.g. 127.0.0.1")
    parser.add_argument("local_port", type=port_argument, help="UDP port to receive on (0: any)")
    parser.add_argument("--duration", type=float, default=None, metavar="S",
                        help="stop after S seconds (default: run until SIGINT/SIGTERM)")
    parser.add_argument("--send-timeout", type=float, default=1.0, metavar="S",
                        help="give up on one reply after S seconds (default 1)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    args = parser.parse_args(argv)
    for name in ("duration", "send_timeout"):
        value = getattr(args, name)
        if value is not None and not value > 0:
            parser.error(f"--{name.replace('_', '-')} must be positive, got {value}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    stop = stop_on_signals()
    deadline = None if args.duration is None else time.monotonic() + args.duration
    try:
        with open_driver(args.directory) as driver, Aeron(driver=driver) as aeron:
            server = EchoServer(aeron, format_endpoint(args.local_address, args.local_port),
                                send_timeout=args.send_timeout)
            emit(f"listening on {udp_channel(bound_endpoint(server.subscription))} "
                 f"(driver {driver.dir})")
            idle = BackoffIdleStrategy()
            try:
                while not stop.is_set() and (deadline is None or time.monotonic() < deadline):
                    idle.idle(server.do_work())
            finally:
                server.close()
    except AeronError as error:
        print(f"echo1-server: {error}", file=sys.stderr)
        return 1
    emit("server stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
