"""Run the aeron_py-vs-Aeron-C benchmarks and write results/bindings.{json,png}.

Usage: ``python -m benchmarks.run_all [--quick] [--rounds N]``

Builds Aeron's C tools from the pinned tree if needed (``c_tools``), starts ONE C media
driver for the whole run (``harness.driver``), runs the ping/pong RTT comparison
(``pingpong``) and the IPC throughput comparison (``throughput``) on it, and reports
aeron_py / C ratios against the targets (reported, never asserted):
RTT p50 <= 2.5x C, throughput >= 25 % of C.
"""
from __future__ import annotations

import argparse
import logging
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file (python benchmarks/<name>.py): make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks import c_tools, harness, pingpong, plot, throughput  # noqa: E402
from benchmarks.harness.driver import SharedDriver  # noqa: E402
from aeron_py import _aeron  # noqa: E402

log = logging.getLogger("benchmarks.run_all")

RTT_P50_TARGET = 2.5  # aeron_py p50 RTT at most this many times C's
THROUGHPUT_TARGET = 0.25  # aeron_py throughput at least this fraction of C's


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
    parser.add_argument("--out-dir", type=Path, default=harness.RESULTS_DIR)
    args = parser.parse_args(argv)
    rounds = args.rounds if args.rounds is not None else (2 if args.quick else 3)
    if rounds < 1:
        parser.error(f"--rounds must be >= 1, got {rounds}")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    harness.install_signal_cleanup()

    started = time.monotonic()
    load_before = harness.loadavg()
    tools = c_tools.build_c_tools()
    with SharedDriver(tools.aeronmd, harness.LOG_DIR) as driver:
        pp = pingpong.run_pingpong(tools, driver, quick=args.quick, rounds=rounds)
        tp = throughput.run_throughput(tools, driver, quick=args.quick, rounds=rounds)
        driver_settings = dict(driver.settings)
    results = {
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": args.quick,
        "rounds": rounds,
        "duration_s": round(time.monotonic() - started, 1),
        "aeron": {"version": tools.version, "source_dir": str(tools.source_dir),
                  "aeron_py_linked": _aeron.version_full(), "aeron_py_package": harness.dist_version("aeron_py")},
        "driver": {"binary": str(tools.aeronmd), "environment": driver_settings,
                   "note": "all other driver settings are Aeron's defaults"},
        "c_tools": tools.as_dict(),
        "machine": {**harness.machine_info(), "loadavg_before": load_before, "loadavg_after": harness.loadavg()},
        "targets": targets(pp, tp),
        "fairness": FAIRNESS_NOTES,
        "pingpong": pp,
        "throughput": tp,
    }
    json_path, png_path = harness.save_run(args.out_dir, "bindings", results, history_row(results), plot.render,
                                           "quick" if args.quick else "")
    _print_summary(results)
    print(f"wrote {json_path} and {png_path} in {results['duration_s']}s")
    return 0


def history_row(results: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of a run, flat, for ``results/history/bindings.csv``."""
    pick = harness.pick
    row = harness.rounds_row(results)
    for case in pick(results, "pingpong", "cases") or []:
        name = f"rtt_p50_us_{case['transport']}_{case['idle']}"
        row.update({f"{name}_c": pick(case, "c", "rtt_us", "p50"), f"{name}_aeron_py": pick(case, "aeron_py", "rtt_us", "p50"),
                    f"{name}_ratio": pick(case, "ratio_aeron_py_over_c", "p50")})
    for case in pick(results, "throughput", "cases") or []:
        name = f"msgs_per_s_ipc_{case['idle']}"
        row.update({f"{name}_c": pick(case, "c", "msgs_per_s"), f"{name}_aeron_py": pick(case, "aeron_py", "msgs_per_s"),
                    f"{name}_aeron_py_offer_batch": pick(case, "aeron_py_offer_batch", "msgs_per_s"),
                    f"{name}_ratio": case.get("ratio_aeron_py_over_c"),
                    f"{name}_ratio_offer_batch": case.get("ratio_offer_batch_over_c")})
    return row


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
