"""End-to-end timing of the telemetry analytics job.

    python -m benchmarks.analytics_bench [--sizes 1000000 3000000 10000000] [--master local[2]]
    python -m benchmarks.analytics_bench --source-key [--addresses 200000]

For each size, synthetic telemetry is generated once (``aeron_py.analytics.generate``,
seed fixed) and cached under ``benchmarks/.data/`` (git-ignored). The job then runs as an operator would start it,
``python -m aeron_py.analytics DIR --out OUT --master local[2]``, in a fresh process,
so the time includes Python and JVM start-up. Results go to
``benchmarks/results/analytics.json`` and ``benchmarks/results/analytics.png``.
Target: 10 M events in at most 60 s on ``local[2]`` (issue 10).

``--source-key`` instead times the two ways of keying client addresses in Spark over
distinct addresses (the job has about 190,000 at 10 M events): the column expressions
of ``rules.with_source_key`` and a Python UDF calling ``aeron_py.addresses.source_key``
(pandas/Arrow are not dependencies of the project; a plain UDF ships the rows pickled),
each run cold (first query: planning, code generation, Python workers) and warm.
Results go to ``benchmarks/results/analytics_source_key.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from aeron_py.analytics.generate import GeneratorConfig, generate  # noqa: E402
from benchmarks.harness import pick, save_results, save_run  # noqa: E402

TARGET_EVENTS = 10_000_000
TARGET_SECONDS = 60.0


def random_addresses(count: int, seed: int) -> list[str]:
    """Mostly IPv4, a tenth IPv6 (a few per /64), a few IPv4-mapped: like the job's clients."""
    import ipaddress
    import random

    rng = random.Random(seed)
    result = set()
    while len(result) < count:
        draw = rng.random()
        if draw < 0.88:
            result.add(str(ipaddress.IPv4Address(rng.getrandbits(32))))
        elif draw < 0.98:
            net = rng.getrandbits(16) << 112 | 0x20010DB8 << 96 | rng.getrandbits(8) << 64
            result.add(str(ipaddress.IPv6Address(net | rng.getrandbits(16))))
        else:
            result.add(f"::ffff:{ipaddress.IPv4Address(rng.getrandbits(32))}")
    return sorted(result)


def source_key_comparison(count: int, prefix: int = 64) -> dict[str, Any]:
    """Seconds to key ``count`` distinct addresses: Spark expression vs Python UDF."""
    from pyspark import cloudpickle
    from pyspark.sql import functions as F

    import aeron_py.addresses
    from aeron_py.addresses import source_key
    from aeron_py.analytics.rules import with_source_key
    from aeron_py.analytics.session import build_session

    # Ship source_key by value: importing aeron_py on a worker needs the compiled extension.
    cloudpickle.register_pickle_by_value(aeron_py.addresses)
    spark = build_session("local[2]", log_level="ERROR")
    try:
        addresses = spark.createDataFrame([(a,) for a in random_addresses(count, 3)], "address string")
        addresses = addresses.repartition(4).persist()
        addresses.count()

        def udf_key(ip: str) -> tuple[str, str]:
            try:
                key = source_key(ip, 32, prefix)
            except (ValueError, TypeError):
                return ip, "other"
            return key, "ipv6" if "/" in key else "ipv4"

        keyed = {
            "expression": lambda: with_source_key(addresses, "address", prefix),
            "python_udf": lambda: addresses.withColumn(
                "k", F.udf(udf_key, "struct<key:string,family:string>")("address")).select("address", "k.*"),
        }
        seconds: dict[str, list[float]] = {name: [] for name in keyed}
        for _ in range(2):  # cold, then warm
            for name, build in keyed.items():
                started = time.monotonic()
                build().write.format("noop").mode("overwrite").save()
                seconds[name].append(round(time.monotonic() - started, 2))
        same = with_source_key(addresses, "address", prefix).exceptAll(keyed["python_udf"]()).count() == 0
    finally:
        spark.stop()
    return {"addresses": count, "ipv6_prefix": prefix, "seconds_cold_warm": seconds, "identical": same,
            "udf_over_expression_cold": round(seconds["python_udf"][0] / seconds["expression"][0], 2),
            "udf_over_expression_warm": round(seconds["python_udf"][1] / seconds["expression"][1], 2),
            "load_avg": os.getloadavg()}


