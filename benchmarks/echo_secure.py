"""Echo secure mode against plain Echo 2.0: handshakes per second and handshake latency.

The server is ``python -m aeron_py.echo_server`` in a child process with its defaults (plus
``--secure --key-file`` for secure rounds); this process runs ``--concurrency`` clients at once
(from 127.0.0.2, .3, ...) on one shared client driver (``MediaDriver()`` defaults, plus
``secure_transport=True``), each a full cycle: join the all-clients channel, handshake
(HELLO/CONNECT or HELLO-SECURE/CONNECT-SECURE with its Noise NK and both keys installed in both
drivers), open the duologue, one echo, close. A round counts the cycles completed in
``--seconds``; plain and secure rounds alternate. Also, in-process: what one secure handshake
costs the server's sans-I/O core (read message 1, write message 2, derive the keys) against a
plain HELLO's admission, in microseconds.

Results: ``results/echo_secure.json`` and ``.png`` and a row of ``results/history/echo_secure.csv``;
the headline is the ratio secure / plain of cycles per second (target >= 0.8x).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks import harness  # noqa: E402
from benchmarks.harness.children import BenchError, free_udp_ports  # noqa: E402

log = logging.getLogger("benchmarks.echo_secure")
MODES = ("plain", "secure")


def start_server(mode: str, key_file: Path) -> tuple[subprocess.Popen[str], list[int]]:
    """The server with its defaults (64 duologues, 3 per source address), on free ports."""
    ports = free_udp_ports(2)
    base = 20000 + (os.getpid() % 50) * 200  # 128 duologue ports, below the ephemeral range
    argv = [sys.executable, "-m", "aeron_py.echo_server", "--port", str(ports[0]), "--control-port", str(ports[1]),
            "--base-port", str(base), "--log-level", "WARNING"]
    if mode == "secure":
        argv += ["--secure", "--key-file", str(key_file)]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline()  # READY <address> <port> <control>, or EOF when it failed
    if not line.startswith("READY"):
        child.kill()
        raise BenchError(f"the {mode} echo server did not start: {line!r}")
    return child, ports


def one_round(mode: str, args: argparse.Namespace, key_file: Path, public_key: bytes) -> dict[str, Any]:
    from aeron_py import Aeron, MediaDriver
    from aeron_py.duologue.client_security import ClientSecurity
    from aeron_py.echo.client import EchoClient
    from aeron_py.idle import BackoffIdleStrategy

    server, (port, control) = start_server(mode, key_file)
    try:
        with MediaDriver(secure_transport=True) as driver, \
                Aeron(driver=driver, use_conductor_agent_invoker=True) as aeron:
            security = ClientSecurity(server_key=public_key, transport=driver.secure_transport) \
                if mode == "secure" else None
            slots: list[Any] = [None] * args.concurrency
            done, handshakes, failures = 0, [], Counter[str]()
            idle = BackoffIdleStrategy(max_park_ns=1_000_000)
            start = time.monotonic()
            end = start + args.seconds
            while time.monotonic() < end or any(slots):
                work = aeron.do_work()
                for slot, client in enumerate(slots):
                    if client is not None and client.finished:
                        client.close()
                        result = client.result
                        if result.ok:
                            done += 1
                        else:
                            failures[result.server_reason or result.reason] += 1
                        if result.handshake is not None:
                            handshakes.append(result.handshake)
                        client = None
                    if client is None and time.monotonic() < end:
                        client = EchoClient("127.0.0.1", port, control, count=1, timeout=10, aeron=aeron,
                                            interface=f"127.0.0.{2 + slot}", secure=security).open()
                    slots[slot] = client
                    work += client.step() if client is not None else 0
                idle.idle(work)
                if time.monotonic() > end + 30:
                    raise BenchError("clients still running 30 s after the round")
            elapsed = time.monotonic() - start
    finally:
        server.terminate()
        server.wait(30)
    return {"cycles": done, "failed": sum(failures.values()), "failures": dict(failures), "seconds": elapsed, "cycles_per_s": done / elapsed,
            "handshake_p50_ms": statistics.median(handshakes) * 1e3 if handshakes else None}


def core_cost(samples: int) -> dict[str, float]:
    """Microseconds of the server core's work per HELLO: plain vs secure (in-process, no I/O)."""
    from aeron_py import crypto
    from aeron_py.duologue.core.contract import ServerConfig
    from aeron_py.duologue.core.secure_client import SecureClientHello
    from aeron_py.duologue.core.secure_handshake import ServerSecrets
    from aeron_py.duologue.core.server import DuologueServerCore

    public, secret = crypto.x25519_keypair()
    costs = {}
    for mode in MODES:
        secure = ServerSecrets((public, secret), crypto) if mode == "secure" else None
        core = DuologueServerCore(ServerConfig(max_clients=samples, clients_base_port=10000, max_per_ip=samples,
                                           secure=secure, session_max=2**31 - 1))
        hellos = [SecureClientHello(public, crypto=crypto).message() if secure else f"HELLO {i:x}".encode()
                  for i in range(samples)]
        for i in range(samples):
            core.initial_image_available(i, i + 1, "127.0.0.1:5000", 65536, 0.0)
        started = time.perf_counter()
        for i, hello in enumerate(hellos):
            core.hello_received(i, hello, 0.0)
        costs[f"{mode}_us"] = (time.perf_counter() - started) / samples * 1e6
    return costs


