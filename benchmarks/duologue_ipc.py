"""Same-host duologues over IPC against loopback UDP duologues, on one server, same run.

The server is ``python -m aeron_py.echo_server --ipc-clients N --dir D`` in a child process
(otherwise its defaults; serving IPC clients turns its quiet idle off, since IPC traffic
never rings the driver's traffic bell, so both kinds of client meet the same loop). This
process alternates rounds of two clients written as a user writes them, with the defaults
a user gets:

* ``ipc``: ``aeron_py.duologue.connect_ipc(D)``: a client of the server's own driver, the
  duologue on ``aeron:ipc`` channels;
* ``udp``: ``aeron_py.duologue.connect(address, port, control)`` from 127.0.0.2, with its
  embedded media driver, the duologue over loopback UDP.

Each round: connect, then ``--messages`` round trips of one 32-byte ``ECHO`` message each
(``send`` then ``receive``), the round trip timed; then close. Then, once: ``--many`` IPC
duologues open at once on one shared Aeron client of the server's driver, each answering
one round trip (how many same-host clients one server holds, and how long they took to
join).

Results: ``results/duologue_ipc.json`` and ``.png`` and a row of
``results/history/duologue_ipc.csv``; the headline is the ratio ipc / udp of the p50 round trip.
"""
from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks import harness  # noqa: E402
from benchmarks.harness.children import BenchError, free_udp_ports  # noqa: E402
from benchmarks.harness.stats import percentiles_us  # noqa: E402

log = logging.getLogger("benchmarks.duologue_ipc")
MODES = ("ipc", "udp")
HOST = "127.0.0.1"


def start_server(driver_dir: Path, ipc_clients: int) -> tuple[subprocess.Popen[str], list[int]]:
    ports = free_udp_ports(2)
    argv = [sys.executable, "-m", "aeron_py.echo_server", "--dir", str(driver_dir), "--port", str(ports[0]),
            "--control-port", str(ports[1]), "--base-port", "21000", "--ipc-clients", str(ipc_clients),
            "--log-level", "WARNING"]
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline()  # READY <address> <port> <control>, or EOF when it failed
    if not line.startswith("READY"):
        child.kill()
        raise BenchError(f"the echo server did not start: {line!r}")
    return child, ports


def one_round(mode: str, args: argparse.Namespace, driver_dir: Path, ports: list[int]) -> dict[str, Any]:
    from aeron_py.duologue import connect, connect_ipc

    started = time.perf_counter()
    duologue = (connect_ipc(driver_dir) if mode == "ipc"
                else connect(HOST, ports[0], ports[1], interface="127.0.0.2"))
    connect_s = time.perf_counter() - started
    message = b"ECHO " + b"x" * 27
    samples: list[int] = []
    with duologue:
        for _ in range(args.messages):
            sent = time.perf_counter_ns()
            duologue.send(message)
            if duologue.receive(timeout=5) != message:
                raise BenchError(f"{mode}: no echo within 5 s")
            samples.append(time.perf_counter_ns() - sent)
    return {**percentiles_us(samples[args.messages // 10:]), "connect_ms": connect_s * 1e3}


def many(count: int, driver_dir: Path) -> dict[str, Any]:
    """``count`` IPC duologues open at once on one shared client; each answers once."""
    from aeron_py import Aeron
    from aeron_py.duologue import connect_ipc

    with Aeron(driver_dir, client_name="duologue-ipc-bench") as aeron:
        duologues = []
        started = time.perf_counter()
        try:
            for _ in range(count):
                duologues.append(connect_ipc(driver_dir, aeron=aeron))
            joined_s = time.perf_counter() - started
            for n, duologue in enumerate(duologues):
                duologue.send(b"ECHO %d" % n)
            answered = sum(1 for n, d in enumerate(duologues) if d.receive(timeout=10) == b"ECHO %d" % n)
        finally:
            for duologue in duologues:
                duologue.close()
    return {"duologues": count, "answered": answered, "joined_s": round(joined_s, 2),
            "join_ms_each": round(joined_s * 1e3 / count, 2)}


def render(results: dict[str, Any], png: Path) -> None:
    plt = harness.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    medians = results["medians"]
    modes = [m for m in MODES if m in medians]
    colours = ["tab:green", "tab:blue"][:len(modes)]
    axes[0].bar(modes, [medians[m]["p50"] for m in modes], color=colours)
    axes[0].set_ylabel("round trip p50 (us)")
    axes[1].bar(modes, [medians[m]["p99"] for m in modes], color=colours)
    axes[1].set_ylabel("round trip p99 (us)")
    m = results["many"]
    fig.suptitle(f"Duologue round trip, IPC / UDP p50 {results['ratio']}x; {m['answered']}/{m['duologues']} "
                 f"IPC duologues at once (defaults)", fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="2 rounds of 2,000 round trips per mode, 64 at once")
    p.add_argument("--rounds", type=int, default=5, help="rounds per mode, alternated (5)")
    p.add_argument("--messages", type=int, default=10_000, help="round trips per round (10,000)")
    p.add_argument("--many", type=int, default=256, help="IPC duologues at once, the server's --ipc-clients (256)")
    p.add_argument("--out-dir", type=Path, default=harness.RESULTS_DIR)
    p.add_argument("--label", default="", help="label of the history row")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("aeron_py").setLevel(logging.WARNING)  # a line per duologue otherwise
    if args.quick:
        args.rounds, args.messages, args.many = 2, 2000, 64
    with tempfile.TemporaryDirectory(prefix="duologue-ipc-", dir="/dev/shm") as tmp:
        driver_dir = Path(tmp) / "server"
        child, ports = start_server(driver_dir, args.many)
        try:
            rounds = harness.run_rounds("duologue", args.rounds,
                                        {m: (lambda m=m: one_round(m, args, driver_dir, ports)) for m in MODES},
                                        lambda: None)
            at_once = many(args.many, driver_dir)
        finally:
            child.terminate()
            child.wait(30)
    medians = {m: {k: statistics.median(r[k] for r in rs if "error" not in r) for k in ("p50", "p99", "connect_ms")}
               for m, rs in rounds.items() if any("error" not in r for r in rs)}
    results: dict[str, Any] = {
        "quick": args.quick, "rounds": args.rounds, "messages": args.messages, "machine": harness.machine_info(),
        "rounds_data": rounds, "medians": medians, "many": at_once,
        "defaults": "echo_server defaults plus --ipc-clients (quiet idle off); clients: connect_ipc() and "
                    "connect() defaults, send() then receive()",
        "ratio": harness.ratio(medians.get("ipc", {}).get("p50"), medians.get("udp", {}).get("p50")),
    }
    headline = {**harness.rounds_row({"quick": args.quick, "rounds": args.rounds, "machine": results["machine"]}),
                "p50_ratio": results["ratio"], "ipc_p50_us": medians.get("ipc", {}).get("p50"),
                "udp_p50_us": medians.get("udp", {}).get("p50"), "ipc_at_once": at_once["answered"]}
    harness.save_run(args.out_dir, "duologue_ipc", results, headline, render, args.label)
    print(json.dumps({"medians": medians, "ratio": results["ratio"], "many": at_once}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
