"""Time one polling pass over N subscriptions: a Python loop of ``sub.poll`` vs one ``PollSet.poll``.

    python -m benchmarks.poll_set_bench [--sizes 10 100 1000 5000] [--seconds 0.5]

Each of the N IPC subscriptions has one connected publication (one image, as a server's
duologue has), in an embedded driver (SHARED threading, backoff idle). Two workloads:

* idle: nothing is published; the time of a pass is the pure cost of looking at N entries;
* active: before each pass (untimed) one message is offered on 1 % of the streams
  (at least one), round robin; the pass delivers them as (key, session_id, bytes) in both
  implementations (the Python loop's handlers append the same tuples).

Reported per N and workload: microseconds per pass (median and minimum; passes of the two
implementations alternate, so load changes hit both alike) and the ratio loop / set of the
medians, from one run (the machine is shared: ratios, not absolute numbers, are the
result). Writes ``benchmarks/results/poll_set.json`` and ``poll_set.png``.
"""
from __future__ import annotations

import argparse
import itertools
import logging
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # this tree's aeron_py and the benchmarks package

from benchmarks.harness import RESULTS_DIR, BenchError, machine_info, ratio, save_run, wait_until  # noqa: E402

from aeron_py import Aeron, AeronError, MediaDriver, PollSet, Publication, Subscription  # noqa: E402

T = TypeVar("T")

log = logging.getLogger("benchmarks.poll_set")

CHANNEL = "aeron:ipc?term-length=64k"  # 3 x 64 KiB per publication keeps 5,000 streams small
_streams = itertools.count(20_000)  # fresh stream ids per size: nothing lingering joins
ADD_BATCH = 100  # the client conductor command queue holds a few hundred commands


