"""How fast the streaming defence closes the loop, and how many events per second it follows.

    python -m benchmarks.analytics_stream_bench [--runs 5] [--rates 1000 3000 10000 30000]

All real, on loopback: ``python -m aeron_py.echo_server --events DIR --blocklist FILE``
and ``python -m aeron_py.analytics DIR --follow --blocklist FILE --master local[2]``.

1. **Time to block**: after ``--warmup`` untimed attacks, ``--runs`` times, a fresh attacker address (127.0.0.20, .21, ...)
   floods HELLOs (:class:`aeron_py.echo.load.flood.HelloFlood`). Measured from the server's own
   telemetry (one clock): the ``ts`` of the first ``hello`` from the attacker to the ``ts``
   of the ``blocklist_reload`` that put it on the list (from then on the server's endpoint
   filter drops it; a probe client from the attacker's address confirms it is refused).
   Target: p50 <= 15 s.
2. **Sustained rate**: for each rate, a writer publishes that many events per second for
   ``--phase-seconds`` into the same directory; the rate is sustained when the stream's
   per-batch counts reach the total within ``--max-lag`` seconds after the writer stops.

Results: ``benchmarks/results/analytics_stream.json`` and ``analytics_stream.png``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))  # this tree's aeron_py, also when run as a file

from benchmarks.harness import (BenchError, Child, free_udp_ports, install_signal_cleanup,  # noqa: E402
                                machine_info, pick, save_run, wait_until)

from aeron_py.analytics.stream_sinks import read_batch_counts  # noqa: E402
from aeron_py.duologue.blocklist import Blocklist  # noqa: E402
from aeron_py.echo.load.flood import HelloFlood  # noqa: E402
from aeron_py.telemetry import read_events  # noqa: E402
from aeron_py.telemetry.events import make_event  # noqa: E402
from aeron_py.telemetry.writer import EventWriter  # noqa: E402

TARGET_P50_S = 15.0


def first_ts(events_dir: Path, predicate: Any) -> float | None:
    """The smallest ``ts`` of the events matching ``predicate`` (None: none yet)."""
    found = [e["ts"] for e in read_events(events_dir) if predicate(e)]
    return min(found) if found else None


def time_to_block(events: Path, blocklist: Path, port: int, control: int, attacker: str,
                  deadline_s: float) -> dict[str, Any]:
    """Flood from ``attacker`` until the server has applied a blocklist listing it."""
    stop = threading.Event()
    report: dict[str, Any] = {}

    def flood() -> None:
        with HelloFlood("127.0.0.1", port, control, [attacker], seed=len(attacker)) as f:
            while not stop.is_set():
                r = f.run(seconds=2.0, connect_timeout=5.0)
                report["hellos"] = report.get("hellos", 0) + r.hellos

    thread = threading.Thread(target=flood, daemon=True)
    started = time.time()
    thread.start()
    try:
        def reload_ts() -> float | None:
            if Blocklist.load(blocklist).match(attacker, time.time()) is None:
                return None
            return first_ts(events, lambda e: e["kind"] == "blocklist_reload"
                            and e["ts"] >= started and e["counters"].get("added", 0) > 0)

        refused = wait_until(reload_ts, deadline_s, f"the server to block {attacker}", step_s=0.2)
    finally:
        stop.set()
        thread.join(timeout=30)
    hello = first_ts(events, lambda e: e["kind"] == "hello" and e.get("ip") == attacker)
    if hello is None:
        raise BenchError(f"no hello from {attacker} in the telemetry")
    probe = subprocess.run([sys.executable, "-m", "aeron_py.echo_client", "127.0.0.1", str(port), str(control),
                            "--count", "1", "--timeout", "3", "--interface", attacker],
                           capture_output=True, text=True, timeout=60)
    return {"attacker": attacker, "first_hello_ts": hello, "refused_ts": refused,
            "seconds": round(float(refused) - hello, 2), "flood_hellos": report.get("hellos", 0),
            "probe_refused": probe.returncode == 3}


def sustained(events: Path, counts: Path, rate: int, seconds: float, max_lag: float) -> dict[str, Any]:
    """Publish ``rate`` events/s for ``seconds``; how long until the stream has counted them all."""
    base = read_batch_counts(counts).lines
    template = make_event("rtt_sample", source="load", server_id="bench", client_ip="127.0.0.4", rtt_us=100, seq=0)
    written = 0
    with EventWriter(events, source="load", server_id="bench", prefix="load") as writer:
        start = time.monotonic()
        while (elapsed := time.monotonic() - start) < seconds:
            due = int(rate * elapsed) - written
            for _ in range(min(due, rate)):
                writer.write_event({**template, "ts": time.time(), "seq": written})
                written += 1
            if due <= 0:
                time.sleep(0.005)
        achieved = written / (time.monotonic() - start)
    ended = time.monotonic()
    caught_up = None
    while time.monotonic() - ended < max_lag:
        if read_batch_counts(counts).lines - base >= written:
            caught_up = time.monotonic() - ended
            break
        time.sleep(0.25)
    return {"rate": rate, "written": written, "achieved_rate": round(achieved), "lag_s": caught_up and round(caught_up, 2),
            "sustained": caught_up is not None}


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 4.2), dpi=100)
    left, right = fig.subplots(1, 2)
    runs = results["time_to_block"]["runs"]
    left.bar(range(1, len(runs) + 1), [r["seconds"] for r in runs], color="tab:blue")
    left.axhline(TARGET_P50_S, color="tab:red", linestyle="--", label=f"target p50 {TARGET_P50_S:g} s")
    left.axhline(results["time_to_block"]["p50_s"], color="tab:green", label=f"p50 {results['time_to_block']['p50_s']:.1f} s")
    left.set_xlabel("run (fresh attacker address)")
    left.set_ylabel("first HELLO -> refused (s)")
    left.set_title("time to block a HELLO flood")
    left.legend()
    rates = results["rates"]
    right.plot([r["achieved_rate"] for r in rates], [r["lag_s"] if r["lag_s"] is not None else float("nan") for r in rates],
               marker="o")
    for r in rates:
        if not r["sustained"]:
            right.annotate("fell behind", (r["achieved_rate"], 0), color="tab:red")
    right.set_xscale("log")
    right.set_xlabel("events / s written")
    right.set_ylabel("lag after the writer stopped (s)")
    right.set_title("stream keeps up")
    fig.suptitle(f"aeron_py analytics --follow, {results['master']}, {results['machine']['cpu_count']} CPUs, "
                 f"load {results['load_avg_start'][0]:.1f}")
    fig.tight_layout()
    fig.savefig(path)


def history_row(results: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of a run, flat, for ``results/history/analytics_stream.csv``."""
    return {"trigger": results.get("trigger"), "load_1min_start": pick(results, "load_avg_start", 0),
            "time_to_block_p50_s": pick(results, "time_to_block", "p50_s"),
            "time_to_block_max_s": pick(results, "time_to_block", "max_s"),
            "time_to_block_met": pick(results, "time_to_block", "met"),
            "sustained_events_per_s": results.get("sustained_events_per_s")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="attacks timed (default 5)")
    parser.add_argument("--warmup", type=int, default=1,
                        help="attacks before the timed ones, reported apart (default 1): a defence runs "
                             "continuously, its first batches with data pay Spark's planning and code generation")
    parser.add_argument("--rates", type=int, nargs="*", default=[1000, 3000, 10000, 30000],
                        help="events/s phases for the sustained-rate test (default 1000 3000 10000 30000)")
    parser.add_argument("--phase-seconds", type=float, default=20.0, help="length of one rate phase (default 20)")
    parser.add_argument("--max-lag", type=float, default=30.0, help="catch-up allowance after a phase (default 30 s)")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--trigger", default="1s")
    parser.add_argument("--block-deadline", type=float, default=120.0, help="give up on one attack after this (s)")
    parser.add_argument("--results-dir", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    install_signal_cleanup()

    results: dict[str, Any] = {"master": args.master, "trigger": args.trigger, "machine": machine_info(),
                               "load_avg_start": os.getloadavg()}
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory(prefix="stream-bench-") as tmp:
        work = Path(tmp)
        events, blocklist, checkpoint = work / "events", work / "blocklist.txt", work / "checkpoint"
        blocklist.write_text("# managed by aeron_py.analytics --follow\n")
        port, control, base = free_udp_ports(3)
        server = Child("echo-server", [sys.executable, "-m", "aeron_py.echo_server", str(work / "server"), "127.0.0.1",
                                       str(port), str(control), str(base), "32", "--events", str(events),
                                       "--blocklist", str(blocklist), "--events-max-files", "100000",
                                       "--events-max-bytes", str(2 << 30), "--snapshot-interval", "2",
                                       "--expiry", "2"], env)
        server.wait_for_line(lambda line: line.startswith("READY"), 60, "READY")
        job = Child("stream", [sys.executable, "-m", "aeron_py.analytics", str(events), "--follow",
                               "--blocklist", str(blocklist), "--checkpoint", str(checkpoint), "--master", args.master,
                               "--trigger", args.trigger, "--log-level", "WARNING"], env)
        counts = checkpoint / "batch_counts"
        wait_until(lambda: read_batch_counts(counts).batches > 0 or job.proc.poll() is not None, 300,
                   "the stream's first batch", step_s=0.5)
        if job.proc.poll() is not None:
            raise BenchError(f"stream job exited: {job.stderr_tail()}")
        print("stream is following; timing attacks", flush=True)
        warmup = []
        for n in range(args.warmup):  # the stream's first batches with data compile and plan
            run = time_to_block(events, blocklist, port, control, f"127.0.0.{19 - n}", args.block_deadline)
            print(f"  warm-up {run['attacker']}: refused {run['seconds']:.1f} s after its first HELLO", flush=True)
            warmup.append(run)
        results["warmup"] = warmup
        runs = []
        for n in range(args.runs):
            run = time_to_block(events, blocklist, port, control, f"127.0.0.{20 + n}", args.block_deadline)
            print(f"  {run['attacker']}: refused {run['seconds']:.1f} s after its first HELLO "
                  f"(probe refused: {run['probe_refused']})", flush=True)
            runs.append(run)
        seconds = [r["seconds"] for r in runs]
        results["time_to_block"] = {"runs": runs, "p50_s": statistics.median(seconds), "max_s": max(seconds),
                                    "target_p50_s": TARGET_P50_S, "met": statistics.median(seconds) <= TARGET_P50_S}
        results["rates"] = []
        for rate in args.rates:
            phase = sustained(events, counts, rate, args.phase_seconds, args.max_lag)
            print(f"  {phase['achieved_rate']:>7,} events/s: lag {phase['lag_s']} s "
                  f"({'sustained' if phase['sustained'] else 'fell behind'})", flush=True)
            results["rates"].append(phase)
            if not phase["sustained"]:
                break
        kept = [r["achieved_rate"] for r in results["rates"] if r["sustained"]]
        results["sustained_events_per_s"] = max(kept) if kept else None
        status = checkpoint / "status.json"
        results["last_progress"] = json.loads(status.read_text()) if status.exists() else None
        job.stop(grace_s=90)
        server.stop(grace_s=30)
    results["load_avg_end"] = os.getloadavg()
    save_run(args.results_dir, "analytics_stream", results, history_row(results), plot)
    print(f"time to block p50 {results['time_to_block']['p50_s']:.1f} s (target {TARGET_P50_S:g} s); "
          f"sustained {results['sustained_events_per_s']} events/s; results in {args.results_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
