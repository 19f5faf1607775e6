"""``echo.png``: RTT bars (echo vs raw) and server memory against duologues."""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any


from .plan import GIB


def _plot_rtt(ax: Any, rtt: dict[str, Any]) -> None:
    import matplotlib.ticker
    qs = ("p50", "p90", "p99")
    width = 0.38
    labels = {"raw": "raw aeron_py ping-pong", "echo": "Echo 2.0 duologue"}
    for offset, kind, color in ((-width / 2, "raw", "tab:gray"), (width / 2, "echo", "tab:blue")):
        bars = ax.bar([i + offset for i in range(len(qs))], [rtt[f"{kind}_us"][q] for q in qs], width,
                      label=labels[kind], color=color)
        ax.bar_label(bars, fmt="%.0f", fontsize=8)
    ax.set_xticks(range(len(qs)), qs)
    ax.set_yscale("log")
    plain = matplotlib.ticker.FuncFormatter(lambda value, _pos: f"{value:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_ylabel("round trip (µs, log scale)")
    s = rtt["settings"]
    ax.set_title(f"RTT, {s['message_bytes']} B, 1 in flight, {s['rounds']} x {s['samples_per_round']} samples\n"
                 f"echo/raw: p50 {rtt['ratio']['p50']}x, p99 {rtt['ratio']['p99']}x (target <= 1.5x)", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)


def _plot_capacity(ax: Any, cap: dict[str, Any]) -> None:
    steps = cap["steps"]
    mib = 1 << 20
    n = [s["server_settled"]["duologues"] for s in steps]
    ax.plot(n, [s["server_settled"]["counter_bytes"] / mib for s in steps], "o-",
            label="'Bytes currently mapped' counter")
    ax.plot(n, [s["server_transient"]["dir_bytes"] / mib for s in steps], "s:",
            label="driver files present, right after connecting")
    done = [s for s in steps if s["settled"]]
    ax.plot([s["server_settled"]["duologues"] for s in done], [s["server_settled"]["dir_bytes"] / mib for s in done],
            "s-", label="driver files present, settled")
    ax.axhline(GIB / mib, color="tab:red", linestyle="--", label="1 GiB")
    ax.axvline(1000, color="tab:green", linestyle=":", label="1000 duologues")
    ax.set_xlabel("concurrent connected duologues (server side)")
    ax.set_ylabel("server driver memory (MiB)")
    ax.set_title(f"server memory vs duologues; max held {cap.get('max_duologues_held')}", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)


def write_png(path: Path, results: dict[str, Any]) -> None:
    """RTT bars (echo vs raw) and server memory against duologues (matplotlib Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.5))
    for ax, name, plot, ready in ((left, "rtt", _plot_rtt, "echo_us"), (right, "capacity", _plot_capacity, "steps")):
        part = results.get(name, {})
        if part.get(ready):
            plot(ax, part)
        else:
            ax.axis("off")
            ax.text(0.5, 0.5, f"{name} part failed:\n" + textwrap.fill(str(part.get("error", "n/a"))[:600], 70),
                    ha="center", va="center", fontsize=8)
    m = results.get("machine", {})
    fig.suptitle(f"aeron_py Echo 2.0 on {m.get('cpu_count')} cores ({m.get('cpu_model')}), loopback, SHARED drivers, "
                 f"backoff idle; 1-min load average {results.get('load_average_before', ['?'])[0]:.1f} before, "
                 f"{results.get('load_average_after', ['?'])[0]:.1f} after", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