def dataset(data_dir: Path, events: int, seed: int) -> tuple[Path, float | None]:
    """The cached dataset for (events, seed), generating it if needed; (dir, seconds or None)."""
    directory = data_dir / f"events-{events}-seed{seed}"
    manifest = directory / "generator.json"
    if manifest.exists():
        meta = json.loads(manifest.read_text())
        if meta.get("events") == events and meta.get("seed") == seed:
            return directory, None
    shutil.rmtree(directory, ignore_errors=True)
    started = time.monotonic()
    generate(GeneratorConfig(out=directory, events=events, seed=seed))
    return directory, time.monotonic() - started


def job_command(source: Path | None) -> list[str]:
    """The CLI, from this tree or (``source``) from a plain copy of another version's
    ``aeron_py`` (its built extension copied in), past this tree's editable install."""
    if source is None:
        return [sys.executable, "-m", "aeron_py.analytics"]
    code = (
        "import runpy, sys; sys.meta_path[:] = [f for f in sys.meta_path "
        "if 'editable' not in (type(f).__module__ + type(f).__name__).lower()]; "
        f"sys.path.insert(0, {str(source)!r}); sys.argv[0] = 'aeron_py.analytics'; "
        "runpy.run_module('aeron_py.analytics', run_name='__main__', alter_sys=True)"
    )
    return [sys.executable, "-c", code]


def _tree_cpu_s(root: int, seen: dict[int, float]) -> None:
    """Record the CPU seconds (user + system) of ``root`` and its descendants (the JVM)."""
    tick = os.sysconf("SC_CLK_TCK")
    stack = [root]
    while stack:
        pid = stack.pop()
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            seen[pid] = (int(fields[11]) + int(fields[12])) / tick
            stack += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
        except (OSError, ValueError, IndexError):
            continue


def run_job(events_dir: Path, master: str, timeout: float, extra: list[str],
            source: Path | None = None) -> dict[str, Any]:
    """Run the CLI in a fresh process; wall time includes all start-up. ``cpu_s``: CPU
    seconds of the process tree (sampled every 0.2 s, so a little low), which other
    work on the machine disturbs far less than wall time."""
    with tempfile.TemporaryDirectory(prefix="analytics-bench-") as out:
        command = [*job_command(source), str(events_dir), "--out", out,
                   "--master", master, "--log-level", "INFO", *extra]
        env = {**os.environ, "PYTHONPATH": str(source or REPO)}
        cpu: dict[int, float] = {}
        started = time.monotonic()
        with tempfile.TemporaryFile("w+") as stderr:
            proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr, text=True, env=env,
                                    cwd=source or REPO)
            deadline = started + timeout
            while proc.poll() is None and time.monotonic() < deadline:
                _tree_cpu_s(proc.pid, cpu)
                time.sleep(0.2)
            if proc.poll() is None:
                proc.kill()
            proc.wait()
            wall = time.monotonic() - started
            stderr.seek(0)
            log_text = stderr.read()
        if proc.returncode != 0:
            raise RuntimeError(f"job failed ({proc.returncode}):\n{log_text[-4000:]}")
        report = json.loads((Path(out) / "report.json").read_text())
    lines = log_text.replace("\r", "\n").splitlines()
    logged = [line.split("analytics.job: ", 1)[1] for line in lines if "analytics.job: " in line]
    steps = [line for line in logged if line.endswith(" s")]
    side_by_side = [line for line in logged if line.endswith(" s, side by side")]
    return {"wall_s": round(wall, 2), "job_s": report["elapsed_s"], "cpu_s": round(sum(cpu.values()), 1),
            "report": report, "steps": steps, **({"side_by_side": side_by_side} if side_by_side else {})}


