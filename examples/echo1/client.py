"""Echo 1.0 client: the guide's "A Client And Server (Take 1)", written with aeron_py.

Usage (the reference's positional form, plus named options)::

    python examples/echo1/client.py DIRECTORY LOCAL_ADDRESS LOCAL_PORT REMOTE_ADDRESS REMOTE_PORT
        [--count N] [--interval S] [--timeout S] [--seed N] [--verbose]
    python examples/echo1/client.py - 127.0.0.1 8000 127.0.0.1 9000 --count 5

``DIRECTORY`` is this process's embedded media driver ('-': a unique temporary one).
The client subscribes on ``LOCAL_ADDRESS:LOCAL_PORT`` (0: any port; the bound one is
announced), publishes to the server at ``REMOTE_ADDRESS:REMOTE_PORT``, sends
``HELLO <local port>``, then one random unsigned 32-bit decimal number every ``--interval``
seconds (default 1, as in the guide) and prints every response. Without ``--count`` it
runs until SIGINT/SIGTERM (exit 0). With ``--count N`` it stops after N numbers and exits
0 only if every one came back within ``--timeout`` seconds of being sent, 1 otherwise.
It also exits 1 when no server takes the HELLO within ``--timeout`` seconds.

Documented weaknesses of Echo 1.0, seen from the client (the server's docstring has the
full list), and how Echo 2.0 (``python -m aeron_py.echo_client``) fixes them:

- **The server connects back to the client, so NAT breaks it.** This client must be
  reachable on ``LOCAL_ADDRESS:LOCAL_PORT``: behind NAT or a firewall the replies never
  arrive. Echo 2.0 clients only connect out (multi-destination-cast), from ephemeral ports.
- **Spoofable, no authentication.** The HELLO just names a port; whoever can forge this
  client's source address can make the server stream to it, and nothing proves the
  replies come from the server this client asked. Echo 2.0 hands each client a private
  duologue whose session id only the HELLO's sender can decrypt.
- **Unbounded per-client resources.** The server allocates a publication for every
  HELLO, with no limit. Echo 2.0 limits clients in total and per IP, and expires unused
  duologues.
- **Bad messages are not reported.** A bad HELLO is never answered; the client just sees
  silence. Echo 2.0 replies ``ERROR <reason>`` and its client exits.
- **No detection of a missing or departed server.** The guide's client sends forever.
  Here ``--timeout`` bounds the HELLO and ``--count`` bounds the run; Echo 2.0 times out
  waiting for CONNECT and exits when its duologue goes away.
- **Sending is not robust; MTU handling is implicit.** A number that cannot be offered
  in time is reported and skipped (never retried later), and message length is unchecked.
"""
from __future__ import annotations

import argparse
import collections
import logging
import random
import sys
import time
from collections.abc import Iterable

from aeron_py import Aeron, AeronError, AeronTimeoutError, BackoffIdleStrategy
from aeron_py.channel import format_endpoint

# The wire constants and CLI/driver helpers are shared with the server (one source of truth).
# Run this file as a script: Python puts its directory first on sys.path.
from server import (
    STREAM_ID,
    address_argument,
    bound_endpoint,
    decode,
    emit,
    open_driver,
    port_argument,
    printable,
    stop_on_signals,
    udp_channel,
)

logger = logging.getLogger("echo1.client")


# ----------------------------------------------------------------- pure protocol functions


def hello_message(port: int) -> str:
    """The first message: ``HELLO <port>``, where the server must send its replies."""
    if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
        raise ValueError(f"HELLO port must be an int in [1, 65535], got {port!r}")
    return f"HELLO {port}"


def random_message(rng: random.Random) -> str:
    """One payload: a random unsigned 32-bit integer in decimal."""
    return str(rng.getrandbits(32))


def missing_echoes(sent: Iterable[str], responses: Iterable[str]) -> list[str]:
    """The sent messages not (yet) echoed, counting duplicates, in sending order."""
    unanswered = collections.Counter(responses)
    missing: list[str] = []
    for message in sent:
        if unanswered[message] > 0:
            unanswered[message] -= 1
        else:
            missing.append(message)
    return missing


