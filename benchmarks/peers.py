"""aeron_py against pyaeron (the other CPython binding over Aeron's C client), with the
C cping/cpong floor, in one run on one C media driver.  Writes results/peers.{json,png}.

Run it with the benchmark venv's CPython 3.12 (pyaeron ships cp312+ wheels only; it is
never an aeron_py dependency): ``benchmarks/peer_venv.sh`` makes that venv, then
``benchmarks/.build/peer-venv/bin/python benchmarks/peers.py --quick``.

What is measured, each through the library's natural user API (``peer_roles.py``):
- RTT: one 32 B message in flight over ``aeron:ipc``, ping and pong each in its own
  process, exclusive publications, fragment limit 10, idle ``spin`` and ``yield``;
  Aeron's ``cping``/``cpong`` (same cases, ``pingpong.c_pingpong``) give the floor.
- Handler throughput: how fast ``sub.poll(handler, 256)`` drains a pre-filled IPC log
  with a Python handler called per 32 B message (no publisher running while timed).
- Paths: nanoseconds per call of every path of the natural API (empty poll, poll with
  bytes, zero-copy poll, controlled poll, poll_batch, offer, offer_batch, try_claim), each
  against pyaeron's nearest equivalent (``peer_paths.py`` has the table).
Every round runs every implementation once, in turn (C, aeron_py, pyaeron, C, ...).
Idle ``spin`` is the bare loop (``while not sub.poll(handler, 10): pass``) on both sides; the
``spin_counted`` case is the other common loop shape (``peer_roles.py --shape counted``).
Targets (reported, never asserted): aeron_py RTT p50 <= 1.0x pyaeron's, handler
throughput >= 1.0x pyaeron's, IPC RTT p50 <= 1.6x C cping in spin mode.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file (python benchmarks/<name>.py): make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks import c_tools, harness, pingpong  # noqa: E402
from benchmarks.harness.driver import SharedDriver  # noqa: E402

log = logging.getLogger("benchmarks.peers")

PEERS = ("aeron_py", "pyaeron")
CHANNEL = "aeron:ipc"
RTT_FRAGMENT_LIMIT = pingpong.FRAGMENT_LIMIT
DRAIN_FRAGMENT_LIMIT = 256
DRAIN_BATCH = 400_000  # well below the IPC publication window (half the 64 MiB term = 524 288 frames of 64 B)
RTT_VS_PYAERON_TARGET = 1.0
THROUGHPUT_VS_PYAERON_TARGET = 1.0
RTT_VS_C_SPIN_TARGET = 1.6
PATH_SPEEDUP_TARGET = 1.0  # every path at least as fast as pyaeron's nearest equivalent
ZERO_COPY_SPEEDUP_TARGET = 1.2
PEER_VENV_HINT = "make the benchmark venv with benchmarks/peer_venv.sh and run this script with its python"


def rtt_plan(quick: bool) -> list[pingpong.Case]:
    warmup, samples = (2_000, 10_000) if quick else (20_000, 50_000)
    return [pingpong.Case("ipc", "spin", warmup, samples), pingpong.Case("ipc", "yield", warmup, samples),
            pingpong.Case("ipc", "spin", warmup, samples, shape="counted")]


def case_label(case: pingpong.Case) -> str:
    """The key of an RTT case in the results: its idle mode, plus its loop shape when not ``first``."""
    return case.idle if case.shape == "first" else f"{case.idle}_{case.shape}"


def peer_rtt(library: str, driver: Any, case: pingpong.Case) -> dict[str, Any]:
    """``library``'s ping and pong, each in its own child process, on the shared driver."""
    ping_stream, pong_stream = harness.next_stream_id(), harness.next_stream_id()
    common = ["--dir", driver.dir, "--channel", CHANNEL, "--idle", case.idle, "--fragment-limit",
              str(RTT_FRAGMENT_LIMIT), "--ping-stream", str(ping_stream), "--pong-stream", str(pong_stream),
              "--shape", case.shape]
    env = driver.client_env()
    pong = harness.Child(f"{library}-pong-{case_label(case)}",
                           harness.python_child_argv("peer_roles.py", library, "pong", *common), env)
    try:
        pong.wait_for_line(lambda t: t == "READY", 30.0, "pong READY")
        ping = harness.Child(f"{library}-ping-{case_label(case)}", harness.python_child_argv(
            "peer_roles.py", library, "ping", *common, "--warmup", str(case.warmup), "--samples",
            str(case.samples)), env)
        code = ping.wait(60.0 + (case.warmup + case.samples) * 0.002)
        if code != 0:
            raise harness.BenchError(f"{library} ping exited {code}: {ping.stderr_tail()}")
        result = _last_json(ping)
    finally:
        pong.stop()
    return {"impl": library, **result}


