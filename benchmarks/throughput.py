"""IPC streaming throughput of 32-byte messages: aeron_py versus Aeron's C tools.

C: ``streaming_publisher`` (concurrent publication, offer in a loop, idles on back
pressure) + ``rate_subscriber`` (subscription poll, reports every second).
aeron_py: the same shape in two child processes: ``pub`` offers a 32-byte message in a
loop (retrying on BACK_PRESSURED / ADMIN_ACTION / NOT_CONNECTED with the idle strategy)
and ``sub`` drains with ``Subscription.poll_batch(fragment_limit)`` and reports every
second.  Both pairs run on the same shared driver, with the same fragment limit and idle
behaviour, for the same duration.

The rate is measured at the subscriber, identically for both: each report line carries
its interval length and the running total; the lines whose whole interval lies after a
warm-up and before the publisher was stopped are summed (messages / seconds).

Standalone: ``python -m benchmarks.throughput [--quick]`` prints a JSON summary.
"""
from __future__ import annotations

import argparse
import json
import logging
import re
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file (python benchmarks/<name>.py): make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks import harness, pyclient  # noqa: E402
from benchmarks.harness.driver import run_standalone  # noqa: E402

log = logging.getLogger("benchmarks.throughput")

MSG_LEN = 32
CHANNEL = "aeron:ipc"
FRAGMENT_LIMIT = 256  # passed to rate_subscriber as -f and to poll_batch
WARMUP_S = 1.0
REPORT_INTERVAL_S = 1.0
DRAIN_S = 0.3  # subscriber keeps running this long after the publisher stops
C_MESSAGES = 10**12  # streaming_publisher -m: never reached, the run is stopped by time


@dataclass(frozen=True)
class Case:
    """One throughput measurement configuration, run by both implementations."""

    idle: str
    seconds: float


def plan(quick: bool) -> list[Case]:
    """Spin (stock C tools) and yield, each for a fixed duration."""
    seconds = 6.0 if quick else 10.0
    return [Case("spin", seconds), Case("yield", seconds)]


@dataclass(frozen=True)
class Report:
    """One subscriber rate report: arrival time (monotonic s), interval (s), running total."""

    arrived: float
    interval_s: float
    total: int


def steady_rate(reports: list[Report], pub_start: float, pub_stop: float) -> dict[str, float]:
    """Messages/s over the reports whose interval lies in [pub_start + WARMUP_S, pub_stop]."""
    picked_msgs = 0
    picked_s = 0.0
    picked = 0
    previous_total = 0
    for rep in reports:
        delta, previous_total = rep.total - previous_total, rep.total
        if rep.arrived - rep.interval_s >= pub_start + WARMUP_S and rep.arrived <= pub_stop:
            picked_msgs += delta
            picked_s += rep.interval_s
            picked += 1
    if picked == 0 or picked_s <= 0:
        raise harness.BenchError(
            f"no complete subscriber report inside the steady window ({len(reports)} reports; "
            f"publisher ran {pub_stop - pub_start:.2f}s): lengthen the run")
    return {"msgs_per_s": picked_msgs / picked_s, "messages": float(picked_msgs), "seconds": picked_s,
            "reports": float(picked), "total_received": float(reports[-1].total)}


# --------------------------------------------------------------------------------------------
# Python side (child processes)


def pub_main(args: argparse.Namespace) -> int:
    """Offer MSG_LEN-byte messages until SIGINT or ``--max-seconds``; print counts as JSON."""
    stop = pyclient.StopFlag()
    idle = pyclient.idle_strategy(args.idle)
    client = pyclient.connect(args.dir)
    pub = pyclient.add_publication(client, args.channel, args.stream, exclusive=False)
    pyclient.wait_connected(pub, "throughput publication", stop=stop)
    print("READY", flush=True)
    offer, do_idle, clock = pub.offer, idle.idle, time.monotonic
    msg = bytes(MSG_LEN)
    sent = retries = 0
    deadline = clock() + args.max_seconds
    batch = 1024
    if args.offer_batch:
        return _pub_batched(pub, client, idle, msg, batch, stop, deadline)
    while not stop.stopped and clock() < deadline:
        done = batch
        for i in range(batch):
            while offer(msg) < 0:  # retryable results only: terminal ones raise (aeron_py OfferError)
                retries += 1
                do_idle(0)
                if stop.stopped:
                    break
            else:
                continue  # offered: next message
            done = i  # stopped while message i was being retried
            break
        sent += done
    print(json.dumps({"sent": sent, "offer_retries": retries}), flush=True)
    pub.close()
    client.close()
    return 0