# ----------------------------------------------------------------- the client


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="echo1-client", description="Echo 1.0 (the guide's Take 1) client over Aeron UDP.")
    parser.add_argument("directory", help="media driver directory ('-': a unique temporary one)")
    parser.add_argument("local_address", type=address_argument, help="address the server replies to")
    parser.add_argument("local_port", type=port_argument, help="UDP port the server replies to (0: any)")
    parser.add_argument("remote_address", type=address_argument, help="the server's address")
    parser.add_argument("remote_port", type=port_argument, help="the server's UDP port")
    parser.add_argument("--count", type=int, default=None, metavar="N",
                        help="send N numbers, then exit (default: run until SIGINT/SIGTERM)")
    parser.add_argument("--interval", type=float, default=1.0, metavar="S",
                        help="seconds between numbers (default 1)")
    parser.add_argument("--timeout", type=float, default=10.0, metavar="S",
                        help="how long to wait for the server to take the HELLO, and for each echo (default 10)")
    parser.add_argument("--seed", type=int, default=None, help="seed for the random numbers")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging on stderr")
    args = parser.parse_args(argv)
    if args.remote_port == 0:
        parser.error("remote_port must be the server's real port, not 0")
    if args.count is not None and args.count < 1:
        parser.error(f"--count must be at least 1, got {args.count}")
    if not args.interval >= 0:
        parser.error(f"--interval must be >= 0, got {args.interval}")
    if not args.timeout > 0:
        parser.error(f"--timeout must be positive, got {args.timeout}")
    return args


def run(aeron: Aeron, args: argparse.Namespace) -> int:
    """Take 1's client loop; returns the exit status."""
    stop = stop_on_signals()
    sub = aeron.add_subscription(udp_channel(format_endpoint(args.local_address, args.local_port)), STREAM_ID)
    bound = bound_endpoint(sub)
    local_port = int(bound.rpartition(":")[2])  # split at the LAST colon: '[::1]:8000' works too
    emit(f"subscription URI: {sub.channel} (bound to {bound})")
    pub = aeron.add_publication(udp_channel(format_endpoint(args.remote_address, args.remote_port)), STREAM_ID)
    emit(f"publication URI: {pub.channel}")

    hello = hello_message(local_port)
    try:
        pub.offer_until(hello.encode(), timeout=args.timeout)
    except AeronTimeoutError:
        print(f"echo1-client: no server took the HELLO at {pub.channel} within {args.timeout} s",
              file=sys.stderr)
        return 1
    emit(f"send: {hello}")

    rng = random.Random(args.seed)
    sent: list[str] = []
    responses: list[str] = []
    idle = BackoffIdleStrategy()
    next_send = time.monotonic()
    last_send = next_send
    while not stop.is_set():
        now = time.monotonic()
        if (args.count is None or len(sent) < args.count) and now >= next_send:
            message = random_message(rng)
            sent.append(message)  # a failed send then shows up as a missing echo
            try:
                pub.offer_until(message.encode(), timeout=min(args.timeout, 1.0))
                emit(f"send: {message}")
            except AeronError as error:
                emit(f"send failed: {message}: {error}")
            next_send, last_send = now + args.interval, now
        received: list[str] = []
        work = sub.poll(lambda data, header: received.append(decode(data)), 10)
        for response in received:
            emit(f"response: {printable(response)}")
        responses.extend(received)
        if args.count is not None and len(sent) >= args.count:
            if not missing_echoes(sent, responses):
                break
            if now - last_send >= args.timeout:
                break
        idle.idle(work)

    missing = missing_echoes(sent, responses)
    emit(f"echoed {len(sent) - len(missing)} of {len(sent)}")
    if args.count is not None and missing:
        print(f"echo1-client: no echo within {args.timeout} s for: {', '.join(missing)}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    try:
        with open_driver(args.directory) as driver, Aeron(driver=driver) as aeron:
            return run(aeron, args)
    except AeronError as error:
        print(f"echo1-client: {error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
