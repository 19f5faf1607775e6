"""Secure transport against plain UDP: what sealing and opening every datagram costs.

Two processes on one machine, each with its own embedded media driver (``MediaDriver``, the
defaults a user gets: SHARED threading, backoff idle), talking over UDP loopback. This
process pings, a child process (``python -m benchmarks.secure_transport pong ...``) echoes.
The same code runs *plain* (``secure_transport=False``) and *secure* (``True``, both sessions
keyed on both sides), alternated round by round:

- RTT: one message in flight, ``--samples`` round trips at 32 B and 1 KiB, p50/p99;
- throughput: ``--messages`` messages one way as fast as the publication accepts them, timed
  until the child has received the last; messages per second at 32 B and 1 KiB;
- IPC (both drivers secure vs plain, one process, ``aeron:ipc``): RTT at 32 B, to show it is
  untouched.

Clients poll with ``sched_yield`` between empty polls (no busy spin on 2 cores). Results:
``results/secure_transport.json`` and ``.png`` and a row of ``results/history/secure_transport.csv``;
the headline is the ratio secure / plain (targets: RTT p50 <= 1.2x, throughput >= 0.7x).
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import select
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks import harness  # noqa: E402
from benchmarks.harness.children import BenchError, Child, python_child_argv  # noqa: E402

log = logging.getLogger("benchmarks.secure_transport")

PING_STREAM, PONG_STREAM = 3001, 3002
PING_SESSION, PONG_SESSION = 31001, 31002
SIZES = (32, 1024)
WAIT_S = 20.0


def poll_until(sub: Any, handler: Any, done: Any, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not done():
        if sub.poll(handler, 10) == 0:
            if time.monotonic() > deadline:
                raise BenchError("timed out waiting for a message")
            os.sched_yield()


def open_side(secure: bool, key: bytes, sub_port: int, sub_stream: int, pub_port: int, pub_stream: int,
              pub_session: int, sub_session: int) -> tuple[Any, Any, Any, Any]:
    """A driver, client, subscription (on ``sub_port``) and publication (to ``pub_port``)."""
    from aeron_py import Aeron, MediaDriver
    from aeron_py.secure import Role

    driver = MediaDriver(secure_transport=secure)
    if secure:
        driver.secure_transport.add(Role.SUBSCRIPTION, port=sub_port, stream_id=sub_stream, session_id=sub_session,
                                    key=key)
        driver.secure_transport.add(Role.PUBLICATION, stream_id=pub_stream, session_id=pub_session, key=key)
    client = Aeron(driver=driver)
    sub = client.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{sub_port}", sub_stream)
    pub = client.add_publication(f"aeron:udp?endpoint=127.0.0.1:{pub_port}|session-id={pub_session}", pub_stream)
    return driver, client, sub, pub


def pong_main(args: argparse.Namespace) -> int:
    """The child: echo every ping back; 'COUNT n' after a throughput burst's end marker."""
    driver, client, sub, pub = open_side(args.mode == "secure", bytes.fromhex(args.key), args.ping_port,
                                         PING_STREAM, args.pong_port, PONG_STREAM, PONG_SESSION, PING_SESSION)
    received = 0
    print("READY", flush=True)

    def on_message(data: bytes, header: Any) -> None:
        nonlocal received
        if data[:1] == b"T":            # throughput traffic: count only
            received += 1
        elif data[:1] == b"E":          # end of a burst: report the count
            pub.offer_until(b"C" + str(received).encode(), timeout=WAIT_S)
            received = 0
        else:
            pub.offer_until(data, timeout=WAIT_S)

    try:
        deadline = time.monotonic() + args.max_seconds
        polls = 0
        while time.monotonic() < deadline:
            if sub.poll(on_message, 10) == 0:
                os.sched_yield()
            polls += 1
            if polls % 4096 == 0 and select.select([sys.stdin], [], [], 0)[0] and not sys.stdin.read(1):
                break  # the parent closed our stdin: stop
    except KeyboardInterrupt:
        pass
    finally:
        client.close()
        driver.close()
    return 0


