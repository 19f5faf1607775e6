"""Several Echo 2.0 duologues at once from one asyncio event loop.

    python examples/echo2_async_client.py ADDRESS PORT CONTROL_PORT [--clients N] [--count N] [--uvloop]

Starts one embedded media driver and one ``aeron_py.asyncio`` client, then runs N Echo
2.0 clients concurrently (``asyncio.gather``), client i sending from 127.0.0.(2+i) when
the server is on loopback (so the server sees N source addresses).  Each prints its
result as it finishes.  Exit status 0 when every client succeeded, else the worst
client's exit code (1 server error, 3 other failure).

Try it against the server: ``python -m aeron_py.echo_server 127.0.0.1 9000 9001`` in
one terminal, then ``python examples/echo2_async_client.py 127.0.0.1 9000 9001 --clients 3``.
"""
from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time

import aeron_py.asyncio as aio
from aeron_py import MediaDriver
from aeron_py.echo.client.async_client import AsyncEchoClient
from aeron_py.echo.client import EchoResult


async def one_client(index: int, aeron: aio.Aeron, args: argparse.Namespace) -> EchoResult:
    interface = f"127.0.0.{2 + index}" if args.address.startswith("127.") else None
    client = AsyncEchoClient(args.address, args.port, args.control_port, count=args.count, interval=args.interval,
                             timeout=args.timeout, interface=interface, aeron=aeron)
    result = await client.run()
    if result.ok:
        median = statistics.median(result.rtts) * 1e3 if result.rtts else 0.0
        print(f"client {index} ({result.source_ip}): OK {result.echoes} echoes on duologue {result.session_id}, "
              f"median rtt {median:.3f} ms", flush=True)
    else:
        print(f"client {index} ({result.source_ip}): FAILED: {result.server_reason or result.reason}", flush=True)
    return result


async def main(args: argparse.Namespace) -> int:
    started = time.monotonic()
    # the driver and the client start on a worker thread: the event loop is never blocked
    driver = await asyncio.to_thread(MediaDriver, publication_linger_timeout_ns=100_000_000)
    try:
        async with await asyncio.to_thread(aio.Aeron, driver=driver, client_name="echo2-async-example") as aeron:
            results = await asyncio.gather(*(one_client(i, aeron, args) for i in range(args.clients)))
            await asyncio.sleep(0.15)  # let the driver send end-of-stream for the closed duologues
    finally:
        await asyncio.to_thread(driver.close)
    ok = sum(r.ok for r in results)
    print(f"{ok}/{len(results)} clients OK in {time.monotonic() - started:.2f} s", flush=True)
    return max(r.exit_code for r in results)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="Run several Echo 2.0 clients at once on one asyncio event loop.")
    p.add_argument("address", help="the server's address, e.g. 127.0.0.1")
    p.add_argument("port", type=int, help="the server's all-clients port")
    p.add_argument("control_port", type=int, help="the server's all-clients control port")
    p.add_argument("--clients", type=int, default=3, help="concurrent clients (default 3)")
    p.add_argument("--count", type=int, default=5, help="echoes per client (default 5)")
    p.add_argument("--interval", type=float, default=0.0, help="seconds between a client's echoes (default 0)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds to wait for any answer (default 10)")
    p.add_argument("--uvloop", action="store_true", help="run on uvloop's event loop")
    args = p.parse_args(argv)
    if not 1 <= args.clients <= 200:
        p.error(f"--clients must be in [1, 200], got {args.clients}")
    if args.count < 0 or not args.timeout > 0 or args.interval < 0:
        p.error("--count must be >= 0, --timeout > 0 and --interval >= 0")
    return args


if __name__ == "__main__":
    arguments = parse_args()
    if arguments.uvloop:
        import uvloop

        sys.exit(uvloop.run(main(arguments)))
    sys.exit(asyncio.run(main(arguments)))
