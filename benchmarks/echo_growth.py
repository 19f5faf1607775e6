"""Echo 2.0 server growth with the load generator's defaults, straight to a target (issue 22).

    python -m benchmarks.echo_growth [--clients 3000] [--batch 50] [--sources 40] [--out PATH]

The server: ``python -m aeron_py.echo_server --clients 5000`` with its per-source limits
opened for 40 sources (``--max-per-ip``, ``--max-images-per-source``,
``--max-images-total``, ``--setup-rate 200``), every other option its default.  The
load: ``python -m aeron_py.echo_load --hold 5 --clients N`` with no steps, its 10 s
client timeout and ``--batch`` handshakes in flight (50, as issue 22 states; the load's
own default is 100), from ``--sources`` addresses 127.0.0.2....  A client that fails is
replaced (up to 10 % of the target, the load's rule).

Every 2 s the load's held count (its latest ``growing`` event: clients that completed a
handshake and are still alive) and the server's duologues counted from outside (its
driver's send channels minus the all-clients one, so handshakes in progress too) are
sampled with both processes' CPU seconds, until the load has held the target for 5 s and
exits.  Reported: whether the held count ever fell back before the target (and whether the
server's count dipped: a handshake that fails takes its half-made duologue with it), the
seconds to reach it, the load's failures by reason (``server full`` among them) and
open-to-first-echo percentiles of every client.  JSON and a plot of the count over time
go to ``benchmarks/results/echo_growth.{json,png}``, a row to its history.  Loopback only;
not part of pytest; bounded by ``--limit`` plus the two processes' stops (up to 30 s and 20 s);
exit 1 if the target was not reached.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

from aeron_py.stat import DriverStat

if __package__ in (None, ""):  # run as a file (python benchmarks/<name>.py): make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import RESULTS_DIR, Child, echo_machine_info, pyplot, save_run  # noqa: E402

HOST, PORT, BASE_PORT = "127.0.0.1", 19000, 20010  # duologue ports below the ephemeral range
SERVER_CLIENTS = 5000
SND_CHANNEL = 6  # Aeron counter type id
log = logging.getLogger("echo_growth")


def server_argv(sources: int) -> list[str]:
    per_source = SERVER_CLIENTS  # opened: one source may hold every place
    return [sys.executable, "-m", "aeron_py.echo_server", "--port", str(PORT), "--control-port", str(PORT + 1),
            "--base-port", str(BASE_PORT), "--clients", str(SERVER_CLIENTS), "--max-per-ip", str(per_source),
            "--max-images-per-source", str(2 * per_source), "--max-images-total", str(2 * SERVER_CLIENTS + 64),
            "--setup-rate", "200", "--log-level", "WARNING"]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def duologues(driver_dir: str) -> int:
    with DriverStat(driver_dir) as stat:
        return sum(c.type_id == SND_CHANNEL for c in stat.counters()) - 1  # minus the all-clients publication


def load_held(load: Child) -> int:
    """The load's held count: its latest ``growing`` (or ``step``) event's, 0 before the first."""
    for line in reversed(load.snapshot()):
        if line.text.startswith("EVENT "):
            event = json.loads(line.text[6:])
            if event.get("event") in ("growing", "step"):
                return int(event["held"])
    return 0


def fell_back(counts: list[float]) -> bool:
    return any(b < a for a, b in zip(counts, counts[1:]))


def grow(args: argparse.Namespace) -> dict[str, Any]:
    server = Child("growth-server", server_argv(args.sources), dict(os.environ))
    try:
        server.wait_for_line(lambda text: text.startswith("READY"), 60, "the server's READY")
        match = None
        for _ in range(100):
            match = re.search(r"driver dir (\S+)", server.stderr_path.read_text(errors="replace"))
            if match:
                break
            time.sleep(0.1)
        if match is None:
            raise RuntimeError(f"the server did not name its driver dir: {server.stderr_tail(5)}")
        driver_dir = match.group(1)
        sources = ",".join(f"127.0.0.{2 + i}" for i in range(args.sources))
        load = Child("growth-load", [sys.executable, "-m", "aeron_py.echo_load", HOST, str(PORT), str(PORT + 1),
                                     "--clients", str(args.clients), "--hold", "5", "--batch", str(args.batch),
                                     "--timeout", "10", "--sources", sources, "--no-progress"], dict(os.environ))
        samples: list[dict[str, float]] = []
        start = time.monotonic()
        try:
            while load.proc.poll() is None and time.monotonic() - start < args.limit:
                time.sleep(2.0 - (time.monotonic() - start) % 2.0)
                samples.append({"t": round(time.monotonic() - start, 1), "held": load_held(load),
                                "duologues": duologues(driver_dir), "server_cpu_s": cpu_seconds(server.proc.pid),
                                "load_cpu_s": cpu_seconds(load.proc.pid)})
        finally:
            load.stop(grace_s=30.0)
        events = [json.loads(line.text[6:]) for line in load.lines if line.text.startswith("EVENT ")]
    finally:
        server.stop(grace_s=20.0)
    step: dict[str, Any] = next((e for e in events if e.get("event") == "step"), {})
    reached = step.get("held", 0) >= args.clients
    reached_at = next((s["t"] for s in samples if s["held"] >= args.clients), None)
    before = [s for s in samples if reached_at is None or s["t"] <= reached_at]
    return {"clients": args.clients, "batch": args.batch, "sources": args.sources, "reached": reached,
            "seconds_to_target": step.get("connect_s"), "held_count_fell_back": fell_back([s["held"] for s in before]),
            "server_duologues_dipped": fell_back([s["duologues"] for s in before]),
            "failures": step.get("failures", {}), "open_to_first_echo_us": step.get("open_to_first_echo", {}),
            "samples": samples, "load_events": events}


def render(results: dict[str, Any], png: Path) -> None:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4))
    samples = results["samples"]
    ax.plot([s["t"] for s in samples], [s["held"] for s in samples], marker=".", label="held by the load")
    ax.plot([s["t"] for s in samples], [s["duologues"] for s in samples], linestyle="--",
            label="the server's duologues (handshakes in progress too)")
    ax.axhline(results["clients"], color="grey", linestyle=":")
    ax.legend(loc="lower right")
    ax.set_xlabel("seconds since the load started")
    ax.set_ylabel("duologues")
    ax.set_title(f"Echo server growth to {results['clients']}, {results['batch']} handshakes in flight, 10 s timeout")
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--clients", type=int, default=3000, help="duologues to grow to, straight (default 3000)")
    p.add_argument("--batch", type=int, default=50, help="handshakes the load keeps in flight (default 50)")
    p.add_argument("--sources", type=int, default=40, help="client source addresses 127.0.0.2... (default 40)")
    p.add_argument("--limit", type=float, default=600.0, help="seconds before the load is stopped (default 600)")
    p.add_argument("--out", type=Path, default=RESULTS_DIR, metavar="DIR",
                   help=f"folder for echo_growth.json/.png; history beside it (default {RESULTS_DIR})")
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO)
    if not 1 <= args.sources <= 250 or args.clients > SERVER_CLIENTS or args.clients < 1:
        p.error(f"--sources must be in [1, 250] and --clients in [1, {SERVER_CLIENTS}]")
    results = {"settings": vars(args) | {"out": str(args.out)}, "machine": echo_machine_info(), **grow(args)}
    row = {k: results[k] for k in ("clients", "batch", "reached", "seconds_to_target", "held_count_fell_back",
                                   "server_duologues_dipped")}
    row |= {f"open_to_first_echo_{q}_s": round(results["open_to_first_echo_us"].get(f"{q}_us", 0) / 1e6, 2)
            for q in ("p50", "p99")}
    row["failures"] = sum(results["failures"].values())
    json_path, png_path = save_run(args.out, "echo_growth", results, row, render, label=str(args.clients))
    print(json.dumps(row), flush=True)
    log.info("wrote %s and %s", json_path, png_path)
    return 0 if results["reached"] else 1


if __name__ == "__main__":
    sys.exit(main())
