"""Echo 2.0 load generator: many concurrent clients against one server.

    python -m aeron_py.echo_load ADDRESS PORT CONTROL_PORT --clients N
        [--sources 127.0.0.2,127.0.0.3,...] [--echoes M] [--interval S] [--timeout S]
        [--json OUT] [--png OUT] [--events DIR] [--no-progress]
    python -m aeron_py.echo_load ADDRESS PORT CONTROL_PORT --clients N --hold S
        [--steps 1000,2500,...] [--echo-hold S --rate R] [--batch B] [--sources ...] [--json OUT]
    python -m aeron_py.echo_load ADDRESS PORT CONTROL_PORT --clients N --handshakes [--concurrency C]

Hold mode (``--hold``, :mod:`aeron_py.echo.load.hold`) opens duologues up to each of
``--steps`` (then ``--clients``), keeps them idle ``--hold`` seconds, then with
``--echo-hold`` has every client echo ``--rate`` times a second; it prints one
``EVENT <json>`` line per stage (step reached, hold started, hold ended; while a step
grows, one ``growing`` line every 2 s with the clients held, in flight and failed) and the
summary as JSON at the end.  Handshake mode (``--handshakes``) times ``--clients``
complete handshakes with ``--concurrency`` in flight.

All clients share one embedded media driver and are stepped by one thread (no
busy-spinning; fits a 2-core machine): every client says HELLO at once, then echoes
``M`` times.  Client ``i`` sends from ``sources[i % len(sources)]``.  Reports the
handshake rate (CONNECTs per second) and handshake/RTT percentiles; RTTs include the
stepping granularity of this single thread (one pass over all clients).
``--json`` writes the summary, ``--png`` an RTT histogram (needs matplotlib),
``--events`` one ``rtt_sample`` telemetry event per echo.  Exit 0 when every client
succeeded, 1 otherwise, 2 for bad arguments.
"""
from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ...client import Aeron
from ...driver import MediaDriver
from ..client.common import EchoResult
from ..client.sync import EchoClient, Phase
from ...duologue.client_security import ClientSecurity
from ...duologue.core.secure_hello import b64url_decode
from ...duologue.keys import key_option_argv
from .hold import LOAD_DRIVER_OPTIONS, load_security
from ...idle import BackoffIdleStrategy

logger = logging.getLogger(__name__)


