"""The cost of ``aeron_py.asyncio``: UDP round trip and CPU while idle, versus the sync API.

Set-up: an embedded media driver (SHARED threading, backoff idle: the package defaults)
in a child process (``async_bench.py driver``), the sync Python pong of
``pingpong.py`` (``--idle yield``) in another, and the measured ping side in this process:

* RTT: one-in-flight ping/pong over UDP loopback, 32-byte messages; sync ping
  (``offer`` + ``poll_batch`` with Aeron's backoff or yielding idle strategy) versus the
  async ping (``await pub.offer`` + ``await sub.receive_batch``) with each waker
  (``timer``, ``thread``) under asyncio and uvloop.
* Idle CPU: % of one core used by this process (``/proc/self/stat`` utime+stime) over
  ``--idle-seconds`` while a subscription gets nothing: sync not polling (the floor: the
  client's own conductor and event threads) versus an async ``receive()`` pending.

Usage: ``python -m benchmarks.async_bench [--quick]`` writes ``results/async.json`` and
``results/async.png``, with ratios from this one run (async / sync with backoff idle,
async / sync with yielding idle, thread waker / timer waker); the machine is shared, so
read them as rough.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file (python benchmarks/<name>.py): make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks import harness  # noqa: E402
from benchmarks.harness import probes  # noqa: E402

log = logging.getLogger("benchmarks.async")

MSG_LEN = 32
FRAGMENT_LIMIT = 10
SAMPLE_TIMEOUT_S = 10.0
LOOPS = ("asyncio", "uvloop")
WAKERS = ("timer", "thread")


# ---------------------------------------------------------------------------------------------
# driver child


def driver_main(args: argparse.Namespace) -> int:
    """Child process: an embedded media driver on ``--dir`` until SIGINT/SIGTERM."""
    from aeron_py import MediaDriver

    stop = harness.StopFlag()
    with MediaDriver(args.dir, dir_delete_on_start=True, dir_delete_on_shutdown=True,
                     publication_linger_timeout_ns=0):
        print("READY", flush=True)
        deadline = time.monotonic() + args.max_seconds
        while not stop.stopped and time.monotonic() < deadline:
            time.sleep(0.05)
    return 0


# ---------------------------------------------------------------------------------------------
# measurements


def _cpu_seconds() -> float:
    """utime + stime of this process."""
    return probes.thread_times(os.getpid())["<process>"]


def _message(seq: int) -> bytes:
    return seq.to_bytes(8, "little") + bytes(MSG_LEN - 8)


def sync_ping(aeron_dir: str, ping: tuple[str, int], pong: tuple[str, int], idle_name: str,
              warmup: int, samples: int) -> list[int]:
    import aeron_py

    idle = aeron_py.BackoffIdleStrategy() if idle_name == "backoff" else aeron_py.YieldingIdleStrategy()
    with aeron_py.Aeron(aeron_dir) as aeron:
        sub = aeron.add_subscription(pong[0], pong[1])
        pub = aeron.add_exclusive_publication(ping[0], ping[1])
        harness.wait_until(lambda: pub.is_connected and sub.is_connected, 10, "sync ping channels")
        rtts = []
        clock = time.perf_counter_ns
        for i in range(warmup + samples):
            msg = _message(i)
            start = clock()
            while pub.offer(msg) < 0:
                if clock() - start > SAMPLE_TIMEOUT_S * 1e9:
                    raise harness.BenchError(f"sync ping {i}: offer kept failing")
                idle.idle(0)
            while not (got := sub.poll_batch(FRAGMENT_LIMIT)):
                if clock() - start > SAMPLE_TIMEOUT_S * 1e9:
                    raise harness.BenchError(f"sync ping {i}: no pong")
                idle.idle(0)
            if got != [msg]:
                raise harness.BenchError(f"sync ping {i}: expected our message back, got {got!r}")
            if i >= warmup:
                rtts.append(clock() - start)
        return rtts


async def async_ping(aeron_dir: str, ping: tuple[str, int], pong: tuple[str, int], waker: str,
                     warmup: int, samples: int) -> list[int]:
    import aeron_py.asyncio as aio

    async with aio.Aeron(aeron_dir, waker=waker) as aeron:  # type: ignore[arg-type]
        sub = await aeron.add_subscription(pong[0], pong[1], with_header=False, fragment_limit=FRAGMENT_LIMIT)
        pub = await aeron.add_exclusive_publication(ping[0], ping[1])
        await pub.wait_connected(10)
        await sub.wait_connected(10)
        rtts = []
        clock = time.perf_counter_ns
        for i in range(warmup + samples):
            msg = _message(i)
            start = clock()
            await pub.offer(msg, timeout=SAMPLE_TIMEOUT_S)
            got = await asyncio.wait_for(sub.receive_batch(FRAGMENT_LIMIT), SAMPLE_TIMEOUT_S)
            if [m.data for m in got] != [msg]:
                raise harness.BenchError(f"async ping {i}: expected our message back, got {got!r}")
            if i >= warmup:
                rtts.append(clock() - start)
        return rtts


def run_loop(loop_name: str, main: Callable[[], Coroutine[Any, Any, Any]]) -> Any:
    if loop_name == "uvloop":
        import uvloop
        return uvloop.run(main())
    return asyncio.run(main())


def sync_idle_cpu(aeron_dir: str, channel: tuple[str, int], seconds: float) -> float:
    import aeron_py

    with aeron_py.Aeron(aeron_dir) as aeron:
        aeron.add_subscription(channel[0], channel[1])
        start_cpu, start = _cpu_seconds(), time.monotonic()
        time.sleep(seconds)  # the measured idleness itself: nothing polls
        return 100.0 * (_cpu_seconds() - start_cpu) / (time.monotonic() - start)


async def async_idle_cpu(aeron_dir: str, channel: tuple[str, int], waker: str, seconds: float) -> float:
    import aeron_py.asyncio as aio

    async with aio.Aeron(aeron_dir, waker=waker) as aeron:  # type: ignore[arg-type]
        sub = await aeron.add_subscription(channel[0], channel[1])
        pending = asyncio.ensure_future(sub.receive())
        await asyncio.sleep(0.05)
        start_cpu, start = _cpu_seconds(), time.monotonic()
        await asyncio.sleep(seconds)  # the measured idleness: a receive is pending, nothing arrives
        used = 100.0 * (_cpu_seconds() - start_cpu) / (time.monotonic() - start)
        if pending.done():
            raise harness.BenchError(f"idle receive completed: {pending.result()!r}")
        pending.cancel()
        return used


# ---------------------------------------------------------------------------------------------
# the run


def measure(quick: bool, idle_seconds: float) -> dict[str, Any]:
    warmup, samples = (300, 2000) if quick else (1000, 5000)
    aeron_dir = f"/dev/shm/aeron-py-async-bench-{os.getpid()}"
    env = harness.aeron_free_env()
    driver = harness.Child("async-driver", harness.python_child_argv(
        "async_bench.py", "driver", "--dir", aeron_dir), env)
    results: dict[str, Any] = {"machine": harness.machine_info(), "message_length": MSG_LEN,
                               "warmup": warmup, "samples": samples, "idle_seconds": idle_seconds,
                               "rtt_us": {}, "idle_cpu_percent": {}}
    try:
        driver.wait_for_line(lambda t: t == "READY", 20, "driver READY")
        ping_port, pong_port = harness.free_udp_ports(2)
        ping_stream, pong_stream = harness.next_stream_id(), harness.next_stream_id()
        ping = (f"aeron:udp?endpoint=127.0.0.1:{ping_port}", ping_stream)
        pong = (f"aeron:udp?endpoint=127.0.0.1:{pong_port}", pong_stream)
        pong_child = harness.Child("async-pong", harness.python_child_argv(
            "pingpong.py", "pong", "--dir", aeron_dir, "--ping-channel", ping[0], "--pong-channel", pong[0],
            "--ping-stream", str(ping[1]), "--pong-stream", str(pong[1]), "--idle", "yield",
            "--max-seconds", "900"), env)
        try:
            pong_child.wait_for_line(lambda t: t == "READY", 20, "pong READY")
            cases: list[tuple[str, Callable[[], list[int]]]] = [
                (f"sync {idle}", lambda idle=idle: sync_ping(aeron_dir, ping, pong, idle, warmup, samples))
                for idle in ("backoff", "yield")]
            for loop_name in LOOPS:
                for waker in WAKERS:
                    cases.append((f"async {waker} {loop_name}", lambda w=waker, ln=loop_name: run_loop(
                        ln, lambda: async_ping(aeron_dir, ping, pong, w, warmup, samples))))
            for name, run in cases:
                log.info("RTT %s", name)
                results["rtt_us"][name] = harness.percentiles_us(run())
                log.info("  p50 %.1f us p99 %.1f us", results["rtt_us"][name]["p50"], results["rtt_us"][name]["p99"])
        finally:
            pong_child.stop()
        quiet = (f"aeron:udp?endpoint=127.0.0.1:{harness.free_udp_ports(1)[0]}", harness.next_stream_id())
        results["idle_cpu_percent"]["sync not polling"] = sync_idle_cpu(aeron_dir, quiet, idle_seconds)
        for loop_name in LOOPS:
            for waker in WAKERS:
                name = f"async {waker} {loop_name}"
                results["idle_cpu_percent"][name] = run_loop(
                    loop_name, lambda w=waker: async_idle_cpu(aeron_dir, quiet, w, idle_seconds))
        log.info("idle CPU %%: %s", results["idle_cpu_percent"])
    finally:
        driver.stop()
    for sync in ("backoff", "yield"):
        base = results["rtt_us"][f"sync {sync}"]
        results[f"ratio_over_sync_{sync}"] = {name: {p: harness.ratio(v[p], base[p]) for p in ("p50", "p99")}
                                              for name, v in results["rtt_us"].items() if name.startswith("async")}
    timer_cpu = {n: v for n, v in results["idle_cpu_percent"].items() if "timer" in n}
    results["ratio_thread_over_timer"] = {
        name.replace("timer", "thread"): {
            "rtt_p50": harness.ratio(results["rtt_us"][name.replace("timer", "thread")]["p50"],
                                       results["rtt_us"][name]["p50"]),
            "idle_cpu": harness.ratio(results["idle_cpu_percent"][name.replace("timer", "thread")], cpu)}
        for name, cpu in timer_cpu.items()}
    return results


def render(results: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (rtt_ax, cpu_ax) = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    names = list(results["rtt_us"])
    for k, pct in enumerate(("p50", "p99")):
        xs = [i + (k - 0.5) * 0.38 for i in range(len(names))]
        heights = [results["rtt_us"][n][pct] for n in names]
        rtt_ax.bar(xs, heights, 0.38, label=pct)
        for x, h in zip(xs, heights):
            rtt_ax.annotate(f"{h:.3g}", (x, h), ha="center", va="bottom", fontsize=7)
    rtt_ax.set_xticks(range(len(names)))
    rtt_ax.set_xticklabels([n.replace(" ", "\n", 1) for n in names], fontsize=7)
    rtt_ax.set_yscale("log")
    rtt_ax.set_ylabel("UDP round trip (µs, log)")
    rtt_ax.set_title("ping/pong RTT: sync vs aeron_py.asyncio")
    rtt_ax.legend()
    cpu = results["idle_cpu_percent"]
    cpu_ax.bar(range(len(cpu)), list(cpu.values()), color="#ff7f0e")
    for i, v in enumerate(cpu.values()):
        cpu_ax.annotate(f"{v:.2f}", (i, v), ha="center", va="bottom", fontsize=7)
    cpu_ax.set_xticks(range(len(cpu)))
    cpu_ax.set_xticklabels([n.replace(" ", "\n", 1) for n in cpu], fontsize=7)
    cpu_ax.set_ylabel("% of one core")
    cpu_ax.set_title(f"CPU while idle ({results['idle_seconds']:g} s, receive pending)")
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def history_row(results: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of a run, flat, for ``results/history/async.csv``."""
    row: dict[str, Any] = {"samples": results.get("samples")}
    for name, rtt in (results.get("rtt_us") or {}).items():
        key = name.replace(" ", "_")
        row[f"rtt_p50_us_{key}"], row[f"rtt_p99_us_{key}"] = rtt.get("p50"), rtt.get("p99")
    for name, cpu in (results.get("idle_cpu_percent") or {}).items():
        row[f"idle_cpu_pct_{name.replace(' ', '_')}"] = cpu
    return row


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    roles = parser.add_subparsers(dest="role")
    drv = roles.add_parser("driver", help="internal: the media driver child process")
    drv.add_argument("--dir", required=True)
    drv.add_argument("--max-seconds", type=float, default=900.0)
    parser.add_argument("--quick", action="store_true", help="fewer RTT samples (300 warm-up + 2000)")
    parser.add_argument("--idle-seconds", type=float, default=6.0, help="length of each idle-CPU measurement")
    parser.add_argument("--out", type=Path, default=harness.RESULTS_DIR, help="directory for async.json/png")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    if args.role == "driver":
        return driver_main(args)
    if args.idle_seconds < 5:
        raise SystemExit("--idle-seconds must be >= 5")
    harness.install_signal_cleanup()
    results = measure(args.quick, args.idle_seconds)
    harness.save_run(args.out, "async", results, history_row(results), render, "quick" if args.quick else "")
    print(json.dumps({k: results[k] for k in ("ratio_over_sync_backoff", "ratio_over_sync_yield",
                                              "ratio_thread_over_timer", "idle_cpu_percent")}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
