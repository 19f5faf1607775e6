"""Render ``results/bindings.json`` (``render``) and ``results/peers.json`` (``render_peers``)
as bar charts (matplotlib, Agg backend).

Usage: ``python -m benchmarks.plot [results/bindings.json|results/peers.json] [out.png]``.
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
COLOURS = {"aeron_py": "#1f77b4", "aeron_py_offer_batch": "#2ca02c", "c": "#7f7f7f", "pyaeron": "#ff7f0e"}
LABELS = {"aeron_py": "aeron_py (offer per message)", "aeron_py_offer_batch": "aeron_py (offer_batch)", "c": "Aeron C tools",
          "pyaeron": "pyaeron"}


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
                 f"(SHARED, backoff), {results['machine']['cpu_count']} cores{_load(results)}"
                 f"{' — quick run' if results.get('quick') else ''}", fontsize=11)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def _peer_rtt_panel(ax: Any, cases: list[dict[str, Any]]) -> None:
    impls = ("c", "aeron_py", "pyaeron")
    groups = [(c, p) for c in cases for p in ("p50", "p99")]
    width = 0.27
    for k, impl in enumerate(impls):
        xs, heights = [], []
        for i, (case, pct) in enumerate(groups):
            value = (case[impl].get("rtt_us") or {}).get(pct)
            if value is not None:
                xs.append(i + (k - 1) * width)
                heights.append(value)
        label = "Aeron C cping/cpong" if impl == "c" else impl
        ax.bar(xs, heights, width, color=COLOURS[impl], label=label)
        for x, h in zip(xs, heights):
            ax.annotate(f"{h:.3g}", (x, h), ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{c.get('label') or 'idle=' + c['idle']}\n{p}" for c, p in groups], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("round-trip time (µs, log scale)")
    ax.set_title(f"IPC ping/pong RTT, {cases[0]['msg_len'] if cases else '?'} B, one in flight")
    ax.legend(fontsize=8)


def _peer_throughput_panel(ax: Any, thr: dict[str, Any]) -> None:
    impls = [i for i in ("aeron_py", "pyaeron") if thr.get(i, {}).get("msgs_per_s")]
    heights = [thr[i]["msgs_per_s"] / 1e6 for i in impls]
    ax.bar(range(len(impls)), heights, 0.6, color=[COLOURS[i] for i in impls])
    for x, h in enumerate(heights):
        ax.annotate(f"{h:.3g}", (x, h), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(impls)))
    ax.set_xticklabels(impls)
    ax.set_ylabel("million messages / s")
    ax.set_title(f"poll(handler, {thr['fragment_limit']}): a Python handler per {thr['msg_len']} B message\n"
                 f"(ratio aeron_py / pyaeron {thr.get('ratio_aeron_py_over_pyaeron')})", fontsize=10)


def _peer_paths_panel(ax: Any, paths: dict[str, Any], same: dict[str, Any] | None) -> None:
    names = list(paths["speedup_over_pyaeron"])
    speedups = [paths["speedup_over_pyaeron"][n] or 0.0 for n in names]
    ax.barh(range(len(names)), speedups, 0.6, color=[COLOURS["aeron_py"] if v >= 1.0 else "#c44e52" for v in speedups])
    ax.axvline(1.0, color="black", linewidth=0.8)
    for y, (name, v) in enumerate(zip(names, speedups)):
        ns = paths["aeron_py"]["ns_per_op"][name], paths["pyaeron"]["ns_per_op"][name]
        ax.annotate(f"{v:.2f}x ({ns[0]} vs {ns[1]} ns)", (v, y), va="center", fontsize=7, xytext=(3, 0),
                    textcoords="offset points")
    if same:
        dots = [same["speedup_over_pyaeron"].get(n) for n in names]
        ax.scatter([d or 0.0 for d in dots], range(len(names)), marker="D", s=18, color="black", zorder=3,
                   label="both in one process, in turn")
        ax.legend(fontsize=7, loc="lower right")
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels(names, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("speed-up over pyaeron (its ns / aeron_py's ns; > 1 = aeron_py faster)")
    ax.set_title(f"each path, {paths['msg_len']} B: bars one process per library (ns per call, median of "
                 "rounds)", fontsize=9)


def _load(results: dict[str, Any]) -> str:
    """", load avg a → b" (1-minute load average before and after the run), or ""."""
    machine = results.get("machine", {})
    before, after = machine.get("loadavg_before"), machine.get("loadavg_after")
    if not before or not after:
        return ""
    return f", load avg {before[0]:.1f} → {after[0]:.1f}"


def render_peers(results: dict[str, Any], out: Path) -> None:
    """Write the PNG for a ``peers.json`` document (RTT, handler throughput, and every path when measured)."""
    has_paths = "paths" in results
    fig, axes = plt.subplots(1, 3 if has_paths else 2, figsize=(19 if has_paths else 13, 5.5),
                             gridspec_kw={"width_ratios": [2, 1, 1.6] if has_paths else [2, 1]})
    _peer_rtt_panel(axes[0], results["rtt"])
    _peer_throughput_panel(axes[1], results["throughput"])
    if has_paths:
        _peer_paths_panel(axes[2], results["paths"], results.get("paths_same_process"))
    versions = results["versions"]
    fig.suptitle(f"aeron_py vs pyaeron {versions['pyaeron']['package']} — one Aeron {versions['driver_aeron']} C "
                 f"driver (SHARED, backoff), {results['machine']['cpu_count']} cores, median of "
                 f"{results['rounds']} interleaved rounds{_load(results)}{' — quick run' if results.get('quick') else ''}",
                 fontsize=10)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    plt.close(fig)


def main(argv: list[str]) -> int:
    src = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parent / "results" / "bindings.json"
    out = Path(argv[2]) if len(argv) > 2 else src.with_suffix(".png")
    results = json.loads(src.read_text())
    (render_peers if "rtt" in results and "versions" in results else render)(results, out)
    print(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