def measure_rtt(pub: Any, sub: Any, size: int, warmup: int, samples: int) -> dict[str, float]:
    payload = b"P" * size
    got: list[bytes] = []
    times: list[int] = []
    for i in range(warmup + samples):
        got.clear()
        start = time.perf_counter_ns()
        pub.offer_until(payload, timeout=WAIT_S)
        poll_until(sub, lambda data, header: got.append(data), lambda: bool(got), WAIT_S)
        if i >= warmup:
            times.append(time.perf_counter_ns() - start)
    return harness.percentiles_us(times)


def measure_throughput(pub: Any, sub: Any, size: int, messages: int) -> dict[str, float]:
    payload = b"T" * size
    counted: list[int] = []
    start = time.perf_counter()
    for _ in range(messages):
        pub.offer_until(payload, timeout=WAIT_S)
    pub.offer_until(b"E", timeout=WAIT_S)
    poll_until(sub, lambda data, header: counted.append(int(data[1:])), lambda: bool(counted), 60.0)
    elapsed = time.perf_counter() - start
    if counted[0] != messages:
        raise BenchError(f"the pong counted {counted[0]} of {messages} messages")
    return {"msgs_per_s": round(messages / elapsed), "seconds": round(elapsed, 3)}


def one_round(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    key = os.urandom(32)
    ping_port, pong_port = harness.free_udp_ports(2)
    child = Child(f"pong-{mode}", python_child_argv(
        "secure_transport.py", "pong", "--mode", mode, "--key", key.hex(), "--ping-port", str(ping_port),
        "--pong-port", str(pong_port), "--max-seconds", "600"), harness.aeron_free_env(), stdin=True)
    try:
        child.wait_for_line(lambda line: line == "READY", 30, "the pong to start")
        driver, client, sub, pub = open_side(mode == "secure", key, pong_port, PONG_STREAM, ping_port, PING_STREAM,
                                             PING_SESSION, PONG_SESSION)
        try:
            harness.wait_until(lambda: pub.is_connected and sub.is_connected, WAIT_S, "both ways connected")
            result: dict[str, Any] = {}
            for size in SIZES:
                result[f"rtt_{size}"] = measure_rtt(pub, sub, size, args.warmup, args.samples)
                result[f"throughput_{size}"] = measure_throughput(pub, sub, size, args.messages)
            if mode == "secure":
                result["counters"] = driver.secure_transport.counters()
            return result
        finally:
            client.close()
            driver.close()
    finally:
        child.stop()


def ipc_round(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    from aeron_py import Aeron, MediaDriver

    with MediaDriver(secure_transport=mode == "secure") as driver, Aeron(driver=driver) as client:
        sub = client.add_subscription("aeron:ipc", PING_STREAM)
        pub = client.add_publication("aeron:ipc", PING_STREAM)
        harness.wait_until(lambda: pub.is_connected and sub.is_connected, WAIT_S, "IPC connected")
        return {"rtt_32": measure_rtt(pub, sub, 32, args.warmup, args.samples)}


def summarize(rounds: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """Per mode the median over rounds of each headline number, and secure / plain ratios."""
    keys = [f"rtt_{n}" for n in SIZES] + [f"throughput_{n}" for n in SIZES]
    medians: dict[str, dict[str, float]] = {}
    for mode, results in rounds.items():
        ok = [r for r in results if "error" not in r]
        if not ok:
            continue
        medians[mode] = {}
        for key in keys:
            field = "msgs_per_s" if key.startswith("throughput") else "p50"
            medians[mode][key] = statistics.median(r[key][field] for r in ok)
            if key.startswith("rtt"):
                medians[mode][key + "_p99"] = statistics.median(r[key]["p99"] for r in ok)
    ratios = {key: harness.ratio(medians.get("secure", {}).get(key), medians.get("plain", {}).get(key))
              for key in medians.get("plain", {})}
    return {"medians": medians, "ratios": ratios}


def render(results: dict[str, Any], png: Path) -> None:
    plt = harness.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    medians = results["udp"]["medians"]
    modes = [m for m in ("plain", "secure") if m in medians]
    for ax, (prefix, unit) in zip(axes, (("rtt", "RTT p50 (us)"), ("throughput", "messages/s"))):
        width = 0.35
        for i, mode in enumerate(modes):
            values = [medians[mode][f"{prefix}_{n}"] for n in SIZES]
            ax.bar([x + i * width for x in range(len(SIZES))], values, width, label=mode)
        ax.set_xticks([x + width / 2 for x in range(len(SIZES))], [f"{n} B" for n in SIZES])
        ax.set_ylabel(unit)
        ax.legend()
    ratios = results["udp"]["ratios"]
    fig.suptitle("UDP loopback, secure / plain: " + ", ".join(
        f"{k} {v}x" for k, v in ratios.items() if v is not None and not k.endswith("_p99")), fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("role", nargs="?", default="bench", choices=("bench", "pong"), help="(pong: the child's role)")
    p.add_argument("--quick", action="store_true", help="2 rounds, fewer samples (~1 min)")
    p.add_argument("--rounds", type=int, default=4, help="rounds per mode, alternated (4)")
    p.add_argument("--samples", type=int, default=5000, help="round trips per size and round (5000)")
    p.add_argument("--warmup", type=int, default=1000, help="round trips before measuring (1000)")
    p.add_argument("--messages", type=int, default=100_000, help="messages per throughput burst (100000)")
    p.add_argument("--out-dir", type=Path, default=harness.RESULTS_DIR)
    p.add_argument("--label", default="", help="label of the history row")
    for name in ("--mode", "--key", "--ping-port", "--pong-port", "--max-seconds"):
        p.add_argument(name, help=argparse.SUPPRESS)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.role == "pong":
        args.ping_port, args.pong_port = int(args.ping_port), int(args.pong_port)
        args.max_seconds = float(args.max_seconds)
        return pong_main(args)
    if args.quick:
        args.rounds, args.samples, args.warmup, args.messages = 2, 1000, 200, 20_000
    harness.install_signal_cleanup()
    results: dict[str, Any] = {"quick": args.quick, "rounds": args.rounds, "samples": args.samples,
                               "messages": args.messages, "machine": harness.machine_info(),
                               "defaults": "MediaDriver() defaults: SHARED threading, backoff idle; mtu 1408"}
    results["machine"]["loadavg_before"] = os.getloadavg()
    udp = harness.run_rounds("udp", args.rounds, {m: (lambda m=m: one_round(m, args)) for m in ("plain", "secure")},
                             lambda: None)
    ipc = harness.run_rounds("ipc", args.rounds, {m: (lambda m=m: ipc_round(m, args)) for m in ("plain", "secure")},
                             lambda: None)
    results["udp"] = {"rounds": udp, **summarize(udp)}
    ipc_p50 = {m: statistics.median(r["rtt_32"]["p50"] for r in rs if "error" not in r) for m, rs in ipc.items()
               if any("error" not in r for r in rs)}
    results["ipc"] = {"rounds": ipc, "rtt_32_p50": ipc_p50,
                      "ratio": harness.ratio(ipc_p50.get("secure"), ipc_p50.get("plain"))}
    headline = {**harness.rounds_row(results), **{f"udp_{k}_ratio": v for k, v in results["udp"]["ratios"].items()},
                "ipc_rtt_32_ratio": results["ipc"]["ratio"]}
    harness.save_run(args.out_dir, "secure_transport", results, headline, render, args.label)
    print(json.dumps({"udp": results["udp"]["ratios"], "ipc": results["ipc"]["ratio"],
                      "medians": results["udp"]["medians"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