def percentile(sorted_values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile (``q`` in [0, 100]) of an ascending sequence; NaN if empty."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(q / 100.0 * len(sorted_values)))
    return sorted_values[min(rank, len(sorted_values)) - 1]


def _summary(values: Sequence[float], scale: float, unit: str) -> dict[str, Any]:
    ordered = sorted(v * scale for v in values)
    out: dict[str, Any] = {"count": len(ordered)}
    if ordered:
        out["mean_" + unit] = round(sum(ordered) / len(ordered), 3)
        for q in (50, 90, 99):
            out[f"p{q}_{unit}"] = round(percentile(ordered, q), 3)
        out["max_" + unit] = round(ordered[-1], 3)
    return out


@dataclass
class LoadReport:
    """What a load run measured (JSON-ready via :meth:`as_dict`)."""

    clients: int
    sources: list[str]
    echoes_per_client: int
    succeeded: int = 0
    failures: dict[str, int] = field(default_factory=dict)
    duration_s: float = 0.0
    handshake_rate_per_s: float | None = None
    handshake: dict[str, Any] = field(default_factory=dict)
    rtt: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _open_clients(aeron: Aeron, address: str, port: int, control_port: int, n: int, sources: Sequence[str],
                  echoes: int, interval: float, timeout: float, security: ClientSecurity | None) -> list[EchoClient]:
    clients = []
    for i in range(n):
        source = sources[i % len(sources)] if sources else None
        client = EchoClient(address, port, control_port, count=echoes, interval=interval, timeout=timeout,
                            interface=source, aeron=aeron, secure=security)
        clients.append(client)
        client.open()
    return clients


def _progress(total: int, enabled: bool) -> tuple[Callable[[int], None], Callable[[], None]]:
    """(update(done), close()) for a tqdm bar, or a plain stderr line without tqdm."""
    if not enabled:
        return (lambda done: None), (lambda: None)
    try:
        from tqdm import tqdm
    except ImportError:
        state = {"last": 0.0}

        def update(done: int) -> None:
            now = time.monotonic()
            if now - state["last"] >= 0.5 or done == total:
                state["last"] = now
                print(f"\rclients finished {done}/{total}", end="", file=sys.stderr, flush=True)

        return update, lambda: print(file=sys.stderr)
    bar = tqdm(total=total, unit="client", desc="echo load", file=sys.stderr)

    def advance(done: int) -> None:
        if done != bar.n:
            bar.update(done - bar.n)

    return advance, bar.close


def run_load(address: str, port: int, control_port: int, *, clients: int, sources: Sequence[str] = (),
             echoes: int = 10, interval: float = 0.0, timeout: float = 10.0, progress: bool = False,
             server_key: bytes | None = None) -> tuple[LoadReport, list[EchoResult]]:
    """Run ``clients`` concurrent clients to completion; returns the report and every result.
    ``server_key``: secure mode against a server with that public key."""
    if clients < 1:
        raise ValueError(f"clients must be >= 1, got {clients}")
    report = LoadReport(clients=clients, sources=list(sources) or ["127.0.0.1"], echoes_per_client=echoes)
    with MediaDriver(**LOAD_DRIVER_OPTIONS, secure_transport=server_key is not None) as driver, \
            Aeron(driver=driver, use_conductor_agent_invoker=True, client_name="echo-load") as aeron:
        active = _open_clients(aeron, address, port, control_port, clients, sources, echoes, interval, timeout,
                               load_security(driver, server_key))
        update, close_bar = _progress(clients, progress)
        start = time.monotonic()
        connected_at: dict[int, float] = {}
        idle = BackoffIdleStrategy(max_park_ns=500_000)
        deadline = start + timeout * (echoes + 3) + 10  # every client bounds itself; this is a backstop
        try:
            while time.monotonic() < deadline:
                now = time.monotonic()
                work = aeron.do_work()
                done = 0
                for i, client in enumerate(active):
                    work += client.step(now)
                    if i not in connected_at and client.phase in (Phase.DUOLOGUE, Phase.ECHO):
                        connected_at[i] = now
                    done += client.finished
                update(done)
                if done == len(active):
                    break
                idle.idle(work)
        finally:
            close_bar()
            for client in active:
                client.close()
            linger_until = time.monotonic() + 0.15  # let end-of-stream frames leave
            while time.monotonic() < linger_until:
                aeron.do_work()
                time.sleep(0.005)
        report.duration_s = round(time.monotonic() - start, 3)
    results = [c.result or EchoResult(False, 0, reason="load run deadline passed") for c in active]
    report.succeeded = sum(r.ok for r in results)
    report.failures = dict(Counter(r.server_reason or r.reason or "?" for r in results if not r.ok))
    if connected_at:
        span = max(connected_at.values()) - start
        report.handshake_rate_per_s = round(len(connected_at) / span, 3) if span > 0 else None
    report.handshake = _summary([r.handshake for r in results if r.handshake is not None], 1e3, "ms")
    report.rtt = _summary([rtt for r in results for rtt in r.rtts], 1e6, "us")
    return report, results


def write_png(path: str, results: Sequence[EchoResult], report: LoadReport) -> None:
    """RTT histogram (matplotlib with the Agg backend)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rtts = [rtt * 1e6 for r in results for rtt in r.rtts]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.hist(rtts, bins=50, color="tab:blue")
    ax.set_xlabel("echo round trip (µs)")
    ax.set_ylabel("echoes")
    r = report.rtt
    ax.set_title(f"{report.clients} clients, {r.get('count', 0)} echoes: p50 {r.get('p50_us', 'n/a')} µs, "
                 f"p99 {r.get('p99_us', 'n/a')} µs")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write_events(directory: str, server_id: str, results: Sequence[EchoResult]) -> int:
    """One ``rtt_sample`` event per measured echo; returns how many were written."""
    from ...telemetry import EventWriter

    written = 0
    with EventWriter(directory, source="load", server_id=server_id) as writer:
        for r in results:
            for seq, rtt in enumerate(r.rtts):
                writer.emit("rtt_sample", client_ip=r.source_ip or "127.0.0.1", rtt_us=int(rtt * 1e6), seq=seq)
                written += 1
    return written


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m aeron_py.echo_load", description="Echo 2.0 load generator.",
        epilog="Three modes: run (default: every client echoes --echoes times, then closes), hold (--hold: keep "
               "duologues open and report per step), handshakes (--handshakes: time complete handshakes).")
    p.add_argument("address", help="the server's address (e.g. 127.0.0.1)")
    p.add_argument("port", type=int, help="the server's all-clients data port")
    p.add_argument("control_port", type=int, help="the server's all-clients control port")
    p.add_argument("--clients", type=int, required=True,
                   help="concurrent clients (run), final number of duologues to hold (hold), handshakes (handshakes)")
    p.add_argument("--sources", default="", help="comma-separated local addresses to send from")
    p.add_argument("--echoes", type=int, default=10, help="echoes per client (10)")
    p.add_argument("--interval", type=float, default=0.0, help="seconds between a client's echoes (0)")
    p.add_argument("--timeout", type=float, default=10.0, help="per-client timeout without progress (10 s)")
    p.add_argument("--json", help="write the summary here")
    p.add_argument("--png", help="write an RTT histogram here (needs matplotlib)")
    p.add_argument("--events", help="write rtt_sample telemetry events into this directory")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    hold = p.add_argument_group("hold mode")
    hold.add_argument("--hold", type=float, metavar="S", help="hold each step idle for S seconds (0: no idle stage)")
    hold.add_argument("--steps", default="", help="comma-separated duologue counts to grow through before --clients")
    hold.add_argument("--echo-hold", type=float, default=0.0, metavar="S",
                      help="after the idle stage, every client echoes --rate times a second for S seconds (0)")
    hold.add_argument("--rate", type=float, default=1.0, help="echoes per second per client in --echo-hold (1)")
    hold.add_argument("--batch", type=int, default=100, help="handshakes in flight at once (100)")
    hold.add_argument("--hello-interval", type=float, default=5.0,
                      help="seconds between a client's HELLO re-sends in hold/handshake mode (5)")
    hold.add_argument("--aeron-defaults", action="store_true",
                      help="held clients keep Aeron's idle pace (heartbeats every 0.1 s, status messages every "
                      "0.2 s, like the Java reference) instead of thinning both to once a second")
    secure = p.add_argument_group("secure mode")
    secure.add_argument("--secure", action="store_true", help="secure clients (the server runs with --secure)")
    secure.add_argument("--server-key", metavar="KEY",
                        help="with --secure: the server's public key, as echo_server --generate-key prints it")
    shakes = p.add_argument_group("handshake mode")
    shakes.add_argument("--handshakes", action="store_true", help="time --clients complete handshakes")
    shakes.add_argument("--concurrency", type=int, default=1, help="handshakes in flight at once (1: sequential)")
    p.add_argument("--log-level", default="WARNING", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    return p


def main(argv: Sequence[str] | None = None) -> int:
    p = parser()
    args = p.parse_args(key_option_argv(sys.argv[1:] if argv is None else argv))
    logging.basicConfig(level=args.log_level, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    if args.clients < 1 or args.echoes < 0 or not args.timeout > 0 or args.interval < 0:
        p.error("--clients must be >= 1, --echoes >= 0, --timeout > 0, --interval >= 0")
    args.key = _server_key(p, args)
    if args.hold is not None or args.handshakes:
        return _main_hold(p, args, sources)
    if args.png:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            p.error("--png needs matplotlib (pip install 'aeron_py[load]')")
    try:
        report, results = run_load(args.address, args.port, args.control_port, clients=args.clients,
                                   sources=sources, echoes=args.echoes, interval=args.interval,
                                   timeout=args.timeout, progress=not args.no_progress, server_key=args.key)
    except (OSError, ValueError, RuntimeError) as exc:
        print(f"echo_load: {exc}", file=sys.stderr)
        return 1
    summary = json.dumps(report.as_dict(), indent=2, allow_nan=False, default=str)
    print(summary, flush=True)
    if args.json:
        Path(args.json).write_text(summary + "\n", encoding="utf-8")
    if args.png:
        write_png(args.png, results, report)
    if args.events:
        write_events(args.events, f"{args.address}:{args.port}", results)
    return 0 if report.succeeded == report.clients else 1



def _server_key(p: argparse.ArgumentParser, args: argparse.Namespace) -> bytes | None:
    """``--secure --server-key KEY``: the pinned key (the load never records keys)."""
    if args.secure != (args.server_key is not None):
        p.error("--secure and --server-key KEY go together (the load pins the server's key)")
    if args.server_key is None:
        return None
    key = b64url_decode(args.server_key)
    if key is None or len(key) != 32:
        p.error(f"--server-key must be a 32-byte public key in base64url without padding, got {args.server_key!r}")
    return key


def _main_hold(p: argparse.ArgumentParser, args: argparse.Namespace, sources: list[str]) -> int:
    """Hold or handshake mode (see the module docstring)."""
    from .hold import HoldPlan, run_handshakes, run_hold

    def event(message: dict[str, Any]) -> None:
        print("EVENT " + json.dumps(message, default=str), flush=True)

    try:
        if args.handshakes:
            if args.concurrency < 1:
                p.error("--concurrency must be >= 1")
            summary = run_handshakes(args.address, args.port, args.control_port, count=args.clients,
                                     concurrency=args.concurrency, sources=sources, timeout=args.timeout,
                                     hello_interval=args.hello_interval, server_key=args.key)
            ok = summary["ok"] == args.clients
        else:
            try:
                steps = [int(x) for x in args.steps.split(",") if x.strip()]
            except ValueError:
                p.error(f"--steps must be comma-separated integers, got {args.steps!r}")
            steps = [n for n in steps if n < args.clients] + [args.clients]
            try:
                plan = HoldPlan(steps=steps, hold_s=args.hold, echo_s=args.echo_hold, rate=args.rate, batch=args.batch,
                                timeout=args.timeout, hello_interval=args.hello_interval,
                                keepalive_interval=None if args.aeron_defaults else 1.0)
            except ValueError as exc:
                p.error(str(exc))
            stop = StopFlag()
            summary = run_hold(args.address, args.port, args.control_port, plan, sources=sources, on_event=event,
                               should_stop=lambda: stop.stopped, server_key=args.key)
            ok = summary["max_held"] == args.clients
    except (OSError, RuntimeError) as exc:
        print(f"echo_load: {exc}", file=sys.stderr)
        return 1
    text = json.dumps(summary, indent=2, default=str)
    print(text, flush=True)
    if args.json:
        Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0 if ok else 1


class StopFlag:
    """Set by SIGINT/SIGTERM so hold mode ends at the next stage boundary and reports."""

    def __init__(self) -> None:
        import signal

        self.stopped = False
        signal.signal(signal.SIGINT, self._set)
        signal.signal(signal.SIGTERM, self._set)

    def _set(self, _signum: int, _frame: object) -> None:
        self.stopped = True


if __name__ == "__main__":
    sys.exit(main())