def sub_main(args: argparse.Namespace) -> int:
    """Drain with poll_batch; print ``REPORT <interval_ns> <total>`` about every second."""
    stop = pyclient.StopFlag()
    idle = pyclient.idle_strategy(args.idle)
    client = pyclient.connect(args.dir)
    sub = pyclient.add_subscription(client, args.channel, args.stream)
    print("READY", flush=True)
    poll, do_idle, clock = sub.poll_batch, idle.idle, time.monotonic_ns
    limit = args.fragment_limit
    interval_ns = int(REPORT_INTERVAL_S * 1e9)
    deadline = clock() + int(args.max_seconds * 1e9)
    total = 0
    last = clock()
    while not stop.stopped:
        n = len(poll(limit))
        total += n
        do_idle(n)
        now = clock()
        if now - last >= interval_ns:
            print(f"REPORT {now - last} {total}", flush=True)
            last = now
            if now > deadline:
                break
    sub.close()
    client.close()
    return 0


def _python_reports(child: harness.Child) -> list[Report]:
    reports = []
    for line in child.snapshot():
        parts = line.text.split()
        if len(parts) == 3 and parts[0] == "REPORT":
            reports.append(Report(line.t, int(parts[1]) / 1e9, int(parts[2])))
    return reports


def _pub_batched(pub: Any, client: Any, idle: Any, msg: bytes, batch: int, stop: Any, deadline: float) -> int:
    """The publisher loop with ``Publication.offer_batch``: one call into C per ``batch`` messages."""
    messages = [msg] * batch
    offer_batch, do_idle, clock = pub.offer_batch, idle.idle, time.monotonic
    sent = retries = 0
    pending = messages
    while not stop.stopped and clock() < deadline:
        offered = offer_batch(pending)  # terminal results raise (aeron_py.OfferError)
        sent += offered
        if offered == len(pending):
            pending = messages
            continue
        pending = pending[offered:]
        retries += 1
        do_idle(0)
    print(json.dumps({"sent": sent, "offer_retries": retries}), flush=True)
    pub.close()
    client.close()
    return 0


def python_throughput(aeron_dir: str, env: dict[str, str], case: Case, offer_batch: bool = False) -> dict[str, Any]:
    """aeron_py publisher (offer per message, or offer_batch) and poll_batch subscriber, each in its own process."""
    stream = harness.next_stream_id()
    common = ["--dir", aeron_dir, "--channel", CHANNEL, "--stream", str(stream), "--idle", case.idle,
              "--max-seconds", str(case.seconds + 30)]
    sub = harness.Child(f"py-sub-{case.idle}", harness.python_child_argv(
        "throughput.py", "sub", *common, "--fragment-limit", str(FRAGMENT_LIMIT)), env)
    pub = None
    try:
        sub.wait_for_line(lambda t: t == "READY", pyclient.SETUP_TIMEOUT_S, "subscriber READY")
        pub = harness.Child(f"py-pub-{case.idle}", harness.python_child_argv(
            "throughput.py", "pub", *common, *(["--offer-batch"] if offer_batch else [])), env)
        pub_start = pub.started
        time.sleep(case.seconds)  # the orchestrator only waits; the children do the work
        pub_stop = time.monotonic()
        pub.stop()
        time.sleep(DRAIN_S)
        sub.stop()
        sent = _last_json(pub)
        rate = steady_rate(_python_reports(sub), pub_start, pub_stop)
    finally:
        if pub is not None:
            pub.stop()
        sub.stop()
    return {"impl": "aeron_py_offer_batch" if offer_batch else "aeron_py", **rate, "publisher": sent}


def _last_json(child: harness.Child) -> dict[str, Any]:
    for line in reversed(child.snapshot()):
        if line.text.startswith("{"):
            return json.loads(line.text)
    raise harness.BenchError(f"{child.name} printed no summary: {child.text()[-400:]} {child.stderr_tail()}")


# --------------------------------------------------------------------------------------------
# C side

_RATE_LINE = re.compile(r"^(\d+)ms, \S+ msgs/sec, \S+ bytes/sec, totals (\d+) messages")
_BACK_PRESSURE = re.compile(r"back pressure ratio ([0-9.eE+-]+|nan|inf)")


def _c_reports(child: harness.Child) -> list[Report]:
    reports = []
    for line in child.snapshot():
        m = _RATE_LINE.match(line.text)
        if m:
            reports.append(Report(line.t, int(m.group(1)) / 1000.0, int(m.group(2))))
    return reports