def peer_drain(library: str, driver: Any, batches: int) -> dict[str, Any]:
    """``library``'s subscriber draining ``batches`` pre-filled logs of DRAIN_BATCH messages."""
    child = harness.Child(f"{library}-drain", harness.python_child_argv(
        "peer_roles.py", library, "drain", "--dir", driver.dir, "--channel", CHANNEL, "--idle", "yield",
        "--fragment-limit", str(DRAIN_FRAGMENT_LIMIT), "--stream", str(harness.next_stream_id()),
        "--batch", str(DRAIN_BATCH), "--batches", str(batches)), driver.client_env())
    code = child.wait(120.0)
    if code != 0:
        raise harness.BenchError(f"{library} drain exited {code}: {child.stderr_tail()}")
    return {"impl": library, **_last_json(child)}


def peer_paths(library: str, driver: Any, repeats: int) -> dict[str, Any]:
    """``library``'s ns per call of every path of its natural API (``peer_paths.py``)."""
    child = harness.Child(f"{library}-paths", harness.python_child_argv(
        "peer_roles.py", library, "paths", "--dir", driver.dir, "--channel", CHANNEL,
        "--stream", str(harness.next_stream_id()), "--repeats", str(repeats)), driver.client_env())
    code = child.wait(300.0)
    if code != 0:
        raise harness.BenchError(f"{library} paths exited {code}: {child.stderr_tail()}")
    return {"impl": library, **_last_json(child)}


