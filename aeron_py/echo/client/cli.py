"""Echo 2.0 client command line.

    python -m aeron_py.echo_client ADDRESS PORT CONTROL_PORT [--count N] [--interval S]
                                   [--timeout S] [--message TEXT] [--interface IP]
    python -m aeron_py.echo_client DIR ADDRESS PORT CONTROL_PORT ...   # io7m take2 form
    python -m aeron_py.echo_client ADDRESS PORT CONTROL_PORT --asyncio [--uvloop]

``--asyncio`` runs the same protocol on an event loop (:mod:`aeron_py.echo.client.async_client`
over :mod:`aeron_py.asyncio`); ``--uvloop`` uses uvloop's loop (``pip install uvloop``).

    python -m aeron_py.echo_client ADDRESS PORT CONTROL_PORT --secure [--server-key KEY]

``--secure`` talks to a server in secure mode (docs/spec/echo2.md §5): the server's
key is ``--server-key``, else the one ``--known-servers`` recorded, else the one the
server sends, which is then recorded (trust on first use, as ssh's known_hosts).

Exit status: 0 when every echo came back equal; 1 when the server answered ERROR
(its reason is printed on stderr); 3 on timeout or any other failure; 4 when secure
mode could not authenticate the server (wrong pinned key, a key that differs from the
recorded one, or an unknown key with --no-trust-on-first-use); 2 for bad arguments.
"""
from __future__ import annotations

import argparse
import asyncio
import importlib
import logging
import sys
from collections.abc import Sequence
from typing import Any

from ...duologue.core.secure_hello import SecureReason, b64url_decode
from ...duologue.keys import DEFAULT_KNOWN_SERVERS, KnownServers, key_option_argv
from ...duologue.client_security import ClientSecurity, ServerKeyRefused
from .common import EXIT_AUTHENTICATION, EXIT_FAILED, EchoResult
from .sync import EchoClient


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m aeron_py.echo_client", description="Echo 2.0 client over Aeron.")
    p.add_argument("positional", nargs="+", metavar="ARG",
                   help="ADDRESS PORT CONTROL_PORT, or DIR ADDRESS PORT CONTROL_PORT")
    p.add_argument("--count", type=int, default=5, help="echoes to send (default 5)")
    p.add_argument("--interval", type=float, default=0.0, help="seconds between echoes (default 0)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for any answer (default 10)")
    p.add_argument("--message", help="payload of every echo (default: random 64-bit hex per echo)")
    p.add_argument("--interface", help="local address to send from, e.g. 127.0.0.2")
    p.add_argument("--asyncio", action="store_true",
                   help="run on an asyncio event loop (aeron_py.asyncio) instead of the step-driven loop")
    p.add_argument("--uvloop", action="store_true", help="with --asyncio: use uvloop's event loop (implies --asyncio)")
    secure = p.add_argument_group(
        "secure mode", "the duologue encrypted and authenticated, its keys agreed with the server's key "
        "(the server runs with --secure)")
    secure.add_argument("--secure", action="store_true", help="talk to a secure server")
    secure.add_argument("--server-key", metavar="KEY",
                        help="the server's public key (base64url, as echo_server --generate-key prints it); "
                        "default: the key recorded in --known-servers, else the one the server sends, recorded "
                        "there (trust on first use)")
    secure.add_argument("--known-servers", metavar="FILE", default=str(DEFAULT_KNOWN_SERVERS),
                        help="the servers' keys seen so far, one 'host:port key' per line (default %(default)s)")
    secure.add_argument("--no-trust-on-first-use", action="store_true",
                        help="refuse a server whose key is neither pinned nor recorded")
    p.add_argument("--log-level", default="WARNING", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    return p


def _security(p: argparse.ArgumentParser, args: argparse.Namespace) -> ClientSecurity | None:
    if not args.secure:
        if args.server_key is not None:
            p.error("--server-key is only used with --secure")
        return None
    key = None
    if args.server_key is not None:
        key = b64url_decode(args.server_key)
        if key is None or len(key) != 32:
            p.error(f"--server-key must be a 32-byte public key in base64url without padding "
                    f"(43 characters, as echo_server --generate-key prints it), got {args.server_key!r}")
    return ClientSecurity(server_key=key, known_servers=KnownServers(args.known_servers),
                          trust_on_first_use=not args.no_trust_on_first_use)


def _port(p: argparse.ArgumentParser, name: str, text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        p.error(f"{name} must be an integer, got {text!r}")
    if not 1 <= value <= 65535:
        p.error(f"{name} must be in [1, 65535], got {value}")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(key_option_argv(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(level=args.log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if len(args.positional) not in (3, 4):
        p.error(f"expected ADDRESS PORT CONTROL_PORT (or DIR first), got {len(args.positional)} arguments")
    directory = args.positional[0] if len(args.positional) == 4 else None
    address, port_text, control_text = args.positional[-3:]
    port, control_port = _port(p, "PORT", port_text), _port(p, "CONTROL_PORT", control_text)
    if args.count < 0 or not args.timeout > 0 or args.interval < 0:
        p.error("--count must be >= 0, --timeout > 0 and --interval >= 0")
    options: dict[str, Any] = dict(count=args.count, interval=args.interval, message=args.message,
                                   timeout=args.timeout, interface=args.interface, dir=directory)
    security = _security(p, args)
    if security is not None:
        options["secure"] = security
    try:
        if args.asyncio or args.uvloop:
            result = _run_async(address, port, control_port, options, args.uvloop)
        else:
            result = EchoClient(address, port, control_port, **options).run()
    except ImportError as exc:
        print(f"echo_client: {exc} (--uvloop needs: pip install uvloop)", file=sys.stderr)
        return EXIT_FAILED
    except ServerKeyRefused as exc:
        print(f"echo_client: {exc}", file=sys.stderr)
        return EXIT_AUTHENTICATION
    except (OSError, ValueError, RuntimeError) as exc:  # RuntimeError: AeronError
        print(f"echo_client: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if result.ok:
        rtts = sorted(result.rtts)
        median = f", median rtt {rtts[len(rtts) // 2] * 1e3:.3f} ms" if rtts else ""
        print(f"OK {result.echoes} echoes on duologue {result.session_id}{median}", flush=True)
    elif result.server_reason is not None and not result.secure:
        hint = " (this server is in secure mode: run the client with --secure)" if (
            result.server_reason == SecureReason.SECURE_MODE_REQUIRED) else ""
        print(f"echo_client: server error: {result.server_reason}{hint}", file=sys.stderr)
    else:
        print(f"echo_client: {result.reason}", file=sys.stderr)
    return result.exit_code


def _run_async(address: str, port: int, control_port: int, options: dict[str, Any], use_uvloop: bool) -> EchoResult:
    from .async_client import run_echo_client

    coro = run_echo_client(address, port, control_port, **options)
    if use_uvloop:
        try:
            uvloop = importlib.import_module("uvloop")  # optional: not a dependency of aeron_py
        except ImportError:
            coro.close()
            raise
        result: EchoResult = uvloop.run(coro)
        return result
    return asyncio.run(coro)


if __name__ == "__main__":
    sys.exit(main())