def _stages(run: dict[str, Any]) -> list[tuple[str, float]]:
    """(step name, seconds) from a run's ``steps`` lines ("name: 12.3 s")."""
    return [(line.rsplit(": ", 1)[0], float(line.rsplit(": ", 1)[1].split()[0])) for line in run["steps"]]


def plot(results: dict[str, Any], path: Path) -> None:
    """Per-step seconds of the 10 M run, stacked, next to the ``before`` run when there is one."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    runs = [("after", r) for r in results["runs"] if r["events"] == TARGET_EVENTS] or [
        (f"{results['runs'][-1]['events']:,}", results["runs"][-1])]
    if "before" in results:
        runs.insert(0, ("before", results["before"]))
    fig = Figure(figsize=(12, 4.5), dpi=100)
    ax = fig.subplots()
    colours: dict[str, Any] = {}
    cmap = matplotlib.colormaps["tab10"]
    for y, (label, run) in enumerate(runs):
        left = 0.0
        for name, seconds in _stages(run):
            short = name.split(" (")[0].split(" into ")[0]
            new = short not in colours
            colour = colours.setdefault(short, cmap(len(colours) % 10))
            ax.barh(y, seconds, left=left, color=colour, label=short if new else None)
            left += seconds
        ax.barh(y, run["wall_s"] - left, left=left, color="lightgrey", label="start-up, stop" if y == 0 else None)
        ax.annotate(f"{run['wall_s']:.0f} s (load {run.get('load_avg_after', [0])[0]:.0f})", (run["wall_s"], y),
                    textcoords="offset points", xytext=(4, -3))
    ax.set_yticks(range(len(runs)), [label for label, _ in runs])
    ax.set_xlabel(f"seconds, 10 M events, {results['master']} (2 cores shared with other work: compare ratios)")
    ax.set_title("aeron_py telemetry analytics job, per step")
    ax.set_xlim(0, max(run["wall_s"] for _, run in runs) * 1.2)
    ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path)


def before_run(args: argparse.Namespace, events: int) -> dict[str, Any]:
    """The previous version's job (``--before-source``) on the same data, same master."""
    directory, _ = dataset(args.data_dir, events, args.seed)
    load_start = os.getloadavg()
    run = run_job(directory, args.master, args.timeout, args.job_args, args.before_source)
    report = run.pop("report")
    print(f"    before: job {run['wall_s']:.1f} s end to end, {run['cpu_s']:.0f} CPU s", flush=True)
    return {"note": f"the previous version (from {args.before_source}), run right after 'after'",
            "events": events, **run, "flagged": report["clients"]["flagged"],
            "load_avg_start": load_start, "load_avg_after": os.getloadavg()}


def ratios(before: dict[str, Any], after: dict[str, Any]) -> dict[str, float]:
    """after / before of wall time, CPU time, parse, the table steps and plots."""
    def seconds(run: dict[str, Any], *prefixes: str) -> float:
        return sum(s for name, s in _stages(run) if name.startswith(prefixes))

    tables = ("per-IP", "time series", "driver", "RTT", "tables")
    pairs = {
        "wall": (after["wall_s"], before["wall_s"]), "cpu": (after["cpu_s"], before["cpu_s"]),
        # "parse JSON (kept ...)" before the one-scan summary, "scan JSON once ..." since.
        "parse_and_count": (seconds(after, "parse", "scan"), seconds(before, "parse", "scan")),
        "tables": (seconds(after, *tables), seconds(before, *tables)),
        "plots": (seconds(after, "plots"), seconds(before, "plots")),
    }
    return {name: round(a / b, 2) for name, (a, b) in pairs.items() if b}