def run_paths(driver: Any, quick: bool, rounds: int) -> dict[str, Any]:
    """Every path, both libraries, rounds interleaved; the median per path, and pyaeron's ns over aeron_py's."""
    from benchmarks import peer_paths as paths

    repeats = 2 if quick else 3
    runners = {lib: (lambda lib=lib: peer_paths(lib, driver, repeats)) for lib in PEERS}
    runs = harness.run_rounds(f"paths ({repeats} timed runs each, best kept)", rounds, runners, driver.check_alive)
    entry: dict[str, Any] = {"channel": CHANNEL, "msg_len": paths.MSG_LEN, "batch": paths.BATCH,
                             "empty_polls": paths.EMPTY_POLLS, "offer_batch_size": paths.OFFER_BATCH_SIZE,
                             "repeats": repeats, "pyaeron_nearest": paths.NEAREST}
    for impl, out in runs.items():
        per_path = {}
        for path in paths.PATHS:
            values = sorted(r["ns_per_op"][path] for r in out if "ns_per_op" in r)
            per_path[path] = values[len(values) // 2] if values else None
        entry[impl] = {"ns_per_op": per_path, "rounds": out}
    entry["speedup_over_pyaeron"] = {  # > 1: aeron_py is faster
        path: harness.ratio(entry["pyaeron"]["ns_per_op"][path], entry["aeron_py"]["ns_per_op"][path])
        for path in paths.PATHS}
    for path in paths.PATHS:
        log.info("  %-16s aeron_py %s ns, pyaeron %s ns, speed-up %s", path, entry["aeron_py"]["ns_per_op"][path],
                 entry["pyaeron"]["ns_per_op"][path], entry["speedup_over_pyaeron"][path])
    return entry


def run_paths_same_process(driver: Any, quick: bool) -> dict[str, Any]:
    """Every path for both libraries in ONE process, in turn (peer_roles.py paths-both): what
    differs is only the libraries' code, not the process, its heap or the CPU it landed on."""
    from benchmarks import peer_paths as paths

    rounds = 3 if quick else 5
    child = harness.Child("both-paths", harness.python_child_argv(
        "peer_roles.py", "both", "paths-both", "--dir", driver.dir, "--channel", CHANNEL,
        "--stream", str(harness.next_stream_id()), "--repeats", "2" if quick else "3", "--rounds", str(rounds)),
        driver.client_env())
    harness.next_stream_id()  # the child's second stream
    code = child.wait(600.0)
    if code != 0:
        raise harness.BenchError(f"paths-both exited {code}: {child.stderr_tail()}")
    result = _last_json(child)
    ns = result["ns_per_op"]
    entry: dict[str, Any] = {"rounds": rounds, **result,
                             "speedup_over_pyaeron": {path: harness.ratio(ns["pyaeron"][path], ns["aeron_py"][path])
                                                      for path in paths.PATHS}}
    for path in paths.PATHS:
        log.info("  same process: %-16s aeron_py %s ns, pyaeron %s ns, speed-up %s", path, ns["aeron_py"][path],
                 ns["pyaeron"][path], entry["speedup_over_pyaeron"][path])
    return entry


def _last_json(child: harness.Child) -> dict[str, Any]:
    for line in reversed(child.snapshot()):
        if line.text.startswith("{"):
            result: dict[str, Any] = json.loads(line.text)
            return result
    raise harness.BenchError(f"{child.name} printed no summary: {child.text()[-400:]} {child.stderr_tail()}")


def run_rtt(tools: Any, driver: Any, quick: bool, rounds: int) -> list[dict[str, Any]]:
    cases = []
    for case in rtt_plan(quick):
        runners = {"c": lambda: pingpong.c_pingpong(tools, driver.dir, driver.client_env(), case)}
        for lib in PEERS:
            runners[lib] = lambda lib=lib: peer_rtt(lib, driver, case)
        label = case_label(case)
        runs = harness.run_rounds(f"RTT ipc {label} ({case.warmup} warm-up + {case.samples})",
                                    rounds, runners, driver.check_alive)
        entry: dict[str, Any] = {"transport": case.transport, "idle": case.idle, "shape": case.shape,
                                 "label": label, "warmup": case.warmup, "samples": case.samples,
                                 "msg_len": pingpong.MSG_LEN}
        for impl, out in runs.items():
            ok = [r["rtt_us"] for r in out if "rtt_us" in r]
            entry[impl] = {"rtt_us": harness.median_by_key(ok), "rtt_us_best_round": harness.min_by_key(ok),
                           "rounds": out}
            if ok:
                s = entry[impl]["rtt_us"]
                log.info("  %s ipc/%s: p50 %.2f us p99 %.2f us (median of %d)", impl, label, s["p50"], s["p99"],
                         len(ok))
        for other in ("pyaeron", "c"):
            for field, key in (("rtt_us", f"ratio_aeron_py_over_{other}"),
                               ("rtt_us_best_round", f"ratio_aeron_py_over_{other}_best_round")):
                py, them = entry["aeron_py"][field] or {}, entry[other][field] or {}
                entry[key] = {k: harness.ratio(py.get(k), them.get(k)) for k in ("p50", "p99")}
        entry["ratio_pyaeron_over_c"] = {k: harness.ratio((entry["pyaeron"]["rtt_us"] or {}).get(k),
                                                            (entry["c"]["rtt_us"] or {}).get(k)) for k in ("p50", "p99")}
        cases.append(entry)
    return cases


def run_throughput(driver: Any, quick: bool, rounds: int) -> dict[str, Any]:
    batches = 5 if quick else 15
    runners = {lib: (lambda lib=lib: peer_drain(lib, driver, batches)) for lib in PEERS}
    runs = harness.run_rounds(f"handler throughput ({batches} x {DRAIN_BATCH} msgs)", rounds, runners,
                                driver.check_alive)
    entry: dict[str, Any] = {"channel": CHANNEL, "msg_len": pingpong.MSG_LEN, "fragment_limit": DRAIN_FRAGMENT_LIMIT,
                             "batch": DRAIN_BATCH, "batches_per_round": batches}
    for impl, out in runs.items():
        rates = sorted(r["msgs_per_s"] for r in out if "msgs_per_s" in r)
        entry[impl] = {"msgs_per_s": rates[len(rates) // 2] if rates else None,
                       "msgs_per_s_best_round": rates[-1] if rates else None, "rounds": out}
        if rates:
            log.info("  %s: %.3g msgs/s (median of %d rounds)", impl, entry[impl]["msgs_per_s"], len(rates))
    entry["ratio_aeron_py_over_pyaeron"] = harness.ratio(entry["aeron_py"]["msgs_per_s"],
                                                           entry["pyaeron"]["msgs_per_s"])
    entry["ratio_best_round"] = harness.ratio(entry["aeron_py"]["msgs_per_s_best_round"],
                                                entry["pyaeron"]["msgs_per_s_best_round"])
    return entry


def targets(rtt: list[dict[str, Any]], thr: dict[str, Any], paths: dict[str, Any]) -> dict[str, Any]:
    """Each target with its measured ratio and whether it was met (None = no data)."""
    out: dict[str, Any] = {}
    for case in rtt:
        r = case["ratio_aeron_py_over_pyaeron"]["p50"]
        out[f"rtt_p50_vs_pyaeron_ipc_{case['label']}"] = {
            "ratio": r, "ratio_best_round": case["ratio_aeron_py_over_pyaeron_best_round"]["p50"],
            "target_max": RTT_VS_PYAERON_TARGET, "met": None if r is None else r <= RTT_VS_PYAERON_TARGET}
        if case["idle"] == "spin":
            rc = case["ratio_aeron_py_over_c"]["p50"]
            out[f"rtt_p50_vs_c_ipc_{case['label']}"] = {
                "ratio": rc, "ratio_best_round": case["ratio_aeron_py_over_c_best_round"]["p50"],
                "target_max": RTT_VS_C_SPIN_TARGET, "met": None if rc is None else rc <= RTT_VS_C_SPIN_TARGET}
    rt = thr["ratio_aeron_py_over_pyaeron"]
    out["handler_throughput_vs_pyaeron"] = {"ratio": rt, "ratio_best_round": thr["ratio_best_round"],
                                            "target_min": THROUGHPUT_VS_PYAERON_TARGET,
                                            "met": None if rt is None else rt >= THROUGHPUT_VS_PYAERON_TARGET}
    for path, speedup in paths["speedup_over_pyaeron"].items():
        goal = ZERO_COPY_SPEEDUP_TARGET if path == "poll_zero_copy" else PATH_SPEEDUP_TARGET
        out[f"path_{path}_speedup_over_pyaeron"] = {"ratio": speedup, "target_min": goal,
                                                    "met": None if speedup is None else speedup >= goal}
    return out


def _versions(tools: Any, driver: Any) -> dict[str, Any]:
    """Library versions, the Aeron each links, and the driver's CnC version (compatibility)."""
    from aeron_py import _aeron

    cnc = _aeron.Cnc(driver.dir, 1000)
    try:
        constants = cnc.constants()
    finally:
        cnc.close()
    cnc_version = constants.get("cnc_version")
    return {
        "driver_aeron": tools.version,
        "driver_cnc_version": cnc_version,
        "driver_cnc_version_text": (None if not isinstance(cnc_version, int) else
                                    f"{cnc_version >> 16 & 0xFF}.{cnc_version >> 8 & 0xFF}.{cnc_version & 0xFF}"),
        "aeron_py": {"package": harness.dist_version("aeron_py"), "links_aeron": _aeron.version_full()},
        "pyaeron": {"package": harness.dist_version("pyaeron"), "links_aeron": "see rtt[*].pyaeron.rounds[*].client.aeron"},
        "cnc_compatibility": (
            "Aeron's client maps the driver's cnc.dat and refuses a CnC major version different from its own or "
            "a minor version below its own (aeron_context.c); a client that connected and exchanged messages "
            "(every round here) passed that check against this driver's CnC version."),
    }


def check_interpreter() -> None:
    """Both libraries must be importable by this interpreter (children use sys.executable)."""
    missing = [lib for lib in PEERS if importlib.util.find_spec(lib) is None]
    if missing:
        raise SystemExit(f"{', '.join(missing)} not installed for {sys.executable}: {PEER_VENV_HINT}")


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="aeron_py vs pyaeron (and the C cping floor): IPC RTT p50/p99 and subscriber handler "
                    "throughput, through each library's natural API, on one Aeron C media driver, "
                    "rounds interleaved. Writes peers.json and peers.png.",
        epilog="Setup once: benchmarks/peer_venv.sh (CPython 3.12 venv with pyaeron and this tree's aeron_py). "
               "Then: benchmarks/.build/peer-venv/bin/python benchmarks/peers.py --quick",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 2 000 warm-up + 10 000 round trips, 5 drains per round, 2 rounds (~15 s once the C tools are built)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds per case (default: 2 quick, 5 full)")
    parser.add_argument("--out-dir", type=Path, default=harness.RESULTS_DIR,
                        help=f"where peers.json and peers.png go (default {harness.RESULTS_DIR})")
    args = parser.parse_args(argv)
    if args.rounds is None:
        args.rounds = 2 if args.quick else 5
    if args.rounds < 1:
        parser.error(f"--rounds must be >= 1, got {args.rounds}")
    return args


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    check_interpreter()
    harness.install_signal_cleanup()
    import plot

    started = time.monotonic()
    load_before = harness.loadavg()
    tools = c_tools.build_c_tools()
    with SharedDriver(tools.aeronmd, harness.LOG_DIR) as driver:
        versions = _versions(tools, driver)
        rtt = run_rtt(tools, driver, args.quick, args.rounds)
        thr = run_throughput(driver, args.quick, args.rounds)
        paths = run_paths(driver, args.quick, args.rounds)
        same_process = run_paths_same_process(driver, args.quick)
        settings = dict(driver.settings)
    results = {
        "generated_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "quick": args.quick, "rounds": args.rounds, "duration_s": round(time.monotonic() - started, 1),
        "versions": versions,
        "driver": {"binary": str(tools.aeronmd), "environment": settings},
        "machine": {**harness.machine_info(), "loadavg_before": load_before, "loadavg_after": harness.loadavg()},
        "targets": targets(rtt, thr, paths),
        "method": {
            "api": "each library's natural API: Aeron(dir=...), add_exclusive_publication, add_subscription, "
                   "pub.offer(bytes), sub.poll(handler, limit) with a Python handler per message",
            "idle": "spin = the bare loop `while not sub.poll(handler, 10): pass` on both sides (no idle call); "
                    "yield = the library's own yielding IdleStrategy object called after each empty poll. "
                    "Before this run, spin called each library's busy-spin idle(0) after every empty poll: "
                    "pyaeron's releases and re-takes the GIL on every call (~20-30 ns), aeron_py's does not, "
                    "which is why that harness reported 0.77x while a bare loop measured 1.12-1.57x",
            "rtt": f"one {pingpong.MSG_LEN} B message in flight on {CHANNEL}, ping and pong in separate processes, "
                   f"fragment limit {RTT_FRAGMENT_LIMIT}; pong echoes from inside its handler; ping checks the echo",
            "throughput": f"poll(handler, {DRAIN_FRAGMENT_LIMIT}) draining {DRAIN_BATCH} pre-filled messages, "
                          "handler counts; median batch rate per round; no publisher running while timed",
            "order": "every round runs C (RTT only), aeron_py, pyaeron in turn",
            "paths": "peer_paths.py: ns per call of each path, one child process per library per round, best of "
                     "`repeats` timed runs inside the child, median over rounds",
            "paths_same_process": "the same paths for both libraries in one child process, in turn, median over "
                                  "rounds: the same interpreter, heap and CPU for both (separate processes differ "
                                  "by several ns per call from run to run on this VM, whichever library runs)",
        },
        "rtt": rtt,
        "throughput": thr,
        "paths": paths,
        "paths_same_process": same_process,
    }
    json_path, png_path = harness.save_run(args.out_dir, "peers", results, history_row(results), plot.render_peers,
                                           "quick" if args.quick else "")
    print_summary(results)
    print(f"wrote {json_path} and {png_path} in {results['duration_s']}s")
    return 0


def history_row(results: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of a run, flat, for ``results/history/peers.csv``."""
    pick = harness.pick
    row = harness.rounds_row(results)
    for case in results.get("rtt") or []:
        for impl in ("c", "aeron_py", "pyaeron"):
            for q in ("p50", "p99"):
                row[f"rtt_{q}_us_ipc_{case['label']}_{impl}"] = pick(case, impl, "rtt_us", q)
        row[f"rtt_p50_ipc_{case['label']}_ratio_over_pyaeron"] = pick(case, "ratio_aeron_py_over_pyaeron", "p50")
        row[f"rtt_p50_ipc_{case['label']}_ratio_over_c"] = pick(case, "ratio_aeron_py_over_c", "p50")
    for impl in ("aeron_py", "pyaeron"):
        row[f"handler_msgs_per_s_{impl}"] = pick(results, "throughput", impl, "msgs_per_s")
    row["handler_ratio_over_pyaeron"] = pick(results, "throughput", "ratio_aeron_py_over_pyaeron")
    for path, speedup in ((results.get("paths") or {}).get("speedup_over_pyaeron") or {}).items():
        row[f"path_{path}_speedup_over_pyaeron"] = speedup
    for path, speedup in ((results.get("paths_same_process") or {}).get("speedup_over_pyaeron") or {}).items():
        row[f"same_process_{path}_speedup_over_pyaeron"] = speedup
    return row


def print_summary(results: dict[str, Any]) -> None:
    def fmt(d: dict[str, float] | None) -> str:
        return f"{d['p50']:.3g} / {d['p99']:.3g}" if d else "failed"

    print(f"\nIPC RTT, {pingpong.MSG_LEN} B, one in flight (median of {results['rounds']} rounds), p50 / p99 us")
    print(f"{'case':<14}{'C cping':>18}{'aeron_py':>18}{'pyaeron':>18}{'py/pyaeron p50':>16}{'py/C p50':>10}")
    for case in results["rtt"]:
        print(f"{case['label']:<14}{fmt(case['c']['rtt_us']):>18}{fmt(case['aeron_py']['rtt_us']):>18}"
              f"{fmt(case['pyaeron']['rtt_us']):>18}{str(case['ratio_aeron_py_over_pyaeron']['p50']):>16}"
              f"{str(case['ratio_aeron_py_over_c']['p50']):>10}")
    thr = results["throughput"]

    def rate(impl: str) -> str:
        v = thr[impl]["msgs_per_s"]
        return f"{v / 1e6:.3g} M/s" if v else "failed"

    print(f"handler throughput: aeron_py {rate('aeron_py')}, pyaeron {rate('pyaeron')}, "
          f"ratio {thr['ratio_aeron_py_over_pyaeron']}")
    paths = results["paths"]
    print(f"\n{'path':<18}{'aeron_py ns':>12}{'pyaeron ns':>12}{'speed-up':>10}")
    for path, speedup in paths["speedup_over_pyaeron"].items():
        print(f"{path:<18}{str(paths['aeron_py']['ns_per_op'][path]):>12}{str(paths['pyaeron']['ns_per_op'][path]):>12}"
              f"{str(speedup):>10}")
    same = results["paths_same_process"]
    print("same process, in turn: " + ", ".join(f"{path} {speedup}" for path, speedup in
                                                 same["speedup_over_pyaeron"].items()))
    for name, t in results["targets"].items():
        bound = f"<= {t['target_max']}" if "target_max" in t else f">= {t['target_min']}"
        print(f"target {name}: {t['ratio']} ({bound}) met={t['met']}")


if __name__ == "__main__":
    sys.exit(main())
