"""One-in-flight ping/pong round-trip time: aeron_py versus Aeron's C ``cping``/``cpong``.

Both sides run on the same shared C driver (``harness.driver``), over IPC and over UDP
loopback (127.0.0.1, one port per direction), with the same message length, warm-up and
sample counts, exclusive publications and the same idle behaviour (``spin`` or ``yield``,
see ``c_tools``).  The Python ping runs in this process; the Python pong in a child
process (``python -m benchmarks.pingpong pong ...``), like ``cpong``.

Standalone: ``python -m benchmarks.pingpong [--quick]`` prints a JSON summary.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import re
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file (python benchmarks/<name>.py): make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks import harness, pyclient  # noqa: E402
from benchmarks.harness.driver import run_standalone  # noqa: E402

log = logging.getLogger("benchmarks.pingpong")

MSG_LEN = 32
FRAGMENT_LIMIT = 10  # cping/cpong: DEFAULT_FRAGMENT_COUNT_LIMIT
PONG_MAX_SECONDS = 600.0
SAMPLE_TIMEOUT_S = 10.0  # one round trip longer than this means something is broken


@dataclass(frozen=True)
class Case:
    """One RTT measurement configuration, run by both implementations."""

    transport: str  # "ipc" | "udp"
    idle: str  # "spin" | "yield"
    warmup: int
    samples: int
    starved: bool = False  # busy-spinning clients + a driver on the data path > cores
    shape: str = "first"  # peers.py only: the ping/pong loop shape (peer_roles.SHAPES)


def plan(quick: bool) -> list[Case]:
    """The cases of a run.  UDP with busy-spinning clients starves the driver on <= 2 cores,
    so it runs with few samples and is reported separately (not in the headline ratios)."""
    warmup, samples = (2_000, 10_000) if quick else (10_000, 20_000)
    few_cores = (os.cpu_count() or 1) <= 2
    cases = [Case("ipc", "spin", warmup, samples), Case("ipc", "yield", warmup, samples),
             Case("udp", "yield", warmup, samples)]
    if few_cores:
        cases.append(Case("udp", "spin", 20, 150 if quick else 400, starved=True))
    else:
        cases.append(Case("udp", "spin", warmup, samples))
    return cases


def channels(transport: str) -> tuple[str, str]:
    """(ping channel, pong channel) for a fresh measurement."""
    if transport == "ipc":
        return "aeron:ipc", "aeron:ipc"
    if transport == "udp":
        ping_port, pong_port = harness.free_udp_ports(2)
        return f"aeron:udp?endpoint=127.0.0.1:{ping_port}", f"aeron:udp?endpoint=127.0.0.1:{pong_port}"
    raise ValueError(f"unknown transport {transport!r}; expected 'ipc' or 'udp'")


# --------------------------------------------------------------------------------------------
# Python side


# offer() returns the new position (> 0) or a negative retryable result (NOT_CONNECTED,
# BACK_PRESSURED, ADMIN_ACTION); terminal results raise aeron_py's typed OfferError.


def pong_main(args: argparse.Namespace) -> int:
    """Child process: echo every ping back on the pong stream until SIGINT or the deadline."""
    stop = pyclient.StopFlag()
    idle = pyclient.idle_strategy(args.idle)
    client = pyclient.connect(args.dir)
    sub = pyclient.add_subscription(client, args.ping_channel, args.ping_stream)
    pub = pyclient.add_publication(client, args.pong_channel, args.pong_stream, exclusive=True)
    print("READY", flush=True)
    poll, offer, do_idle = sub.poll_batch, pub.offer, idle.idle
    deadline = time.monotonic() + args.max_seconds
    echoed = 0
    loops = 0
    while not stop.stopped:
        got = poll(FRAGMENT_LIMIT)
        for msg in got:
            while offer(msg) < 0:
                if stop.stopped:
                    break
                do_idle(0)
        echoed += len(got)
        do_idle(len(got))
        loops += 1
        if loops & 0xFFFF == 0 and time.monotonic() > deadline:
            break
    print(json.dumps({"echoed": echoed}), flush=True)
    pub.close()
    sub.close()
    client.close()
    return 0


def _ping_loop(pub: Any, sub: Any, idle: Any, count: int, seq0: int) -> list[int]:
    """``count`` one-in-flight round trips; RTT of each in ns (perf_counter_ns, CLOCK_MONOTONIC)."""
    offer, poll, do_idle, clock = pub.offer, sub.poll_batch, idle.idle, time.perf_counter_ns
    pad = bytes(MSG_LEN - 8)
    rtts = [0] * count
    timeout_ns = int(SAMPLE_TIMEOUT_S * 1e9)
    for i in range(count):
        msg = (seq0 + i).to_bytes(8, "little") + pad
        start = clock()
        while (result := offer(msg)) < 0:
            if clock() - start > timeout_ns:
                raise harness.BenchError(f"ping {i}: offer kept failing ({result}) for {SAMPLE_TIMEOUT_S}s")
        spins = 0
        while not (got := poll(FRAGMENT_LIMIT)):
            do_idle(0)
            spins += 1
            if spins & 0xFFF == 0 and clock() - start > timeout_ns:
                raise harness.BenchError(f"ping {i}: no pong within {SAMPLE_TIMEOUT_S}s")
        rtts[i] = clock() - start
        if len(got) != 1 or got[0] != msg:
            raise harness.BenchError(f"ping {i}: expected our own message back, got {len(got)} other(s)")
    return rtts


def python_pingpong(aeron_dir: str, env: dict[str, str], case: Case) -> dict[str, Any]:
    """aeron_py ping (this process) + aeron_py pong (child process)."""
    ping_channel, pong_channel = channels(case.transport)
    ping_stream, pong_stream = harness.next_stream_id(), harness.next_stream_id()
    pong = harness.Child(
        f"py-pong-{case.transport}-{case.idle}",
        harness.python_child_argv(
            "pingpong.py", "pong", "--dir", aeron_dir, "--ping-channel", ping_channel, "--pong-channel",
            pong_channel, "--ping-stream", str(ping_stream), "--pong-stream", str(pong_stream),
            "--idle", case.idle, "--max-seconds", str(PONG_MAX_SECONDS)),
        env)
    client = None
    try:
        pong.wait_for_line(lambda t: t == "READY", pyclient.SETUP_TIMEOUT_S, "READY")
        client = pyclient.connect(aeron_dir)
        sub = pyclient.add_subscription(client, pong_channel, pong_stream)
        pub = pyclient.add_publication(client, ping_channel, ping_stream, exclusive=True)
        pyclient.wait_connected(pub, "ping publication")
        pyclient.wait_connected(sub, "pong subscription")
        idle = pyclient.idle_strategy(case.idle)
        started = time.monotonic()
        _ping_loop(pub, sub, idle, case.warmup, 0)
        rtts = _ping_loop(pub, sub, idle, case.samples, case.warmup)
        wall = time.monotonic() - started
        pub.close()
        sub.close()
    finally:
        if client is not None:
            client.close()
        pong.stop()
    return {"impl": "aeron_py", "rtt_us": harness.percentiles_us(rtts), "wall_s": round(wall, 3),
            "channels": [ping_channel, pong_channel]}


# --------------------------------------------------------------------------------------------
# C side

_HDR_ROW = re.compile(r"^\s*([0-9.]+)\s+([0-9.]+)\s+(\d+)\s+([0-9.]+|inf)\s*$")
_HDR_MEAN = re.compile(r"Mean\s*=\s*([0-9.]+)")
_HDR_MAX = re.compile(r"Max\s*=\s*([0-9.]+),\s*Total count\s*=\s*(\d+)")


def parse_hdr_percentiles(text: str) -> dict[str, float]:
    """cping's HdrHistogram percentile table (values already in us) -> our summary keys.

    A percentile is read from the first table row at or above it (exact for p50/p90; p99
    and p99.9 from the next printed tick, i.e. a slight upper bound)."""
    rows = [(float(m.group(2)), float(m.group(1))) for m in map(_HDR_ROW.match, text.splitlines()) if m]
    mean, maxi = _HDR_MEAN.search(text), _HDR_MAX.search(text)
    if not rows or mean is None or maxi is None:
        raise harness.BenchError(f"no HdrHistogram percentile table in cping output: {text[-600:]}")

    def at(p: float) -> float:
        for pct, value in rows:
            if pct >= p - 1e-9:
                return value
        return rows[-1][1]

    return {"p50": at(0.5), "p90": at(0.9), "p99": at(0.99), "p99_9": at(0.999), "max": float(maxi.group(1)),
            "mean": float(mean.group(1)), "count": float(maxi.group(2))}


def c_pingpong(tools: Any, aeron_dir: str, env: dict[str, str], case: Case) -> dict[str, Any]:
    """Aeron's cping + cpong (stock for idle "spin", the yield build for "yield")."""
    ping_channel, pong_channel = channels(case.transport)
    ping_stream, pong_stream = harness.next_stream_id(), harness.next_stream_id()
    common = ["-p", aeron_dir, "-c", ping_channel, "-C", pong_channel, "-s", str(ping_stream), "-S", str(pong_stream)]
    pong = harness.Child(f"cpong-{case.transport}-{case.idle}", [str(tools.client("cpong", case.idle)), *common], env)
    try:
        ping = harness.Child(
            f"cping-{case.transport}-{case.idle}",
            [str(tools.client("cping", case.idle)), *common, "-L", str(MSG_LEN), "-m", str(case.samples),
             "-w", str(case.warmup)], env)
        # generous: the starved case runs at milliseconds per round trip
        timeout = 30.0 + (case.warmup + case.samples) * (0.05 if case.starved else 0.002)
        started = time.monotonic()
        code = ping.wait(timeout)
        wall = time.monotonic() - started
        if code != 0:
            raise harness.BenchError(f"cping exited {code}: {ping.text()[-600:]} {ping.stderr_tail()}")
        summary = parse_hdr_percentiles(ping.text())
    finally:
        pong.stop()
    return {"impl": "c", "rtt_us": summary, "wall_s": round(wall, 3), "channels": [ping_channel, pong_channel],
            "tools": [str(tools.client("cping", case.idle)), str(tools.client("cpong", case.idle))]}


