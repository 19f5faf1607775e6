"""Threads against the GIL: aggregate handler throughput with 1 and 2 threads, and the
single-thread cost of every ``peers.py`` path, on CPython 3.13 and free-threaded 3.13t.

    benchmarks/free_threading.py --make-venvs      # once: both venvs, this tree's aeron_py
    benchmarks/.build/ft-venv-3.13/bin/python benchmarks/free_threading.py [--quick]

What is measured, in a child process per interpreter and measurement (rounds alternate
the interpreters), all on one shared Aeron C media driver (``aeronmd``, SHARED, backoff):

* **threads**: N threads (1, then 2), each with its own exclusive IPC publication and
  subscription on a stream of its own. Each thread offers 100 messages of 32 B with
  ``offer_batch`` then drains them with ``sub.poll(handler, 256)``, the handler counting,
  until ``--seconds`` have passed. The result is the handler calls per second of all threads
  together; the ratio that matters is 2 threads over 1 on the same interpreter (the goal on
  3.13t: >= 1.8). Each thread has its own ``aeron_py.Aeron`` client, as docs/safety.md advises
  for parallel threads; ``3.13t-shared`` gives both threads one client, whose calls take turns
  (one client's calls run one at a time), to show what sharing costs.
* **paths**: ``peer_paths.measure`` (the ns per call of every path of the natural API
  that ``peers.py`` compares with pyaeron), one thread; the ratio 3.13t / 3.13 is the
  free-threaded build's single-thread cost (goal: <= 1.10 on every path). ``handler_offer``
  adds the echo shape: a poll whose handler offers each message on the same client.
  ``python_loop`` is the same ratio for a loop calling a Python handler with no aeron_py call, and
  ``c_method_loop`` for a loop calling a method of a built-in type with two arguments
  (``table.get(key, None)``, the shape of ``sub.poll(handler, 10)``): what the interpreter
  alone costs.

Each child reports whether the GIL was on while it ran (``sys._is_gil_enabled()``): aeron_py
declares itself GIL-free, so on 3.13t it stays off. Writes ``results/free_threading.json``
and ``.png``.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import threading
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
if __package__ in (None, ""):  # run as a file: the venv's aeron_py, this tree's benchmarks
    sys.path.append(str(BENCH_DIR.parent))

log = logging.getLogger("benchmarks.free_threading")

VENVS = {"3.13": BENCH_DIR / ".build" / "ft-venv-3.13", "3.13t": BENCH_DIR / ".build" / "ft-venv-3.13t"}
#: What is run: the interpreter's venv, and whether threads get a client each ("own") or share one.
CONFIGS: dict[str, tuple[str, str]] = {"3.13": ("3.13", "own"), "3.13t": ("3.13t", "own"),
                                       "3.13t-shared": ("3.13t", "shared")}
#: The configurations whose single-path costs are measured (the paths do not depend on clients).
PATH_CONFIGS = ("3.13", "3.13t")
CHANNEL = "aeron:ipc"
MSG_LEN = 32
BATCH = 100  # messages per offer_batch, drained before the next
POLL_LIMIT = 256
THREAD_COUNTS = (1, 2)
SCALING_GOAL = 1.8  # 2 threads over 1, free-threaded, GIL off
SINGLE_THREAD_COST_GOAL = 1.10  # 3.13t over 3.13, every path
CHILD_TIMEOUT_S = 300.0


# --------------------------------------------------------------------------------------------
# child side (runs under the interpreter being measured; imports only aeron_py and the stdlib)


def _gil_enabled() -> bool:
    probe = getattr(sys, "_is_gil_enabled", None)
    return True if probe is None else bool(probe())


def _wait(predicate: Any, what: str, timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what} within {timeout_s} s")
        time.sleep(0.001)


def _worker(client: Any, stream: int, seconds: float, start: threading.Barrier, out: list[int], slot: int) -> None:
    pub = client.add_exclusive_publication(CHANNEL, stream)
    sub = client.add_subscription(CHANNEL, stream)
    _wait(lambda: pub.is_connected and sub.is_connected, f"stream {stream} not connected")
    msgs = [bytes(MSG_LEN)] * BATCH
    seen = 0

    def handler(data: bytes, header: Any) -> None:
        nonlocal seen
        seen += 1

    start.wait()
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        sent = pub.offer_batch(msgs)
        target = seen + max(sent, 0)
        spins = 0
        while seen < target:
            sub.poll(handler, POLL_LIMIT)
            spins += 1
            if spins > 10_000_000:
                raise RuntimeError(f"stream {stream}: {target - seen} offered messages never arrived")
    out[slot] = seen  # pub and sub are closed with the client, after every thread has stopped


def child_threads(aeron_dir: str, threads: int, seconds: float, stream0: int, clients: str) -> dict[str, Any]:
    import aeron_py

    shared = aeron_py.Aeron(dir=aeron_dir) if clients == "shared" else None
    own = [aeron_py.Aeron(dir=aeron_dir) for _ in range(threads)] if shared is None else []
    counts = [0] * threads
    start = threading.Barrier(threads + 1)
    workers = [threading.Thread(target=_worker, args=(shared or own[i], stream0 + i, seconds, start, counts, i))
               for i in range(threads)]
    for w in workers:
        w.start()
    start.wait(timeout=30)
    began = time.perf_counter()
    for w in workers:
        w.join(timeout=seconds + 60)
    elapsed = time.perf_counter() - began
    for client in [shared] if shared is not None else own:
        client.close()
    if any(w.is_alive() for w in workers) or 0 in counts:
        raise RuntimeError(f"a worker failed or hung: counts {counts}")
    return {"threads": threads, "clients": clients, "messages": counts, "seconds": round(elapsed, 3),
            "msgs_per_s": round(sum(counts) / elapsed), "gil_enabled": _gil_enabled()}


def child_paths(aeron_dir: str, repeats: int, stream: int) -> dict[str, Any]:
    import aeron_py

    from benchmarks import peer_paths

    client = aeron_py.Aeron(dir=aeron_dir)
    pub = client.add_exclusive_publication(CHANNEL, stream)
    sub = client.add_subscription(CHANNEL, stream)
    _wait(lambda: pub.is_connected and sub.is_connected, "paths stream not connected")
    ns = peer_paths.measure("aeron_py", pub, sub, repeats)
    ns["handler_offer"] = _handler_offer_ns(client, stream + 1, repeats)
    client.close()
    ns["python_loop"] = _python_loop_ns(repeats)
    ns["c_method_loop"] = _c_method_loop_ns(repeats)
    return {"ns_per_op": ns, "gil_enabled": _gil_enabled()}


def _handler_offer_ns(client: Any, stream: int, repeats: int, rounds: int = 200) -> float:
    """ns per message of ``sub.poll(handler, 256)`` whose handler offers each message on another
    publication of the same client (the echo shape: a call inside the poll's critical section)."""
    inbound, outbound = client.add_exclusive_publication(CHANNEL, stream), client.add_exclusive_publication(
        CHANNEL, stream + 1)
    sub, sink = client.add_subscription(CHANNEL, stream), client.add_subscription(CHANNEL, stream + 1)
    _wait(lambda: inbound.is_connected and outbound.is_connected, "handler_offer streams not connected")
    msgs = [bytes(MSG_LEN)] * BATCH
    seen = 0

    def echo(data: bytes, header: Any) -> None:
        nonlocal seen
        outbound.offer(data)
        seen += 1

    best = float("inf")
    for _ in range(repeats):
        elapsed = 0
        for _ in range(rounds):
            inbound.offer_batch(msgs)
            target, began = seen + BATCH, time.perf_counter_ns()
            for _ in range(100_000):
                if seen >= target:
                    break
                sub.poll(echo, POLL_LIMIT)
            elapsed += time.perf_counter_ns() - began
            if seen < target:
                raise RuntimeError(f"handler_offer: {target - seen} messages never arrived")
            sink.poll_batch(POLL_LIMIT)  # the echoes, drained untimed
        best = min(best, elapsed / (rounds * BATCH))
    return round(best, 2)


def _python_loop_ns(repeats: int, count: int = 1_000_000) -> float:
    """ns per iteration of a loop calling a two-argument Python handler that counts, with
    no aeron_py call: the interpreter's own share, the yardstick for the paths' ratios
    (CPython 3.13t runs Python code without the specialising interpreter)."""
    seen = 0
    data = bytes(MSG_LEN)

    def handler(data: bytes, header: Any) -> None:
        nonlocal seen
        seen += 1

    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter_ns()
        for _ in range(count):
            handler(data, None)
        best = min(best, (time.perf_counter_ns() - began) / count)
    return round(best, 2)


def _c_method_loop_ns(repeats: int, count: int = 1_000_000) -> float:
    """ns per iteration of a loop calling ``dict.get`` with two arguments: a method call into C
    that is not aeron_py's, looked up on the object each time as ``sub.poll`` is."""
    table = {1: 2}
    best = float("inf")
    for _ in range(repeats):
        began = time.perf_counter_ns()
        for _ in range(count):
            table.get(1, None)
        best = min(best, (time.perf_counter_ns() - began) / count)
    return round(best, 2)


def child_main(args: argparse.Namespace) -> int:
    import aeron_py

    if args.what == "threads":
        result = child_threads(args.dir, args.threads, args.seconds, args.stream, args.clients)
    else:
        result = child_paths(args.dir, args.repeats, args.stream)
    result.update(python=sys.version.split()[0], free_threaded_build=sysconfig.get_config_var("Py_GIL_DISABLED") == 1,
                  layout_tricks=bool(aeron_py._aeron.LAYOUT_TRICKS))
    print(json.dumps(result), flush=True)
    return 0


# --------------------------------------------------------------------------------------------
# parent side


def make_venvs() -> int:
    """Both venvs, each with this tree's aeron_py built for its interpreter (3.13t: .ci/python_ft)."""
    repo = BENCH_DIR.parent
    pyenv = sorted(Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")).glob("versions/3.13.*/bin/python3.13"))
    python313 = os.environ.get("PYTHON313") or shutil.which("python3.13") or (str(pyenv[-1]) if pyenv else None)
    if python313 is None:
        raise SystemExit("free_threading.py: no CPython 3.13 (set PYTHON313=/path/to/python3.13)")
    pythons = {"3.13t": subprocess.run(["bash", str(repo / ".ci" / "python_ft")], check=True, text=True,
                                       stdout=subprocess.PIPE).stdout.strip().splitlines()[-1],
               "3.13": python313}
    for version, venv in VENVS.items():
        py = venv / "bin" / "python"
        if not py.exists():
            subprocess.run([pythons[version], "-m", "venv", str(venv)], check=True)
        plots = ["matplotlib"] if version == "3.13" else []  # the parent runs (and plots) on 3.13
        subprocess.run([str(py), "-m", "pip", "install", "-q", "scikit-build-core", "pybind11>=3,<4", "cmake>=3.30",
                        "ninja", *plots], check=True)
        subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps", "--force-reinstall",
                        "-C", f"build-dir=build/bench-{version}", str(repo)], check=True, cwd=repo)
    return 0