def render(results: dict[str, Any], png: Path) -> None:
    plt = harness.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    medians = results["medians"]
    modes = [m for m in MODES if m in medians]
    axes[0].bar(modes, [medians[m]["cycles_per_s"] for m in modes], color=["tab:blue", "tab:orange"][:len(modes)])
    axes[0].set_ylabel("connect/echo/close cycles per second")
    axes[1].bar(modes, [results["core_cost"][f"{m}_us"] for m in modes], color=["tab:blue", "tab:orange"][:len(modes)])
    axes[1].set_ylabel("server core per HELLO (us)")
    fig.suptitle(f"Echo secure / plain: cycles/s {results['ratio']}x, "
                 f"{results['concurrency']} clients at once (defaults)", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="2 rounds of 5 s per mode (~1 min)")
    p.add_argument("--rounds", type=int, default=3, help="rounds per mode, alternated (3)")
    p.add_argument("--seconds", type=float, default=15.0, help="seconds of cycles per round (15)")
    p.add_argument("--concurrency", type=int, default=8, help="clients at once, from 127.0.0.2 on (8)")
    p.add_argument("--out-dir", type=Path, default=harness.RESULTS_DIR)
    p.add_argument("--label", default="", help="label of the history row")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("aeron_py").setLevel(logging.WARNING)  # a line per duologue otherwise
    if args.quick:
        args.rounds, args.seconds = 2, 5.0
    from aeron_py.duologue.keys import generate_server_key

    with tempfile.TemporaryDirectory() as tmp:
        key_file = Path(tmp) / "server.key"
        public_key = generate_server_key(key_file)
        rounds = harness.run_rounds("echo", args.rounds,
                                    {m: (lambda m=m: one_round(m, args, key_file, public_key)) for m in MODES},
                                    lambda: None)
    medians = {m: {"cycles_per_s": statistics.median(r["cycles_per_s"] for r in rs if "error" not in r),
                   "handshake_p50_ms": statistics.median(r["handshake_p50_ms"] for r in rs if "error" not in r)}
               for m, rs in rounds.items() if any("error" not in r for r in rs)}
    results: dict[str, Any] = {
        "quick": args.quick, "rounds": args.rounds, "seconds": args.seconds, "concurrency": args.concurrency,
        "machine": harness.machine_info(), "rounds_data": rounds, "medians": medians,
        "defaults": "echo_server defaults (quiet mode, keepalive thinning, endpoint filter); client MediaDriver() "
                    "defaults with secure_transport=True in both modes",
        "ratio": harness.ratio(medians.get("secure", {}).get("cycles_per_s"),
                               medians.get("plain", {}).get("cycles_per_s")),
        "handshake_ratio": harness.ratio(medians.get("secure", {}).get("handshake_p50_ms"),
                                         medians.get("plain", {}).get("handshake_p50_ms")),
        "core_cost": core_cost(500),
    }
    headline = {**harness.rounds_row({"quick": args.quick, "rounds": args.rounds, "machine": results["machine"]}),
                "cycles_per_s_ratio": results["ratio"], "handshake_p50_ratio": results["handshake_ratio"],
                **{k: round(v, 1) for k, v in results["core_cost"].items()}}
    harness.save_run(args.out_dir, "echo_secure", results, headline, render, args.label)
    print(json.dumps({"medians": medians, "ratio": results["ratio"], "handshake_ratio": results["handshake_ratio"],
                      "core_cost": results["core_cost"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