# --------------------------------------------------------------------------------------------


def run_pingpong(tools: Any, driver: Any, quick: bool, rounds: int = 1) -> dict[str, Any]:
    """Every case, ``rounds`` times alternating C and aeron_py on the shared driver.

    Each implementation's summary is the per-percentile median over its successful rounds
    (plus the per-percentile minimum, the least disturbed round); the ratios are aeron_py / C
    of those medians (and minima)."""
    results = []
    for case in plan(quick):
        label = f"ping/pong {case.transport} idle={case.idle} ({case.warmup} warm-up + {case.samples})"
        runs = harness.run_rounds(label, rounds, {
            "c": lambda: c_pingpong(tools, driver.dir, driver.client_env(), case),
            "aeron_py": lambda: python_pingpong(driver.dir, driver.client_env(), case),
        }, driver.check_alive)
        entry: dict[str, Any] = {"transport": case.transport, "idle": case.idle, "warmup": case.warmup,
                                 "samples": case.samples, "msg_len": MSG_LEN, "starved": case.starved}
        for impl, rounds_out in runs.items():
            ok = [r["rtt_us"] for r in rounds_out if "rtt_us" in r]
            summary = harness.median_by_key(ok)
            entry[impl] = {"rtt_us": summary, "rtt_us_best_round": harness.min_by_key(ok), "rounds": rounds_out}
            if summary:
                log.info("  %s %s/%s: p50 %.2f us  p90 %.2f us  p99 %.2f us (median of %d)", impl, case.transport,
                         case.idle, summary["p50"], summary["p90"], summary["p99"], len(ok))
        for key, field in (("ratio_aeron_py_over_c", "rtt_us"), ("ratio_best_round", "rtt_us_best_round")):
            py, c = entry["aeron_py"][field] or {}, entry["c"][field] or {}
            entry[key] = {k: harness.ratio(py.get(k), c.get(k)) for k in ("p50", "p90", "p99")}
        results.append(entry)
    return {"message_length": MSG_LEN, "fragment_limit": FRAGMENT_LIMIT, "rounds": rounds, "cases": results}


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="aeron_py vs Aeron C ping/pong RTT")
    roles = parser.add_subparsers(dest="role")
    pong = roles.add_parser("pong", help="internal: the Python pong process")
    pong.add_argument("--dir", required=True)
    pong.add_argument("--ping-channel", required=True)
    pong.add_argument("--pong-channel", required=True)
    pong.add_argument("--ping-stream", type=int, required=True)
    pong.add_argument("--pong-stream", type=int, required=True)
    pong.add_argument("--idle", choices=harness.IDLE_MODES, required=True)
    pong.add_argument("--max-seconds", type=float, default=PONG_MAX_SECONDS)
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    parser.add_argument("--rounds", type=int, default=1, help="repeat each case, alternating C and aeron_py")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.role == "pong":
        return pong_main(args)
    return run_standalone(lambda tools, driver: run_pingpong(tools, driver, quick=args.quick, rounds=args.rounds))


if __name__ == "__main__":
    sys.exit(main())