def run_child(config: str, driver: Any, *args: str) -> dict[str, Any]:
    from benchmarks import harness

    version, clients = CONFIGS[config]
    py = VENVS[version] / "bin" / "python"
    if not py.exists():
        raise harness.BenchError(f"no {py}: run benchmarks/free_threading.py --make-venvs first")
    argv = [str(py), "-u", str(BENCH_DIR / "free_threading.py"), "child", "--dir", driver.dir,
            "--stream", str(harness.next_stream_id()), "--clients", clients, *args]
    for _ in range(3):
        harness.next_stream_id()  # the child's further streams
    done = subprocess.run(argv, env=driver.client_env(), text=True, capture_output=True,
                          timeout=CHILD_TIMEOUT_S, cwd="/")
    if done.returncode != 0:
        raise harness.BenchError(f"{config} child {args} exited {done.returncode}: {done.stderr[-800:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def measure(driver: Any, rounds: int, seconds: float, repeats: int) -> dict[str, Any]:
    threads: dict[str, dict[int, list[dict[str, Any]]]] = {c: {n: [] for n in THREAD_COUNTS} for c in CONFIGS}
    paths: dict[str, list[dict[str, Any]]] = {c: [] for c in PATH_CONFIGS}
    for r in range(rounds):
        for version in CONFIGS:
            for n in THREAD_COUNTS:
                out = run_child(version, driver, "threads", "--threads", str(n), "--seconds", str(seconds))
                threads[version][n].append(out)
                log.info("round %d %s %d thread(s): %.2f M msg/s (GIL %s)", r + 1, version, n,
                         out["msgs_per_s"] / 1e6, "on" if out["gil_enabled"] else "off")
            if version in PATH_CONFIGS:
                paths[version].append(run_child(version, driver, "paths", "--repeats", str(repeats)))
    return {"threads": threads, "paths": paths}


def summarise(raw: dict[str, Any]) -> dict[str, Any]:
    from benchmarks import harness

    out: dict[str, Any] = {}
    for version, per_n in raw["threads"].items():
        rates = {n: statistics.median(r["msgs_per_s"] for r in runs) for n, runs in per_n.items()}
        out[version] = {"msgs_per_s": {str(n): round(rate) for n, rate in rates.items()},
                        "scaling_2_over_1": harness.ratio(rates[2], rates[1]),
                        "gil_enabled": sorted({r["gil_enabled"] for runs in per_n.values() for r in runs}),
                        "python": per_n[1][0]["python"]}
    names = list(raw["paths"]["3.13"][0]["ns_per_op"])
    ns = {v: {p: statistics.median(r["ns_per_op"][p] for r in runs) for p in names} for v, runs in raw["paths"].items()}
    out["paths_ns_per_op"] = ns
    out["single_thread_cost_3.13t_over_3.13"] = {p: harness.ratio(ns["3.13t"][p], ns["3.13"][p]) for p in names}
    return out


def render(results: dict[str, Any], out: Path) -> None:
    from benchmarks import harness

    plt = harness.pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.4))
    s = results["summary"]
    configs = list(CONFIGS)
    width = 0.38
    clients = {"own": "a client per thread", "shared": "one shared client"}
    for k, n in enumerate(THREAD_COUNTS):
        heights = [s[c]["msgs_per_s"][str(n)] / 1e6 for c in configs]
        left.bar([i + (k - 0.5) * width for i in range(len(configs))], heights, width, label=f"{n} thread(s)")
    left.set_xticks(range(len(configs)),
                    [f"{CONFIGS[c][0]}, {clients[CONFIGS[c][1]]}\nGIL {'on' if True in s[c]['gil_enabled'] else 'off'}, "
                     f"2/1 = {s[c]['scaling_2_over_1']}" for c in configs], fontsize=8)
    left.set_ylabel("handler calls, all threads (M/s)")
    left.set_title(f"Aggregate handler throughput (goal 2/1 >= {SCALING_GOAL} without the GIL)", fontsize=9)
    left.legend(fontsize=8)
    names = list(s["paths_ns_per_op"]["3.13"])
    cost = s["single_thread_cost_3.13t_over_3.13"]
    right.bar(range(len(names)), [cost[p] or 0 for p in names], width, label="3.13t / 3.13")
    right.axhline(SINGLE_THREAD_COST_GOAL, color="grey", linestyle="--", linewidth=1)
    right.set_xticks(range(len(names)), names, rotation=35, ha="right", fontsize=7)
    right.set_ylabel("ns per call, over 3.13's")
    right.set_title(f"Single-thread cost of the free-threaded build (goal <= {SINGLE_THREAD_COST_GOAL})", fontsize=9)
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def parent_main(args: argparse.Namespace) -> int:
    from benchmarks import c_tools, harness
    from benchmarks.harness.driver import SharedDriver

    if args.make_venvs:
        return make_venvs()
    rounds = args.rounds or (1 if args.quick else 3)
    seconds = 1.0 if args.quick else 2.0
    repeats = 2 if args.quick else 3
    tools = c_tools.build_c_tools()
    started = time.monotonic()
    with SharedDriver(tools.aeronmd, harness.LOG_DIR) as driver:
        raw = measure(driver, rounds, seconds, repeats)
    results = {"generated_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "quick": args.quick, "rounds": rounds,
               "seconds_per_run": seconds, "batch": BATCH, "poll_limit": POLL_LIMIT, "msg_len": MSG_LEN,
               "channel": CHANNEL, "machine": harness.machine_info(), "raw": raw,
               "duration_s": round(time.monotonic() - started, 1)}
    results["summary"] = summarise(raw)
    s = results["summary"]
    headline: dict[str, Any] = {f"scaling_{c}": s[c]["scaling_2_over_1"] for c in CONFIGS}
    headline["gil_313t"] = str(s["3.13t"]["gil_enabled"])
    costs = [c for c in s["single_thread_cost_3.13t_over_3.13"].values() if c]
    headline["worst_single_thread_cost_3.13t"] = max(costs, default=None)
    harness.save_run(args.out_dir, "free_threading", results, headline, render)
    for config in CONFIGS:
        print(f"{config:<11} 1 thread {s[config]['msgs_per_s']['1'] / 1e6:.2f} M/s, 2 threads "
              f"{s[config]['msgs_per_s']['2'] / 1e6:.2f} M/s, 2/1 = {s[config]['scaling_2_over_1']} "
              f"(GIL {s[config]['gil_enabled']})")
    for path in s["paths_ns_per_op"]["3.13"]:
        print(f"  {path:<18} 3.13t/3.13 = {s['single_thread_cost_3.13t_over_3.13'][path]}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="role")
    child = sub.add_parser("child", help="one measurement, run by the parent under the interpreter measured")
    child.add_argument("what", choices=("threads", "paths"))
    child.add_argument("--dir", required=True, help="the shared driver's AERON_DIR")
    child.add_argument("--stream", type=int, required=True, help="first stream id (threads use the next ones too)")
    child.add_argument("--threads", type=int, default=1)
    child.add_argument("--clients", choices=("own", "shared"), default="own",
                       help="a client per thread (own) or one for all (shared)")
    child.add_argument("--seconds", type=float, default=2.0)
    child.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--make-venvs", action="store_true",
                        help="make benchmarks/.build/ft-venv-3.13 and -3.13t with this tree's aeron_py, then stop")
    parser.add_argument("--quick", action="store_true", help="1 round of 1 s runs (~1 min)")
    parser.add_argument("--rounds", type=int, default=0, help="rounds (default: 1 quick, 3 full)")
    parser.add_argument("--out-dir", type=Path, default=BENCH_DIR / "results", help="where the JSON and PNG go")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    return child_main(args) if args.role == "child" else parent_main(args)


if __name__ == "__main__":
    sys.exit(main())
