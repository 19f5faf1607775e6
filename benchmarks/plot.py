"""Render ``results/bindings.json`` as a bar chart (matplotlib, Agg backend).

Usage: ``python benchmarks/plot.py [results/bindings.json] [out.png]``.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PERCENTILES = ("p50", "p90", "p99")
COLOURS = {"aeron_py": "#1f77b4", "aeron_py_offer_batch": "#2ca02c", "c": "#7f7f7f"}
LABELS = {"aeron_py": "aeron_py (offer per message)", "aeron_py_offer_batch": "aeron_py (offer_batch)", "c": "Aeron C tools"}


def _rtt_panel(ax: Any, cases: list[dict[str, Any]], transport: str) -> None:
    picked = [c for c in cases if c["transport"] == transport]
    groups = [(c, p) for c in picked for p in PERCENTILES]
    width = 0.38
    for k, impl in enumerate(("c", "aeron_py")):
        xs, heights = [], []
        for i, (case, pct) in enumerate(groups):
            value = (case[impl].get("rtt_us") or {}).get(pct)
            if value is not None:
                xs.append(i + (k - 0.5) * width)
                heights.append(value)
        ax.bar(xs, heights, width, color=COLOURS[impl], label=LABELS[impl])
        for x, h in zip(xs, heights):
            ax.annotate(f"{h:.3g}", (x, h), ha="center", va="bottom", fontsize=6, rotation=90)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{c['idle']}{' (starved)' if c.get('starved') else ''}\n{p}" for c, p in groups],
                       fontsize=7)
    ax.set_yscale("log")
    ax.set_ylabel("round-trip time (µs, log scale)")
    ax.set_title(f"Ping/pong RTT over {transport.upper()} ({picked[0]['msg_len'] if picked else '?'} B)")
    ax.legend(fontsize=8)


def _throughput_panel(ax: Any, cases: list[dict[str, Any]]) -> None:
    width = 0.27
    for k, impl in enumerate(("c", "aeron_py", "aeron_py_offer_batch")):
        xs, heights = [], []
        for i, case in enumerate(cases):
            rate = case.get(impl, {}).get("msgs_per_s")
            if rate is not None:
                xs.append(i + (k - 1) * width)
                heights.append(rate / 1e6)
        ax.bar(xs, heights, width, color=COLOURS[impl], label=LABELS[impl])
        for x, h in zip(xs, heights):
            ax.annotate(f"{h:.3g}", (x, h), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([f"idle={c['idle']}\nratio {c.get('ratio_aeron_py_over_c')}" for c in cases], fontsize=8)
    ax.set_ylabel("million messages / s")
    ax.set_title(f"IPC throughput, {cases[0]['msg_len'] if cases else '?'} B messages")
    ax.legend(fontsize=8)


def render(results: dict[str, Any], out: Path) -> None:
    """Write the three-panel PNG for a ``bindings.json`` document."""
    fig, axes = plt.subplots(1, 3, figsize=(17, 5.5))
    rtt_cases = results["pingpong"]["cases"]
    _rtt_panel(axes[0], rtt_cases, "ipc")
    _rtt_panel(axes[1], rtt_cases, "udp")
    _throughput_panel(axes[2], results["throughput"]["cases"])
    fig.suptitle(f"aeron_py vs Aeron {results['aeron']['version']} C tools — same aeronmd "
                 f"(SHARED, backoff), {results['machine']['cpu_count']} cores"
                 f"{' — quick run' if results.get('quick') else ''}", fontsize=11)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str]) -> int:
    src = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent / "results" / "bindings.json"
    out = Path(argv[2]) if len(argv) > 2 else src.with_suffix(".png")
    render(json.loads(src.read_text()), out)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
