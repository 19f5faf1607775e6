"""Run the aeron_py-vs-Aeron-C benchmarks and write results/bindings.{json,png}.

Usage: ``python benchmarks/run_all.py [--quick] [--rounds N]``

Builds Aeron's C tools from the pinned tree if needed (``c_tools``), starts ONE C media
driver for the whole run (``shared_driver``), runs the ping/pong RTT comparison
(``pingpong``) and the IPC throughput comparison (``throughput``) on it, and reports
aeron_py / C ratios against the targets (reported, never asserted):
RTT p50 <= 2.5x C, throughput >= 25 % of C.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import benchutil  # noqa: E402
import c_tools  # noqa: E402
import pingpong  # noqa: E402
import plot  # noqa: E402
import shared_driver  # noqa: E402
import throughput  # noqa: E402
from aeron_py import _aeron  # noqa: E402

log = logging.getLogger("benchmarks.run_all")

RTT_P50_TARGET = 2.5  # aeron_py p50 RTT at most this many times C's
THROUGHPUT_TARGET = 0.25  # aeron_py throughput at least this fraction of C's


def _loadavg() -> list[float] | None:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return None


def _aeron_py_version() -> str | None:
    try:
        return metadata.version("aeron_py")
    except metadata.PackageNotFoundError:
        return None


def targets(pp: dict[str, Any], tp: dict[str, Any]) -> dict[str, Any]:
    """The targets, per case: the ratio, the target and whether it was met (None = no data)."""
    rtt = {}
    for case in pp["cases"]:
        r, best = case["ratio_aeron_py_over_c"]["p50"], case["ratio_best_round"]["p50"]
        rtt[f"{case['transport']}/{case['idle']}"] = {
            "ratio_p50": r, "ratio_p50_best_round": best, "target_max": RTT_P50_TARGET,
            "met": None if r is None else r <= RTT_P50_TARGET, "headline": not case["starved"]}
    thr = {}
    for case in tp["cases"]:
        r = case["ratio_aeron_py_over_c"]
        rb = case.get("ratio_offer_batch_over_c")
        thr[f"ipc/{case['idle']}"] = {"ratio": r, "ratio_best_round": case["ratio_best_round"],
                                      "ratio_offer_batch": rb, "target_min": THROUGHPUT_TARGET,
                                      "met": None if r is None else r >= THROUGHPUT_TARGET,
                                      "met_with_offer_batch": None if rb is None else rb >= THROUGHPUT_TARGET}
    return {"rtt_p50": rtt, "throughput": thr}


FAIRNESS_NOTES = [
    "One aeronmd (Aeron's own C driver, built from the same pinned tree as aeron_py) serves every "
    "measurement of a run, configured only by environment: SHARED threading, backoff idle, "
    "dir under /dev/shm deleted on start and shutdown; all other driver settings are Aeron defaults.",
    "C tools connect with -p <dir>; aeron_py clients with Client(dir=<dir>); client settings default.",
    "Aeron's C samples hard-code aeron_idle_strategy_busy_spinning_idle (no option or env var). "
    "idle=spin uses the stock binaries and _aeron.IdleStrategy('spin') (the same C function); "
    "idle=yield uses the samples rebuilt from unmodified sources with "
    "-Daeron_idle_strategy_busy_spinning_idle=aeron_idle_strategy_yielding_idle and "
    "_aeron.IdleStrategy('yield').",
    "UDP with busy-spinning clients needs 3 CPUs (ping, pong, driver); on <= 2 cores the driver is "
    "starved and RTT measures the scheduler, so udp/spin runs few samples and is marked starved.",
    "Same message length, warm-up/sample counts, exclusive publications (ping/pong), concurrent "
    "publication (throughput), fragment limits, channels shape; RTT is measured on CLOCK_MONOTONIC "
    "on both sides; C percentiles come from cping's HdrHistogram (3 significant digits).",
]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="aeron_py vs Aeron C tools benchmarks")
    parser.add_argument("--quick", action="store_true", help="fewer samples, shorter runs")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per case (default 2 quick, 3 full)")
    parser.add_argument("--out-dir", type=Path, default=benchutil.RESULTS_DIR)
    args = parser.parse_args(argv)
    rounds = args.rounds if args.rounds is not None else (2 if args.quick else 3)
    if rounds < 1:
        parser.error(f"--rounds must be >= 1, got {rounds}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    benchutil.install_signal_cleanup()

    started = time.monotonic()
    load_before = _loadavg()
    tools = c_tools.build_c_tools()
    with shared_driver.SharedDriver(tools.aeronmd, benchutil.LOG_DIR) as driver:
        pp = pingpong.run_pingpong(tools, driver, quick=args.quick, rounds=rounds)
        tp = throughput.run_throughput(tools, driver, quick=args.quick, rounds=rounds)
        driver_settings = dict(driver.settings)
    results = {
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": args.quick,
        "rounds": rounds,
        "duration_s": round(time.monotonic() - started, 1),
        "aeron": {"version": tools.version, "source_dir": str(tools.source_dir),
                  "aeron_py_linked": _aeron.version_full(), "aeron_py_package": _aeron_py_version()},
        "driver": {"binary": str(tools.aeronmd), "environment": driver_settings,
                   "note": "all other driver settings are Aeron's defaults"},
        "c_tools": tools.as_dict(),
        "machine": {**benchutil.machine_info(), "loadavg_before": load_before, "loadavg_after": _loadavg()},
        "targets": targets(pp, tp),
        "fairness": FAIRNESS_NOTES,
        "pingpong": pp,
        "throughput": tp,
    }
    args.out_dir.mkdir(parents=True, exist_ok=True)
    json_path = args.out_dir / "bindings.json"
    png_path = args.out_dir / "bindings.png"
    json_path.write_text(json.dumps(results, indent=1) + "\n")
    plot.render(results, png_path)
    _print_summary(results)
    print(f"wrote {json_path} and {png_path} in {results['duration_s']}s")
    return 0


def _print_summary(results: dict[str, Any]) -> None:
    print(f"\naeron_py vs Aeron {results['aeron']['version']} C tools "
          f"({'quick' if results['quick'] else 'full'}, median of {results['rounds']} round(s))")
    print(f"{'RTT':<14}{'C p50/p90/p99 us':>26}{'aeron_py p50/p90/p99 us':>28}{'p50 ratio':>11}{'best rnd':>10}")

    def fmt(d: dict[str, float] | None) -> str:
        return "/".join(f"{d[k]:.3g}" for k in ("p50", "p90", "p99")) if d else "failed"

    for case in results["pingpong"]["cases"]:
        name = f"{case['transport']}/{case['idle']}{' *' if case['starved'] else ''}"
        print(f"{name:<14}{fmt(case['c']['rtt_us']):>26}{fmt(case['aeron_py']['rtt_us']):>28}"
              f"{str(case['ratio_aeron_py_over_c']['p50']):>11}{str(case['ratio_best_round']['p50']):>10}")
    print(f"{'throughput':<14}{'C msgs/s':>26}{'aeron_py msgs/s':>28}{'ratio':>11}{'best rnd':>10}")
    for case in results["throughput"]["cases"]:
        c, py = case["c"]["msgs_per_s"], case["aeron_py"]["msgs_per_s"]
        print(f"{'ipc/' + case['idle']:<14}{(f'{c:.3g}' if c else 'failed'):>26}"
              f"{(f'{py:.3g}' if py else 'failed'):>28}{str(case['ratio_aeron_py_over_c']):>11}"
              f"{str(case['ratio_best_round']):>10}")
        batched = case.get("aeron_py_offer_batch", {}).get("msgs_per_s")
        print(f"{'  offer_batch':<14}{'':>26}{(f'{batched:.3g}' if batched else 'failed'):>28}"
              f"{str(case.get('ratio_offer_batch_over_c')):>11}")
    print("(* starved: busy-spinning clients and the driver need more cores than this machine has)")
    print(f"targets (reported, not asserted): RTT p50 <= {RTT_P50_TARGET}x C; throughput >= "
          f"{THROUGHPUT_TARGET:.0%} of C")


if __name__ == "__main__":
    sys.exit(main())
