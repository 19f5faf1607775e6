"""PNG plots and one self-contained HTML report (PNGs embedded as base64).

Spark-free: it renders the ``report.json`` mapping and small row lists the job
collected, so it can be tested and re-run without a cluster. Plots use matplotlib's
object API on the Agg backend (no display needed); matplotlib is imported on first
use only.
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aeron_py.telemetry.events import REJECT_REASONS

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["PLOTS", "ReportTables", "plotted_counters", "render_report"]

#: File name and title of every plot, in report order.
PLOTS = {
    "plot_traffic.png": "HELLOs and rejections per minute",
    "plot_duologues.png": "Duologues per minute",
    "plot_top_clients.png": "Top source keys by HELLOs",
    "plot_rtt.png": "Echo round-trip time, slowest clients",
    "plot_driver.png": "Driver counters",
}
MAX_COUNTER_PANELS = 6
#: Counters plotted first when present (Aeron system counter labels).
PREFERRED_COUNTERS = (
    "Bytes sent", "Bytes received", "NAKs sent", "Errors", "Invalid packets", "Bytes currently mapped",
)


@dataclass
class ReportTables:
    """Small row lists (dicts) the job collected for the report."""

    timeseries: list[dict[str, Any]] = field(default_factory=list)
    counters: list[dict[str, Any]] = field(default_factory=list)
    top_clients: list[dict[str, Any]] = field(default_factory=list)
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    rtt_top: list[dict[str, Any]] = field(default_factory=list)


def _utc(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, tz=timezone.utc)


def _time_axis(series: list[dict[str, Any]]) -> Any:
    """The minutes of ``series`` as datetimes for an x axis.  Typed ``Any``: matplotlib takes
    datetimes through its unit converters, but its stubs list only numbers and arrays."""
    return [_utc(r["minute"]) for r in series]


def _empty(ax: Any, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what} in the input", ha="center", va="center", transform=ax.transAxes)
    ax.set_axis_off()


def _plot_traffic(fig: Figure, series: list[dict[str, Any]]) -> None:
    ax = fig.subplots()
    if not series:
        _empty(ax, "client events")
        return
    x = _time_axis(series)
    ax.plot(x, [r["hellos"] for r in series], label="HELLOs", color="black", linewidth=1)
    bottom = [0] * len(series)
    for reason in REJECT_REASONS:
        values = [r[f"rejects_{reason}"] for r in series]
        ax.fill_between(x, bottom, [b + v for b, v in zip(bottom, values)], step="mid", alpha=0.6,
                        label=f"rejected: {REJECT_REASONS[reason]}")
        bottom = [b + v for b, v in zip(bottom, values)]
    ax.set_ylabel("per minute")
    ax.legend(loc="upper left", fontsize="small")
    fig.autofmt_xdate()


def _plot_duologues(fig: Figure, series: list[dict[str, Any]]) -> None:
    ax = fig.subplots()
    if not series:
        _empty(ax, "client events")
        return
    x = _time_axis(series)
    ax.step(x, [r["active_duologues"] for r in series], where="post", label="open at minute end")
    ax.plot(x, [r["duologues_created"] for r in series], label="created", alpha=0.7)
    ax.plot(x, [r["duologues_expired"] for r in series], label="expired (never connected)", alpha=0.7)
    ax.plot(x, [r["bad_messages"] for r in series], label="bad messages", alpha=0.7)
    ax.set_ylabel("duologues / events")
    ax.legend(loc="upper left", fontsize="small")
    fig.autofmt_xdate()


def _plot_top_clients(fig: Figure, rows: list[dict[str, Any]]) -> None:
    ax = fig.subplots()
    rows = [r for r in rows if r["hellos"] > 0][:20]
    if not rows:
        _empty(ax, "HELLOs")
        return
    labels = [r["key"] for r in reversed(rows)]
    colours = ["tab:red" if r["verdict"] == "block" else "tab:blue" for r in reversed(rows)]
    ax.barh(labels, [r["hellos"] for r in reversed(rows)], color=colours)
    ax.set_xlabel("HELLOs (red: verdict block)")
    ax.tick_params(axis="y", labelsize="x-small")
    fig.tight_layout()


def _plot_rtt(fig: Figure, rows: list[dict[str, Any]]) -> None:
    ax = fig.subplots()
    if not rows:
        _empty(ax, "rtt_sample events (>= 10 per client)")
        return
    rows = rows[:20]
    labels = [r["client_ip"] for r in reversed(rows)]
    for column, marker in (("p50_us", "o"), ("p90_us", "s"), ("p99_us", "^")):
        ax.scatter([r[column] / 1000 for r in reversed(rows)], labels, marker=marker, label=column[:3])
    ax.set_xscale("log")
    ax.set_xlabel("round trip, ms")
    ax.tick_params(axis="y", labelsize="x-small")
    ax.legend(fontsize="small")
    fig.tight_layout()


def plotted_counters(names: Sequence[str]) -> list[str]:
    """The driver counters the report plots, in panel order: the preferred ones present,
    then the others by name, at most :data:`MAX_COUNTER_PANELS`."""
    present = set(names)
    preferred = [n for n in PREFERRED_COUNTERS if n in present]
    return (preferred + sorted(present - set(preferred)))[:MAX_COUNTER_PANELS]


def _plot_driver(fig: Figure, rows: list[dict[str, Any]]) -> None:
    names = plotted_counters([r["name"] for r in rows])
    if not names:
        _empty(fig.subplots(), "driver_snapshot events")
        return
    columns = 2 if len(names) > 1 else 1
    axes = list(fig.subplots((len(names) + columns - 1) // columns, columns, squeeze=False).flat)
    for ax, name in zip(axes, names):
        for server in sorted({r["server_id"] for r in rows if r["name"] == name}):
            points = [r for r in rows if r["name"] == name and r["server_id"] == server]
            ax.plot([_utc(r["minute"]) for r in points], [r["value"] for r in points], label=server)
        ax.set_title(name, fontsize="small")
        ax.tick_params(labelsize="x-small")
    for ax in axes[len(names):]:
        ax.set_axis_off()
    fig.autofmt_xdate()
    fig.tight_layout()


def _png(draw: Any, data: Any, path: Path, size: tuple[float, float]) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=size, dpi=100)
    draw(fig, data)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    content = buffer.getvalue()
    path.write_bytes(content)
    return content


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    if isinstance(value, (list, tuple)):
        return html.escape("; ".join(str(v) for v in value))
    return html.escape("" if value is None else str(value))


def _table(rows: Sequence[dict[str, Any]], columns: Sequence[str]) -> str:
    if not rows:
        return "<p><em>none</em></p>"
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{_cell(r.get(c))}</td>" for c in columns) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _pairs(mapping: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"name": k, "value": v} for k, v in mapping.items()]


_CSS = """
body{font-family:sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0 1.5em}
th,td{border:1px solid #ccc;padding:2px 8px;font-size:13px;text-align:left}th{background:#f0f0f0}
td{font-variant-numeric:tabular-nums}img{max-width:100%;border:1px solid #ddd;margin-bottom:1em}
.block{color:#b00;font-weight:bold}
"""


def render_report(out_dir: Path, report: dict[str, Any], tables: ReportTables) -> Path:
    """Write the PNGs and ``report.html`` into ``out_dir``; return the HTML path."""
    sources = {
        "plot_traffic.png": (_plot_traffic, tables.timeseries, (10, 4)),
        "plot_duologues.png": (_plot_duologues, tables.timeseries, (10, 4)),
        "plot_top_clients.png": (_plot_top_clients, tables.top_clients, (10, 6)),
        "plot_rtt.png": (_plot_rtt, tables.rtt_top, (10, 6)),
        "plot_driver.png": (_plot_driver, tables.counters, (10, 7)),
    }
    images = []
    for name, title in PLOTS.items():
        draw, data, size = sources[name]
        content = _png(draw, data, out_dir / name, size)
        encoded = base64.b64encode(content).decode("ascii")
        images.append(f"<h3>{html.escape(title)}</h3><img alt='{name}' src='data:image/png;base64,{encoded}'>")

    time_range = report.get("time_range", {})
    summary = {
        "events directory": report.get("events_dir"),
        "Spark master": report.get("spark_master"),
        "input files": report["input"]["files"],
        "input bytes": report["input"]["bytes"],
        "first event (UTC)": time_range.get("first"),
        "last event (UTC)": time_range.get("last"),
        **{f"lines: {k}": v for k, v in report["lines"].items()},
        "client addresses": report["clients"]["addresses"],
        f"source keys (IPv6 per /{report['clients']['ipv6_prefix']})": report["clients"]["keys"],
        "keys flagged (verdict block)": report["clients"]["flagged"],
        "blocklist": report["blocklist"]["path"],
        "blocklist entries / added / extended / expired dropped": "{entries} / {added} / {extended} / {expired_dropped}".format(
            **report["blocklist"]
        ),
    }
    client_columns = ["key", "addresses", "hellos", "connects", "rejects", "bad_messages",
                      "wrong_ip_connects", "duologues_expired", "blocklist_hits", "verdict", "rules_fired"]
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>Echo 2.0 telemetry report</title>",
        f"<style>{_CSS}</style></head><body>",
        f"<h1>Echo 2.0 telemetry report</h1><p>generated {html.escape(str(report.get('generated_at')))}</p>",
        "<h2>Summary</h2>", _table(_pairs(summary), ["name", "value"]),
        "<h2>Events by kind</h2>", _table(_pairs(report["events_by_kind"]), ["name", "value"]),
        "<h2>Verdicts (blocked source keys)</h2>",
        _table(tables.verdicts, ["key", "family", "addresses", "hellos", "rejects", "bad_messages",
                                 "wrong_ip_connects", "evidence"]),
        "<h2>Rules</h2>", _table(_pairs(report["rules"]), ["name", "value"]),
        "<h2>Plots</h2>", *images,
        "<h2>Top source keys by HELLOs</h2>", _table(tables.top_clients, client_columns),
        "<h2>Round-trip time, slowest clients (µs)</h2>",
        _table(tables.rtt_top, ["client_ip", "samples", "min_us", "p50_us", "p90_us", "p99_us", "max_us"]),
        "<h2>Driver</h2>", _table(_pairs(report["driver"] | {f"rtt {k}": v for k, v in report["rtt"].items()}),
                                  ["name", "value"]),
        "</body></html>",
    ]
    path = out_dir / "report.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path