def c_throughput(tools: Any, aeron_dir: str, env: dict[str, str], case: Case) -> dict[str, Any]:
    """Aeron's streaming_publisher + rate_subscriber (stock for "spin", yield build for "yield")."""
    stream = harness.next_stream_id()
    common = ["-p", aeron_dir, "-c", CHANNEL, "-s", str(stream)]
    sub = harness.Child(f"rate_subscriber-{case.idle}", [
        str(tools.client("rate_subscriber", case.idle)), *common, "-f", str(FRAGMENT_LIMIT)], env, line_buffered=True)
    pub = None
    try:
        sub.wait_for_line(lambda t: t.startswith("Subscription channel status"), pyclient.SETUP_TIMEOUT_S,
                          "rate_subscriber subscription")
        pub = harness.Child(f"streaming_publisher-{case.idle}", [
            str(tools.client("streaming_publisher", case.idle)), *common, "-L", str(MSG_LEN), "-m", str(C_MESSAGES)],
            env, line_buffered=True)
        pub_start = pub.started
        time.sleep(case.seconds)
        pub_stop = time.monotonic()
        pub.stop()
        time.sleep(DRAIN_S)
        sub.stop()
        bp = _BACK_PRESSURE.search(pub.text())
        rate = steady_rate(_c_reports(sub), pub_start, pub_stop)
    finally:
        if pub is not None:
            pub.stop()
        sub.stop()
    return {"impl": "c", **rate, "publisher": {"back_pressure_ratio": float(bp.group(1)) if bp else None},
            "tools": [str(tools.client("streaming_publisher", case.idle)),
                      str(tools.client("rate_subscriber", case.idle))]}


# --------------------------------------------------------------------------------------------


def run_throughput(tools: Any, driver: Any, quick: bool, rounds: int = 1) -> dict[str, Any]:
    """Every case, ``rounds`` times alternating C and aeron_py on the shared driver; the
    summary is the median msgs/s over the successful rounds (and the best round), the
    ratio aeron_py / C of those."""
    results = []
    for case in plan(quick):
        runs = harness.run_rounds(f"throughput idle={case.idle} {case.seconds:.0f}s", rounds, {
            "c": lambda: c_throughput(tools, driver.dir, driver.client_env(), case),
            "aeron_py": lambda: python_throughput(driver.dir, driver.client_env(), case),
            "aeron_py_offer_batch": lambda: python_throughput(driver.dir, driver.client_env(), case, offer_batch=True),
        }, driver.check_alive)
        entry: dict[str, Any] = {"idle": case.idle, "seconds": case.seconds, "msg_len": MSG_LEN,
                                 "channel": CHANNEL, "fragment_limit": FRAGMENT_LIMIT}
        for impl, rounds_out in runs.items():
            rates = [r["msgs_per_s"] for r in rounds_out if "msgs_per_s" in r]
            entry[impl] = {"msgs_per_s": statistics.median(rates) if rates else None,
                           "msgs_per_s_best_round": max(rates) if rates else None, "rounds": rounds_out}
            if rates:
                log.info("  %s idle=%s: %.3g msgs/s (median of %d)", impl, case.idle, entry[impl]["msgs_per_s"],
                         len(rates))
        entry["ratio_aeron_py_over_c"] = harness.ratio(entry["aeron_py"]["msgs_per_s"], entry["c"]["msgs_per_s"])
        entry["ratio_best_round"] = harness.ratio(entry["aeron_py"]["msgs_per_s_best_round"],
                                                    entry["c"]["msgs_per_s_best_round"])
        entry["ratio_offer_batch_over_c"] = harness.ratio(entry["aeron_py_offer_batch"]["msgs_per_s"],
                                                            entry["c"]["msgs_per_s"])
        results.append(entry)
    return {"message_length": MSG_LEN, "warmup_s": WARMUP_S, "rounds": rounds, "cases": results}


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="aeron_py vs Aeron C IPC throughput")
    parser.add_argument("--quick", action="store_true", help="shorter runs")
    parser.add_argument("--rounds", type=int, default=1, help="repeat each case, alternating C and aeron_py")
    roles = parser.add_subparsers(dest="role")
    for role in ("pub", "sub"):
        p = roles.add_parser(role, help=f"internal: the Python {role} process")
        p.add_argument("--dir", required=True)
        p.add_argument("--channel", required=True)
        p.add_argument("--stream", type=int, required=True)
        p.add_argument("--idle", choices=harness.IDLE_MODES, required=True)
        p.add_argument("--max-seconds", type=float, required=True)
        if role == "pub":
            p.add_argument("--offer-batch", action="store_true", help="use Publication.offer_batch")
        if role == "sub":
            p.add_argument("--fragment-limit", type=int, default=FRAGMENT_LIMIT)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.role == "pub":
        return pub_main(args)
    if args.role == "sub":
        return sub_main(args)
    return run_standalone(lambda tools, driver: run_throughput(tools, driver, quick=args.quick, rounds=args.rounds))


if __name__ == "__main__":
    sys.exit(main())
