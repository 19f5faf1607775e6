"""Chart of ``results/echo_scale.json`` (the latest run, named by its label), matplotlib Agg.
Earlier runs' headline numbers are in ``results/history/echo_scale.csv``.

Usage: ``python -m benchmarks.scale_plot [results/echo_scale.json] [out.png]``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file (python benchmarks/<name>.py): make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import RESULTS_DIR, pyplot  # noqa: E402

GIB = 1 << 30


def _series(run: dict[str, Any], get: Any) -> tuple[list[int], list[float]]:
    xs, ys = [], []
    for step in run.get("hold", {}).get("steps", []):
        try:
            value = get(step)
        except (KeyError, TypeError):
            continue
        if value is not None:
            xs.append(step.get("held", step["target"]))
            ys.append(value)
    return xs, ys


def write_png(path: Path, run: dict[str, Any]) -> None:
    """Four panels of the run's steps: log files, server CPU, echo RTT, load CPU."""
    plt = pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(12, 8))
    panels = [
        (axes[0][0], "server log files (GiB)", [
            ("real", lambda s: s["server_logs"]["real_bytes"] / GIB),
            ("apparent", lambda s: s["server_logs"]["apparent_bytes"] / GIB)]),
        (axes[0][1], "server CPU (% of one core)", [
            ("idle", lambda s: s["idle"]["cpu_pct"]["server"]["<process>"]),
            ("echo 1/s", lambda s: s["echo"]["cpu_pct"]["server"]["<process>"])]),
        (axes[1][0], "echo RTT at 1 echo/s per duologue (ms)", [
            ("p50", lambda s: s["echo"]["load_report"]["rtt"]["p50_us"] / 1000),
            ("p99", lambda s: s["echo"]["load_report"]["rtt"]["p99_us"] / 1000)]),
        (axes[1][1], "load process CPU (% of one core)", [
            ("idle", lambda s: s["idle"]["cpu_pct"]["load"]["<process>"]),
            ("echo 1/s", lambda s: s["echo"]["cpu_pct"]["load"]["<process>"])]),
    ]
    shown = [(run.get("label", "latest"), run)]
    for ax, title, curves in panels:
        for label, run in shown:
            for name, get in curves:
                xs, ys = _series(run, get)
                if xs:
                    ax.plot(xs, ys, marker="o", label=f"{label}: {name}")
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("duologues held")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    axes[0][0].axhline(2.0, color="grey", linestyle="--", linewidth=0.8)
    axes[0][1].axhline(5.0, color="grey", linestyle="--", linewidth=0.8)
    fig.suptitle("Echo server at scale (benchmarks/echo_scale.py)")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


if __name__ == "__main__":
    source = Path(sys.argv[1]) if len(sys.argv) > 1 else RESULTS_DIR / "echo_scale.json"
    out = Path(sys.argv[2]) if len(sys.argv) > 2 else source.with_suffix(".png")
    write_png(out, json.loads(source.read_text()))
