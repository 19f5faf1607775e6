#!/usr/bin/env python3
"""A key-value service on the duologue layer: the second application, after Echo 2.0.

Each client holds a duologue with the server and sends one-line requests; the store is
shared by all clients and bounded. Written only against the public API
(:mod:`aeron_py.duologue`); the tutorial is ``docs/tutorial/duologue.md``.

Requests and replies (UTF-8, one message each):

    SET <key> <value>   ->  OK            (FULL when the store holds --max-keys keys)
    GET <key>           ->  VALUE <value> | NONE
    DEL <key>           ->  OK | NONE
    anything else       ->  ERROR bad message, and the duologue closes

Run the server, then talk to it:

    python examples/kv_service.py serve --port 40300 --control-port 40301 --base-port 40310
    python examples/kv_service.py call --port 40300 --control-port 40301 "SET colour blue" "GET colour"
"""
from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
from collections.abc import Sequence

from aeron_py.duologue import CloseReason, Duologue, DuologueServer, ServerConfig, ServerOptions, connect

logger = logging.getLogger("kv_service")

MAX_KEY = 64
MAX_VALUE = 512


class KeyValueStore:
    """The application: a bounded dict, one request per message, answered at once."""

    def __init__(self, max_keys: int = 10_000) -> None:
        self.max_keys = max_keys
        self.data: dict[str, str] = {}
        self.requests = 0

    def received(self, duologue: Duologue, data: bytes) -> None:
        reply = self.answer(data)
        if reply is None:
            duologue.reject()  # ERROR bad message, then close: the layer's rule for nonsense
        else:
            self.requests += 1
            duologue.send(reply)

    def closed(self, duologue: Duologue, reason: CloseReason) -> None:
        logger.info("duologue %d of %s closed: %s", duologue.session_id, duologue.peer_ip, reason.value)

    def answer(self, data: bytes) -> bytes | None:
        """The reply to one request, or None when it is not one."""
        try:
            verb, _, rest = data.decode("utf-8").partition(" ")
        except UnicodeDecodeError:
            return None
        key, _, value = rest.partition(" ")
        if not key or len(key) > MAX_KEY or len(value) > MAX_VALUE:
            return None
        if verb == "SET" and value:
            if key not in self.data and len(self.data) >= self.max_keys:
                return b"FULL"
            self.data[key] = value
            return b"OK"
        if verb == "GET" and not value:
            found = self.data.get(key)
            return b"NONE" if found is None else f"VALUE {found}".encode()
        if verb == "DEL" and not value:
            return b"OK" if self.data.pop(key, None) is not None else b"NONE"
        return None


def serve(args: argparse.Namespace) -> int:
    store = KeyValueStore(args.max_keys)
    config = ServerConfig(max_clients=args.clients, clients_base_port=args.base_port, max_per_ip=args.max_per_ip)
    options = ServerOptions(address=args.address, port=args.port, control_port=args.control_port)
    server = DuologueServer(store, config, options)
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with server:
        print(f"READY {args.address} {args.port} {args.control_port}", flush=True)
        stop.wait()
    print(f"served {store.requests} requests, {len(store.data)} keys", flush=True)
    return 0


def call(args: argparse.Namespace) -> int:
    with connect(args.address, args.port, args.control_port, timeout=args.timeout,
                 interface=args.interface) as duologue:
        for request in args.requests:
            duologue.send(request.encode())
            reply = duologue.receive(timeout=args.timeout)
            print(f"{request} -> {reply.decode() if reply is not None else '(no reply)'}", flush=True)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description="A key-value service on aeron_py's duologue layer.")
    sub = p.add_subparsers(dest="command", required=True)
    for name, what in (("serve", "run the server until Ctrl-C"), ("call", "send requests, print the replies")):
        c = sub.add_parser(name, help=what, description=what)
        c.add_argument("--address", default="127.0.0.1", help="the server's address (127.0.0.1)")
        c.add_argument("--port", type=int, default=40300, help="all-clients data port (40300)")
        c.add_argument("--control-port", type=int, default=40301, help="all-clients control port (40301)")
        c.add_argument("--log-level", default="WARNING", help="logging level (WARNING)")
    serve_p, call_p = sub.choices["serve"], sub.choices["call"]
    serve_p.add_argument("--base-port", type=int, default=40310, help="first duologue port (40310)")
    serve_p.add_argument("--clients", type=int, default=64, help="duologues at once (64)")
    serve_p.add_argument("--max-per-ip", type=int, default=3, help="duologues per source address (3)")
    serve_p.add_argument("--max-keys", type=int, default=10_000, help="keys the store holds at most (10000)")
    call_p.add_argument("--interface", help="local address to send from (e.g. 127.0.0.2)")
    call_p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for each step (10)")
    call_p.add_argument("requests", nargs="+", help='requests, e.g. "SET colour blue" "GET colour"')
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(levelname)s %(name)s: %(message)s")
    return serve(args) if args.command == "serve" else call(args)


if __name__ == "__main__":
    sys.exit(main())
