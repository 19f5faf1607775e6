"""Echo server at scale: how many duologues one server holds, and what they cost.

    python -m benchmarks.echo_scale                       # full: steps 1000..10000, ~10-15 min
    python -m benchmarks.echo_scale --quick               # steps 200,500, short holds, ~2 min
    python -m benchmarks.echo_scale --label after --server-python /other/tree/.venv/bin/python
    python -m benchmarks.echo_scale --help

Two processes are measured, both started here: the server (``python -m
aeron_py.echo_server``, telemetry off, the options and driver environment in the JSON)
and one load process (``python -m aeron_py.echo_load --hold``) that opens duologues from
``--sources`` loopback addresses up to each of ``--steps`` and holds them.  At every step:

- held duologues, and the server driver directory's log files: real disk use
  (``st_blocks * 512``, what ``du`` counts; /dev/shm is tmpfs) and apparent size;
- idle CPU of the server and of the load process, per thread name, from
  ``/proc/<pid>/task/*/stat`` over ``--measure`` seconds (% of one core);
- then every client echoes ``--rate`` times a second: echo RTT p50/p99 (measured by
  the load process, so it includes that process's stepping) and CPU again;
- with ``--profile`` at the ``--profile-at`` steps: py-spy (Python stacks of the server)
  and perf (native symbols per thread) during the idle and the echo stage.

On two cores the four busy threads (each process's driver and Python thread) can land
two ways, and the echo RTT differs by about 2x between them; ``--placement crossed`` or
``own`` pins them (``benchmarks/harness/placement.py``) so runs compare like with like.

Afterwards, with a fresh server: handshakes per second, sequential and at
``--concurrency`` in flight.  The run goes into ``results/echo_scale.json`` (with its
``--label``) and ``results/echo_scale.png``, and its headline numbers into a row of
``results/history/echo_scale.csv``; an "after" run's ``ratios`` are after / before
against the latest "before" row of that history.  Targets (reported, never
asserted): >= 5000 duologues held with <= 2 GiB of log files; idle server CPU at
1000 duologues <= 5 % of a core.  Numbers on a shared 2-core machine are noisy:
compare ratios from one run and read the load averages in the JSON.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import os
import resource
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file (python benchmarks/<name>.py): make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks import harness, scale_plot  # noqa: E402
from benchmarks.harness import BenchError, Child, probes, save_results  # noqa: E402
from benchmarks.harness.placement import MODES as PLACEMENTS, Placement  # noqa: E402
from benchmarks.harness.results import history_path, read_history  # noqa: E402

log = logging.getLogger("benchmarks.echo_scale")
GIB = 1 << 30
TEST_PORTS_START = 20000  # the test suites take ports in [20000, 32768); the ephemeral range starts at 32768


def base_port(clients: int) -> int:
    """First duologue port: the 2 * clients ports end below the test suites' range when
    they fit above 1024 (other jobs' tests may run meanwhile)."""
    return max(1024, TEST_PORTS_START - 2 * clients - 10)
#: Driver settings for the server passed through the environment (the C driver context reads them).
SERVER_ENV = {"AERON_TERM_BUFFER_SPARSE_FILE": "true"}


def sources(count: int) -> list[str]:
    """``count`` loopback source addresses 127.0.0.2, 127.0.0.3, ..."""
    return [f"127.0.{(i + 2) // 256}.{(i + 2) % 256}" for i in range(count)]


def server_argv(args: argparse.Namespace, port: int, clients: int, directory: str) -> list[str]:
    """The server's command line: capacity and per-source limits opened up for the run."""
    return [args.server_python, "-P", "-u", "-m", "aeron_py.echo_server", "--dir", directory, "--port", str(port),
            "--control-port", str(port + 1), "--base-port", str(base_port(clients)), "--clients", str(clients),
            "--max-per-ip", str(clients), "--max-images-per-source", str(clients),
            "--max-images-total", str(2 * clients + 64), "--setup-rate", str(args.setup_rate),
            "--log-level", "WARNING", *args.server_arg]


def start_server(args: argparse.Namespace, port: int, clients: int, tag: str) -> tuple[Child, str, list[str]]:
    directory = f"/dev/shm/aeron-scale-{os.getpid()}-{tag}"
    argv = server_argv(args, port, clients, directory)
    env = harness.aeron_free_env({**SERVER_ENV, **dict(kv.split("=", 1) for kv in args.server_env)})
    server = Child(f"scale-server-{tag}", argv, env)
    server.wait_for_line(lambda t: t.startswith("READY"), 30, "READY")
    return server, directory, argv


def _events(child: Child, seen: int) -> tuple[list[dict[str, Any]], int]:
    lines = child.snapshot()
    out = [json.loads(line.text[6:]) for line in lines[seen:] if line.text.startswith("EVENT ")]
    return out, len(lines)


def _measure_stage(args: argparse.Namespace, pids: dict[str, int], target: int, mode: str,
                   out_dir: Path, label: str) -> dict[str, Any]:
    """CPU per thread during a stage (the idle one after ``--settle`` s), then (optionally) the profilers."""
    if mode == "idle" and args.settle > 0:
        threading.Event().wait(args.settle)  # let the growth's traffic die down and quiet mode begin
    result: dict[str, Any] = {"cpu_pct": probes.cpu_percent(pids, args.measure),
                              "settle_s": args.settle if mode == "idle" else 0.0}
    if args.profile and target in args.profile_at:
        profiles = harness.BENCH_DIR / ".build" / "profiles"  # raw profiles: git-ignored; summaries go in the JSON
        profiles.mkdir(parents=True, exist_ok=True)
        stem = profiles / f"echo_scale-{label}-{target}-{mode}"
        result["py_spy"] = probes.py_spy_top(pids["server"], args.profile_s, stem.with_suffix(".pyspy.txt"))
        result["perf"] = probes.perf_top(pids["server"], args.profile_s, stem.with_suffix(".perf.data"))
    return result


def _on_events(args: argparse.Namespace, events: list[dict[str, Any]], steps: dict[int, dict[str, Any]],
               pids: dict[str, int], directory: str, out_dir: Path) -> None:
    """Record the load's stage events; measure the processes while a stage lasts."""
    for ev in events:
        target = ev["target"]
        step = steps.setdefault(target, {"target": target})
        if ev["event"] == "step":
            step.update(held=ev["held"], connect_s=ev["connect_s"], failures=ev["failures"],
                        open_to_first_echo_us=ev["open_to_first_echo"])
            step["server_logs"] = probes.dir_usage(directory)
            step["load_logs"] = probes.dir_usage(ev["load_driver_dir"])
            log.info("step %d: %d held in %.1f s, server logs %.3f GiB real / %.3f GiB apparent", target,
                     ev["held"], ev["connect_s"], step["server_logs"]["real_bytes"] / GIB,
                     step["server_logs"]["apparent_bytes"] / GIB)
        elif ev["event"] == "hold":
            step[ev["mode"]] = _measure_stage(args, pids, target, ev["mode"], out_dir, args.label)
            log.info("step %d %s: server %s", target, ev["mode"], step[ev["mode"]]["cpu_pct"]["server"])
        elif ev["event"] == "error":
            step["load_error"] = {"held": ev["held"], "error": ev["error"]}
            log.error("step %d: the load failed with %d held: %s", target, ev["held"], ev["error"])
        elif ev["event"] == "held":
            step.setdefault(ev["mode"], {})["load_report"] = {k: v for k, v in ev.items()
                                                              if k not in ("event", "mode", "target")}


def _follow_load(args: argparse.Namespace, load: Child, pids: dict[str, int], steps: dict[int, dict[str, Any]],
                 directory: str, out_dir: Path, stage_s: float) -> bool:
    """Reads the load's events until it exits, measuring each stage; True if --budget ran out."""
    seen = 0
    deadline = time.monotonic() + args.budget
    budget_used = False
    while load.proc.poll() is None:
        if not budget_used and time.monotonic() >= deadline:
            log.warning("--budget %.0f s used up: asking the load to stop after its current stage", args.budget)
            load.proc.send_signal(signal.SIGINT)  # the load ends its stage and reports
            budget_used, deadline = True, time.monotonic() + 2 * stage_s + 120
        elif budget_used and time.monotonic() >= deadline:
            raise BenchError("the load did not stop within its last stage after --budget")
        events, seen = _events(load, seen)
        _on_events(args, events, steps, pids, directory, out_dir)
        time.sleep(0.05)
    _on_events(args, _events(load, seen)[0], steps, pids, directory, out_dir)  # the last ones
    return budget_used


def run_hold(args: argparse.Namespace, out_dir: Path) -> dict[str, Any]:
    """Grow, hold and measure (see the module docstring)."""
    port = harness.free_udp_ports(1)[0]
    top = max(args.steps)
    server, directory, argv = start_server(args, port, top + 64, "hold")
    stage_s = args.settle + args.measure + (2 * args.profile_s + 6 if args.profile else 1.5)
    load_argv = [sys.executable, "-u", "-m", "aeron_py.echo_load", "127.0.0.1", str(port), str(port + 1),
                 "--clients", str(top), "--steps", ",".join(map(str, args.steps)), "--hold", str(stage_s),
                 "--echo-hold", str(stage_s), "--rate", str(args.rate), "--batch", str(args.batch),
                 "--sources", ",".join(sources(args.sources)), "--timeout", "30", *args.load_arg]
    load = Child("scale-load", load_argv, harness.aeron_free_env({}))
    pids = {"server": server.proc.pid, "load": load.proc.pid}
    steps: dict[int, dict[str, Any]] = {}
    try:
        with Placement(args.placement, pids):
            budget_used = _follow_load(args, load, pids, steps, directory, out_dir, stage_s)
        load.wait(30)
    finally:
        load.stop()
        server.stop(grace_s=20)
    final = load.text()
    summary = json.loads(final[final.index("\n{") + 1:]) if "\n{" in final else {"error": load.stderr_tail()}
    held_ok = [s for s in steps.values() if s.get("held", 0) >= 0.99 * s["target"]]
    return {"budget_used": budget_used, "placement": args.placement, "server_argv": argv, "server_env": SERVER_ENV, "load_argv": load_argv, "steps": list(steps.values()),
            "server_log": probes.log_warnings(server.stderr_path),
            "load_log": probes.log_warnings(load.stderr_path),
            "max_held": max((s["held"] for s in held_ok), default=0), "load_summary": summary}


def server_tree(python: str) -> dict[str, Any]:
    """Which aeron_py the server runs: its package path, and the git commit of that tree
    (with the number of uncommitted changes, so a run from a busy worktree says so)."""
    import subprocess

    try:
        where = subprocess.run([python, "-P", "-c", "import aeron_py; print(aeron_py.__file__)"], capture_output=True,
                               text=True, timeout=60).stdout.strip()
        tree = str(Path(where).resolve().parent.parent)
        head = subprocess.run(["git", "-C", tree, "log", "-1", "--format=%h %s"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", tree, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.splitlines()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return {"error": str(exc)}
    return {"package": where, "commit": head, "uncommitted_files": len(dirty)}


def run_handshakes(args: argparse.Namespace) -> dict[str, Any]:
    """Sequential handshakes, then ``--concurrency`` in flight, against a fresh server."""
    port = harness.free_udp_ports(1)[0]
    n_conc = 3 * args.concurrency
    server, _directory, _argv = start_server(args, port, n_conc + 64, "handshakes")
    out: dict[str, Any] = {}
    try:
        for name, count, conc in (("sequential", args.sequential, 1), ("concurrent", n_conc, args.concurrency)):
            argv = [sys.executable, "-u", "-m", "aeron_py.echo_load", "127.0.0.1", str(port), str(port + 1),
                    "--clients", str(count), "--handshakes", "--concurrency", str(conc), "--hello-interval", "1",
                    "--sources", ",".join(sources(args.sources)), "--timeout", "20"]
            child = Child(f"scale-handshakes-{name}", argv, harness.aeron_free_env({}))
            child.wait(120 + count)
            text = child.text()
            out[name] = json.loads(text[text.index("{"):]) if "{" in text else {"error": child.stderr_tail()}
            log.info("handshakes %s: %s/s", name, out[name].get("rate_per_s"))
            time.sleep(2.0)  # let the server free the slots
    finally:
        server.stop(grace_s=20)
    return out


def headline(run: dict[str, Any]) -> dict[str, Any]:
    """The numbers the targets speak of."""
    hold = run.get("hold", {})
    by_target = {s["target"]: s for s in hold.get("steps", [])}
    at_1000 = by_target.get(1000, {})
    best: dict[str, Any] = max((s for s in hold.get("steps", []) if s.get("held", 0) >= 0.99 * s["target"]),
               key=lambda s: s["held"], default={})
    logs = best.get("server_logs", {})
    idle = at_1000.get("idle", {}).get("cpu_pct", {}).get("server", {})
    rtt = at_1000.get("echo", {}).get("load_report", {}).get("rtt", {})
    shakes = run.get("handshakes", {})
    return {"max_held": hold.get("max_held"), "server_log_real_gib_at_max": round(logs.get("real_bytes", 0) / GIB, 3),
            "server_log_apparent_gib_at_max": round(logs.get("apparent_bytes", 0) / GIB, 3),
            "idle_server_cpu_pct_at_1000": idle.get("<process>"), "idle_server_cpu_by_thread_at_1000": idle,
            "rtt_p50_us_at_1000": rtt.get("p50_us"), "rtt_p99_us_at_1000": rtt.get("p99_us"),
            "handshakes_per_s_sequential": shakes.get("sequential", {}).get("rate_per_s"),
            "handshakes_per_s_concurrent": shakes.get("concurrent", {}).get("rate_per_s"),
            "targets": {"max_held": ">= 5000 (stretch 10000)", "server_log_real_gib_at_max": "<= 2",
                        "idle_server_cpu_pct_at_1000": "<= 5"}}


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m benchmarks.echo_scale", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="See the module docstring (head of this file) for what is measured.")
    p.add_argument("--label", default="before",
                   help="name of this run in the JSON and its history row (e.g. before / after)")
    p.add_argument("--steps", default="1000,2500,5000,7500,10000", help="duologue counts to grow through")
    p.add_argument("--placement", choices=PLACEMENTS, default="kernel",
                   help="pin the server's and the load's threads to the two CPUs: kernel (no pinning, the default), "
                        "crossed (each Python thread on the other process's driver's CPU) or own (each process on "
                        "one CPU); see benchmarks/harness/placement.py")
    p.add_argument("--measure", type=float, default=10.0, help="seconds of each CPU measurement (10)")
    p.add_argument("--settle", type=float, default=25.0,
                   help="seconds the idle stage waits before measuring: the growth's teardown (the clients' "
                   "HELLO images, ~12 s at 1,000), then the server's --quiet-after and --deep-quiet-after (16 s "
                   "of silence in all) pass first (25; round 4 waited 3, rounds before 4 measured at once)")
    p.add_argument("--rate", type=float, default=1.0, help="echoes per second per client in the echo stage (1)")
    p.add_argument("--sources", type=int, default=64, help="source addresses 127.0.0.2.. for the clients (64)")
    p.add_argument("--batch", type=int, default=50, help="handshakes the load keeps in flight while growing (50)")
    p.add_argument("--setup-rate", type=float, default=200.0, help="server --setup-rate per source (200)")
    p.add_argument("--profile", action="store_true", help="run py-spy and perf on the server at --profile-at")
    p.add_argument("--profile-at", default="1000,5000", help="steps to profile (1000,5000)")
    p.add_argument("--profile-s", type=float, default=8.0, help="seconds per profiler (8)")
    p.add_argument("--sequential", type=int, default=30, help="sequential handshakes to time (30)")
    p.add_argument("--concurrency", type=int, default=100, help="handshakes in flight for the concurrent rate (100)")
    p.add_argument("--no-handshakes", action="store_true", help="skip the handshake rates")
    p.add_argument("--server-python", default=sys.executable,
                   help="interpreter whose aeron_py serves (another worktree's venv for an 'after' run)")
    p.add_argument("--server-arg", action="append", default=[], help="extra server option (repeatable)")
    p.add_argument("--load-arg", action="append", default=[], help="extra load-process option (repeatable)")
    p.add_argument("--server-env", action="append", default=[], metavar="KEY=VALUE",
                   help="extra driver environment for the server (repeatable)")
    p.add_argument("--budget", type=float, default=1500.0, help="time limit of the hold run in seconds (1500)")
    p.add_argument("--quick", action="store_true", help="steps 200,500, 4 s measurements, 10 handshakes")
    p.add_argument("--out-dir", type=Path, default=harness.RESULTS_DIR)
    p.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.quick:
        args.steps, args.measure, args.sequential, args.profile_at = "200,500", 4.0, 10, "200"
        args.profile_s = 3.0
    args.steps = sorted({int(x) for x in args.steps.split(",") if x.strip()})
    args.profile_at = {int(x) for x in args.profile_at.split(",") if x.strip()}
    harness.install_signal_cleanup()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    run: dict[str, Any] = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "loadavg_before": os.getloadavg(),
                           "machine": harness.machine_info(), "server_python": args.server_python,
                           "server_tree": server_tree(args.server_python),
                           "shm_free_gib": round(probes.shm_free_bytes() / GIB, 1),
                           "fd_limit": resource.getrlimit(resource.RLIMIT_NOFILE)}
    status = 0
    try:
        run["hold"] = run_hold(args, args.out_dir)
    except BenchError as exc:
        log.error("hold run failed: %s", exc)
        run["hold"], status = {"error": str(exc)}, 1
    if not args.no_handshakes:
        try:
            run["handshakes"] = run_handshakes(args)
        except BenchError as exc:
            run["handshakes"], status = {"error": str(exc)}, 1
    run["loadavg_after"] = os.getloadavg()
    run["label"] = args.label
    run["headline"] = headline(run)
    path = args.out_dir / "echo_scale.json"
    run["ratios"] = ratios(run, read_history(history_path(path)))
    save_results(path, run, history_row(run), args.label)
    scale_plot.write_png(args.out_dir / "echo_scale.png", run)
    print(json.dumps({"label": args.label, **run["headline"], "ratios": run["ratios"]}, indent=1, default=str))
    return status


def history_row(run: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of a run, flat, for ``results/history/echo_scale.csv``."""
    return {"started": run.get("started"), "loadavg_before_1min": (run.get("loadavg_before") or [None])[0],
            **{k: v for k, v in run.get("headline", {}).items() if not isinstance(v, dict)},
            "placement": run.get("hold", {}).get("placement")}


def ratios(run: dict[str, Any], history: list[dict[str, str]]) -> dict[str, Any]:
    """after / before of each headline number: for an "after" run, against the latest
    "before" row of the history (empty otherwise)."""
    before = next((row for row in reversed(history) if row.get("label") == "before"), None)
    if run.get("label") != "after" or before is None:
        return {}
    out: dict[str, Any] = {}
    for key, value in run["headline"].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool) and before.get(key):
            with contextlib.suppress(ValueError):
                b = float(before[key])
                if not math.isnan(b):
                    out[key] = harness.ratio(value, b)
    return out


if __name__ == "__main__":
    sys.exit(main())