def retry_full(start: Callable[[], T]) -> T:
    """``start()``, retried while the client's command queue is full (closes still draining)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return start()
        except AeronError as exc:
            if "command buffer full" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.001)


def connect(aeron: Aeron, count: int) -> tuple[list[Subscription], list[Publication]]:
    """``count`` subscriptions, each with one connected publication (added asynchronously in batches)."""
    subs: list[Subscription] = []
    pubs: list[Publication] = []
    for first in range(0, count, ADD_BATCH):
        streams = [next(_streams) for _ in range(min(ADD_BATCH, count - first))]
        pending_subs = [retry_full(lambda: aeron.async_add_subscription(CHANNEL, s)) for s in streams]
        pending_pubs = [retry_full(lambda: aeron.async_add_publication(CHANNEL, s)) for s in streams]
        got_subs: list[Subscription | None] = [None] * len(pending_subs)
        got_pubs: list[Publication | None] = [None] * len(pending_pubs)

        def done() -> bool:
            for i, add_sub in enumerate(pending_subs):
                if got_subs[i] is None:
                    got_subs[i] = add_sub.poll()
            for i, add_pub in enumerate(pending_pubs):
                if got_pubs[i] is None:
                    got_pubs[i] = add_pub.poll()
            return all(s is not None for s in got_subs) and all(p is not None for p in got_pubs)

        wait_until(done, 120, f"{len(streams)} subscriptions and publications")
        subs.extend(s for s in got_subs if s is not None)
        pubs.extend(p for p in got_pubs if p is not None)
    wait_until(lambda: all(p.is_connected for p in pubs) and all(s.image_count == 1 for s in subs), 60, "images")
    return subs, pubs


def interleaved_passes(runs: dict[str, Callable[[], int]], before: Callable[[int], int],
                       seconds: float) -> dict[str, dict[str, float]]:
    """Time single passes of each implementation in turn (so load changes hit both alike) until
    ``seconds`` of timed work and at least 21 passes each; median and minimum µs per pass."""
    samples: dict[str, list[int]] = {name: [] for name in runs}
    offered = {name: 0 for name in runs}
    delivered = {name: 0 for name in runs}
    spent = 0
    passes = 0
    deadline = time.monotonic() + max(10 * seconds, 5.0)
    while (spent < seconds * 1e9 or passes < 21) and time.monotonic() < deadline:
        for name, run_pass in runs.items():
            offered[name] += before(passes)
            t0 = time.perf_counter_ns()
            delivered[name] += run_pass()
            elapsed = time.perf_counter_ns() - t0
            samples[name].append(elapsed)
            spent += elapsed
        passes += 1
    return {name: {"us_per_pass": round(statistics.median(samples[name]) / 1000.0, 3),
                   "min_us_per_pass": round(min(samples[name]) / 1000.0, 3), "passes": passes,
                   "offered": offered[name], "delivered": delivered[name]} for name in runs}


def measure(subs: list[Subscription], pubs: list[Publication], active: bool, seconds: float) -> dict[str, Any]:
    n = len(subs)
    got: list[tuple[int, int, bytes]] = []

    def handler_for(key: int) -> Callable[[bytes, Any], None]:
        def handler(data: bytes, header: Any) -> None:
            got.append((key, header.session_id, data))
        return handler

    pairs = [(sub, handler_for(i)) for i, sub in enumerate(subs)]
    ps: PollSet[int] = PollSet()
    for i, sub in enumerate(subs):
        ps.add(sub, i)
    per_pass = max(1, n // 100) if active else 0
    payload = b"x" * 32

    def before(pass_no: int) -> int:
        for k in range(per_pass):
            pub = pubs[(pass_no * per_pass + k) % n]
            wait_until(lambda: pub.offer(payload) > 0, 5, "offer")
        return per_pass

    def python_loop() -> int:
        got.clear()
        for sub, handler in pairs:
            sub.poll(handler, 10)
        return len(got)

    def poll_set() -> int:
        return len(ps.poll(10))

    timed = interleaved_passes({"python_loop": python_loop, "poll_set": poll_set}, before, seconds)
    loop, one_call = timed["python_loop"], timed["poll_set"]
    ps.clear()
    for name, result in timed.items():
        if result["delivered"] != result["offered"]:
            raise BenchError(f"{name}: {result['offered']} offered, {result['delivered']} delivered")
    return {"python_loop": loop, "poll_set": one_call,
            "ratio_loop_over_set": ratio(loop["us_per_pass"], one_call["us_per_pass"])}


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.5), dpi=100)
    axes = fig.subplots(1, 2)
    sizes = [case["subscriptions"] for case in results["cases"]]
    for ax, workload in zip(axes, ("idle", "active")):
        for impl, label, marker in (("python_loop", "Python loop of sub.poll", "o"),
                                    ("poll_set", "PollSet.poll (one call)", "s")):
            ax.plot(sizes, [c[workload][impl]["us_per_pass"] for c in results["cases"]], marker=marker, label=label)
        for c in results["cases"]:
            ax.annotate(f"{c[workload]['ratio_loop_over_set']:.3g}x", (c["subscriptions"],
                        c[workload]["python_loop"]["us_per_pass"]), textcoords="offset points", xytext=(0, 8),
                        ha="center", fontsize=8)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("subscriptions (one image each, IPC)")
        ax.set_ylabel("µs per pass (log)")
        ax.set_title("idle" if workload == "idle" else "1 % of the streams get a message per pass")
        ax.legend(fontsize=8)
    fig.suptitle(f"One polling pass: Python loop vs PollSet (ratio = loop / set), "
                 f"{results['machine']['cpu_count']} cores, load {results['load_avg_start'][0]:.1f}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path)


def history_row(results: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of a run, flat, for ``results/history/poll_set.csv``."""
    row: dict[str, Any] = {"load_1min_start": (results.get("load_avg_start") or [None])[0]}
    for case in results.get("cases") or []:
        for workload in ("idle", "active"):
            name = f"{workload}_{case['subscriptions']}"
            row[f"{name}_loop_us_per_pass"] = case[workload]["python_loop"]["us_per_pass"]
            row[f"{name}_set_us_per_pass"] = case[workload]["poll_set"]["us_per_pass"]
            row[f"{name}_ratio_loop_over_set"] = case[workload]["ratio_loop_over_set"]
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 5000],
                        help="numbers of subscriptions to measure (default: 10 100 1000 5000)")
    parser.add_argument("--seconds", type=float, default=0.5,
                        help="timed work per implementation, size and workload (default 0.5)")
    parser.add_argument("--results-dir", type=Path, default=RESULTS_DIR,
                        help="where poll_set.json and poll_set.png go (default benchmarks/results)")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress")
    args = parser.parse_args(argv)
    if any(n < 1 for n in args.sizes):
        parser.error("--sizes must be positive")
    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(name)s %(message)s")

    import os

    results: dict[str, Any] = {"machine": machine_info(), "load_avg_start": os.getloadavg(),
                               "channel": CHANNEL, "cases": []}
    with MediaDriver(publication_linger_timeout_ns=0) as driver, Aeron(driver=driver) as aeron:
        for n in sorted(args.sizes):
            started = time.monotonic()
            subs, pubs = connect(aeron, n)
            log.info("%d streams connected in %.1f s", n, time.monotonic() - started)
            case = {"subscriptions": n, "idle": measure(subs, pubs, False, args.seconds),
                    "active": measure(subs, pubs, True, args.seconds)}
            results["cases"].append(case)
            print(f"{n:>6} subscriptions: idle {case['idle']['python_loop']['us_per_pass']:.1f} µs loop vs "
                  f"{case['idle']['poll_set']['us_per_pass']:.1f} µs set ({case['idle']['ratio_loop_over_set']}x); "
                  f"1% active {case['active']['python_loop']['us_per_pass']:.1f} vs "
                  f"{case['active']['poll_set']['us_per_pass']:.1f} µs ({case['active']['ratio_loop_over_set']}x)",
                  flush=True)
            for pub in pubs:
                pub.close()
            for sub in subs:
                sub.close()
    results["load_avg_end"] = os.getloadavg()
    paths = save_run(args.results_dir, "poll_set", results, history_row(results), plot)
    print(f"results: {paths[0]}, {paths[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
