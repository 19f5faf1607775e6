"""End-to-end timing of the telemetry analytics job.

    python benchmarks/analytics_bench.py [--sizes 1000000 3000000 10000000] [--master local[2]]

For each size, synthetic telemetry is generated once (``aeron_py.analytics.generate``,
seed fixed) and cached under ``benchmarks/.data/`` (git-ignored). The job then runs as an operator would start it,
``python -m aeron_py.analytics DIR --out OUT --master local[2]``, in a fresh process,
so the time includes Python and JVM start-up. Results go to
``benchmarks/results/analytics.json`` and ``benchmarks/results/analytics.png``.
Target: 10 M events in at most 90 s on 2 cores.
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

TARGET_EVENTS = 10_000_000
TARGET_SECONDS = 90.0


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


def run_job(events_dir: Path, master: str, timeout: float, extra: list[str]) -> dict[str, Any]:
    """Run the CLI in a fresh process; wall time includes all start-up."""
    with tempfile.TemporaryDirectory(prefix="analytics-bench-") as out:
        command = [sys.executable, "-m", "aeron_py.analytics", str(events_dir), "--out", out,
                   "--master", master, "--log-level", "INFO", *extra]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        started = time.monotonic()
        proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO)
        wall = time.monotonic() - started
        if proc.returncode != 0:
            raise RuntimeError(f"job failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        report = json.loads((Path(out) / "report.json").read_text())
    lines = proc.stderr.replace("\r", "\n").splitlines()
    steps = [line.split("analytics.job: ", 1)[1] for line in lines
             if "analytics.job: " in line and line.endswith(" s")]
    return {"wall_s": round(wall, 2), "job_s": report["elapsed_s"], "report": report, "steps": steps}


def plot(results: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    runs = results["runs"]
    fig = Figure(figsize=(8, 4.5), dpi=100)
    ax = fig.subplots()
    millions = [r["events"] / 1e6 for r in runs]
    ax.plot(millions, [r["wall_s"] for r in runs], marker="o", label=f"end to end ({results['master']})")
    ax.plot(millions, [r["job_s"] for r in runs], marker="s", label="inside the job (no start-up)")
    ax.axhline(TARGET_SECONDS, color="tab:red", linestyle="--", label=f"target {TARGET_SECONDS:g} s at 10 M")
    for r, x in zip(runs, millions):
        ax.annotate(f"{r['wall_s']:.0f} s", (x, r["wall_s"]), textcoords="offset points", xytext=(4, 6))
    ax.set_xlabel("events (millions)")
    ax.set_ylabel("seconds")
    ax.set_ylim(bottom=0)
    ax.set_title(f"aeron_py telemetry analytics, {results['machine']['cpus']} CPUs")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 3_000_000, 10_000_000])
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--data-dir", type=Path, default=HERE / ".data")
    parser.add_argument("--results-dir", type=Path, default=HERE / "results")
    parser.add_argument("--timeout", type=float, default=900.0, help="per job run, seconds")
    parser.add_argument("job_args", nargs="*", help="extra arguments for the job (after --)")
    args = parser.parse_args(argv)

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
        run = run_job(directory, args.master, args.timeout, args.job_args)
        report = run.pop("report")
        results["runs"].append({
            "events": events, "input_bytes": size, "generate_s": generated_s and round(generated_s, 1),
            **run, "events_per_s": round(events / run["wall_s"]), "flagged": report["clients"]["flagged"],
            "load_avg_after": os.getloadavg(),
        })
        print(f"    job {run['wall_s']:.1f} s end to end ({run['job_s']:.1f} s inside), "
              f"{events / run['wall_s']:,.0f} events/s", flush=True)
    ten_m = [r for r in results["runs"] if r["events"] == TARGET_EVENTS]
    results["target"] = {
        "events": TARGET_EVENTS, "max_s": TARGET_SECONDS,
        "met": (ten_m[0]["wall_s"] <= TARGET_SECONDS) if ten_m else None,
    }
    args.results_dir.mkdir(parents=True, exist_ok=True)
    (args.results_dir / "analytics.json").write_text(json.dumps(results, indent=2) + "\n")
    plot(results, args.results_dir / "analytics.png")
    print(f"results: {args.results_dir / 'analytics.json'}, {args.results_dir / 'analytics.png'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