def history_row(results: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of a run, flat, for ``results/history/analytics.csv``."""
    row: dict[str, Any] = {"master": results.get("master"),
                           "load_1min_start": pick(results, "machine", "load_avg_start", 0)}
    for run in results.get("runs") or []:
        for key in ("wall_s", "cpu_s", "events_per_s"):
            row[f"{key}_{run['events']}"] = run.get(key)
    row["before_wall_s"] = pick(results, "before", "wall_s")
    row["wall_after_over_before"] = pick(results, "ratios_after_over_before", "wall")
    row["target_met"] = pick(results, "target", "met")
    return row


def source_key_row(result: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of a ``--source-key`` run, for ``results/history/analytics_source_key.csv``."""
    return {k: result.get(k) for k in ("addresses", "identical", "udf_over_expression_cold",
                                       "udf_over_expression_warm")}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 3_000_000, 10_000_000])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=HERE / ".data")
    parser.add_argument("--results-dir", type=Path, default=HERE / "results")
    parser.add_argument("--timeout", type=float, default=900.0, help="per job run, seconds")
    parser.add_argument("--source-key", action="store_true",
                        help="time the source-key expression against a Python UDF instead of the job")
    parser.add_argument("--addresses", type=int, default=200_000, help="distinct addresses for --source-key")
    parser.add_argument("--before", type=Path, metavar="JSON",
                        help="a run (wall_s, steps, ...) of the previous version, kept as 'before' in the results")
    parser.add_argument("--before-source", type=Path, metavar="DIR",
                        help="a plain copy of the previous version's aeron_py (with its built extension) "
                             "under DIR: its job runs right after this one on the largest size, as 'before'")
    parser.add_argument("job_args", nargs="*", help="extra arguments for the job (after --)")
    args = parser.parse_args(argv)
    if args.source_key:
        result = source_key_comparison(args.addresses)
        save_results(args.results_dir / "analytics_source_key.json", result, source_key_row(result))
        print(json.dumps(result, indent=2))
        return 0

    import pyspark

    results: dict[str, Any] = {
        "master": args.master,
        "machine": {
            "cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
            "pyspark": pyspark.__version__, "load_avg_start": os.getloadavg(),
        },
        "runs": [],
    }
    for events in args.sizes:
        directory, generated_s = dataset(args.data_dir, events, args.seed)
        size = sum(p.stat().st_size for p in directory.glob("*.jsonl"))
        print(f"{events:>11,} events, {size / 1e6:,.0f} MB "
              f"({'cached' if generated_s is None else f'generated in {generated_s:.0f} s'})", flush=True)
        load_start = os.getloadavg()
        run = run_job(directory, args.master, args.timeout, args.job_args)
        report = run.pop("report")
        results["runs"].append({
            "events": events, "input_bytes": size, "generate_s": generated_s and round(generated_s, 1),
            "load_avg_start": load_start,
            **run, "events_per_s": round(events / run["wall_s"]), "flagged": report["clients"]["flagged"],
            "load_avg_after": os.getloadavg(),
        })
        print(f"    job {run['wall_s']:.1f} s end to end ({run['job_s']:.1f} s inside, {run['cpu_s']:.0f} CPU s), "
              f"{events / run['wall_s']:,.0f} events/s", flush=True)
    if args.before:
        results["before"] = json.loads(args.before.read_text())
    elif args.before_source:
        results["before"] = before_run(args, max(args.sizes))
        results["ratios_after_over_before"] = ratios(results["before"], results["runs"][-1])
    ten_m = [r for r in results["runs"] if r["events"] == TARGET_EVENTS]
    results["target"] = {
        "events": TARGET_EVENTS, "max_s": TARGET_SECONDS,
        "met": (ten_m[0]["wall_s"] <= TARGET_SECONDS) if ten_m else None,
    }
    paths = save_run(args.results_dir, "analytics", results, history_row(results), plot)
    print(f"results: {paths[0]}, {paths[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
