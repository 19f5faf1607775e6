"""The analytics job: telemetry directory in, tables, verdicts, blocklist and report out.

Outputs under ``out_dir`` (Parquet directories are single-file, overwritten):

==========================  =========================================================
``per_ip/``                 one row per client key (IPv4 address or IPv6 prefix):
                            counts per event kind and reason, bytes, first/last seen,
                            ``rules_fired``, ``evidence``, ``verdict``
``verdicts/``               the ``per_ip`` rows whose verdict is ``block``
``timeseries/``             one row per minute: hellos, rejections by reason,
                            duologues created/closed/active, bad messages, …
``driver_counters/``        per server, minute and counter: the last (max) value
``driver_loss/``            every loss-report record of ``driver_snapshot`` events
``driver_errors/``          every distinct-error record of ``driver_snapshot`` events
``rtt/``                    per client address: samples, min/mean/p50/p90/p99/max µs
``blocklist.txt``           (default place) the merged blocklist, see ``update_blocklist``
``report.json``             counts (lines, malformed, by kind), time range, verdicts,
                            blocklist changes, outputs, elapsed time
``report.html``, ``*.png``  see :mod:`aeron_py.analytics.report`
==========================  =========================================================

The JSON is parsed once (explicit schema, only the columns the job uses), into a
narrow frame persisted ``MEMORY_AND_DISK`` (Spark's compressed in-memory columns; what
does not fit in storage memory goes to local disk, so memory does not grow with the
input); the pass that fills it also counts the lines. Then one cheap aggregation counts
the events per address, minute and kind (:func:`.tables.event_counts`), from which the
per-address, per-key and per-minute tables are built; the driver snapshot rows are
picked out once; per-client RTT percentiles are one more pass (Spark's
``percentile_approx``, hashed per client, not sorted), overall ones a logarithmic
histogram (:func:`.tables.rtt_histogram`, within 1 % of the exact value: the report's
``rtt.overall_percentile_error``). Measured on 10 M events: see
``benchmarks/results/analytics.json``. Everything is DataFrame expressions (no Python
UDFs, see :mod:`.tables`); every table is written by Spark, and the driver only ever
holds bounded pages of them: at most :data:`TOP_N` top clients and slowest RTT clients,
``JobConfig.max_verdicts`` verdicts (the report says ``verdicts_truncated`` when there
are more: the blocklist then gets the ones with the most HELLOs), at most
:data:`MAX_REPORT_MINUTES` minutes and :data:`MAX_COUNTER_ROWS` counter values for the
plots (``*_truncated`` flags again), and the RTT histogram (bounded by its buckets).
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F

from aeron_py.analytics.report import ReportTables, plotted_counters, render_report
from aeron_py.analytics.rules import AbuseRules
from aeron_py.analytics.schema import STATUS_OK, STATUSES, analysed, load_events
from aeron_py.analytics.tables import (
    MAX_FILLED_MINUTES,
    RTT_BUCKET_RATIO,
    build_driver_counters,
    build_driver_records,
    build_per_ip,
    build_rtt,
    build_timeseries,
    event_counts,
    histogram_percentiles,
    object_aggregate_keys,
    per_address_from_counts,
    per_key_summary,
    rtt_histogram,
    rtt_percentiles,
    rtt_table,
    timeseries_from_counts,
)
from aeron_py.blocklist import Blocklist, Entry, parse_network

__all__ = [
    "InputError", "JobConfig", "build_per_ip", "build_rtt", "build_timeseries", "check_events_dir", "run_job",
    "update_blocklist",
]

log = logging.getLogger(__name__)

TOP_N = 25
#: Default ``JobConfig.max_verdicts``: verdicts listed in the report and merged into the
#: blocklist (all of them are in ``verdicts/``).
MAX_VERDICTS = 10_000
#: Minutes of the time series the report plots (a filled series is at most a month).
MAX_REPORT_MINUTES = MAX_FILLED_MINUTES
#: Distinct counter names looked at to choose the plotted ones, and counter values plotted.
MAX_COUNTER_NAMES = 10_000
MAX_COUNTER_ROWS = 200_000


class InputError(ValueError):
    """The events directory is missing, not a directory, or holds no events."""


@dataclass(frozen=True)
class JobConfig:
    """What the job reads, writes and how it judges."""

    events_dir: Path
    out_dir: Path
    rules: AbuseRules = field(default_factory=AbuseRules)
    blocklist_path: Path | None = None  # None: out_dir / "blocklist.txt"
    blocklist_ttl: float = 3600.0  # seconds; 0 = entries never expire
    ipv6_prefix: int = 64
    now: float | None = None  # wall clock for blocklist expiry; None = time.time()
    max_verdicts: int = MAX_VERDICTS  # verdicts listed and merged into the blocklist

    @property
    def blocklist(self) -> Path:
        """Where the blocklist is read from and written to."""
        return self.blocklist_path or self.out_dir / "blocklist.txt"


def check_events_dir(path: Path) -> list[Path]:
    """The non-empty ``*.jsonl`` files of ``path``; :class:`InputError` if there are none."""
    if not path.exists():
        raise InputError(f"events directory does not exist: {path}")
    if not path.is_dir():
        raise InputError(f"events path is not a directory: {path}")
    files = sorted(p for p in path.glob("*.jsonl") if p.is_file() and p.stat().st_size > 0)
    if not files:
        raise InputError(f"no events: {path} holds no non-empty *.jsonl files")
    return files


# -- blocklist ------------------------------------------------------------------------

def _iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def update_blocklist(path: Path, flagged: list[dict[str, Any]], now: float, ttl: float) -> dict[str, Any]:
    """Merge flagged keys into the blocklist at ``path`` (atomically rewritten).

    Entries expired at ``now`` are dropped; a flagged key already listed keeps the
    later expiry; new keys expire at ``now + ttl`` (never if ``ttl`` is 0).
    """
    existing = Blocklist.load(path) if path.exists() else Blocklist()
    merged: dict[Any, Entry] = {}
    for entry in existing:
        if entry.active(now):
            kept = merged.get(entry.network)
            if kept is None or _later(entry, kept):
                merged[entry.network] = entry
    stats: dict[str, Any] = {
        "path": str(path),
        "expired_dropped": len(existing) - sum(1 for e in existing if e.active(now)),
        "added": 0,
        "extended": 0,
        "skipped": [],
    }
    expires = None if ttl == 0 else now + ttl
    for row in flagged:
        try:
            network = parse_network(row["key"])
        except ValueError as exc:
            stats["skipped"].append(f"{row['key']}: {exc}")
            continue
        reason = f"analytics {_iso(now)}: " + "; ".join(row["evidence"])
        entry = Entry(network, expires, reason)
        old = merged.get(network)
        if old is None:
            stats["added"] += 1
        elif _later(entry, old):
            stats["extended"] += 1
        else:
            continue
        merged[network] = entry
    Blocklist.write(path, merged.values())
    stats["entries"] = len(merged)
    return stats


def _later(a: Entry, b: Entry) -> bool:
    """True if ``a`` stays in force longer than ``b``."""
    if b.expires is None:
        return False
    return a.expires is None or a.expires > b.expires


# -- the job --------------------------------------------------------------------------

@contextmanager
def _step(name: str) -> Iterator[None]:
    """Log how long one step of the job took."""
    started = time.monotonic()
    yield
    log.info("%s: %.1f s", name, time.monotonic() - started)


def _write(frame: DataFrame, path: Path) -> None:
    frame.coalesce(1).write.mode("overwrite").parquet(path.resolve().as_uri())


def stage_events(spark: SparkSession, events_dir: Path) -> DataFrame:
    """The analysed events, parsed from JSON once on first use and then kept
    (``MEMORY_AND_DISK``: bounded memory, the rest on local disk); unpersist when done."""
    return analysed(load_events(spark, events_dir)).persist(StorageLevel.MEMORY_AND_DISK)


def _one_row(aggregate: DataFrame) -> Row:
    """The single row of a global aggregation (``agg`` without ``groupBy`` always has one)."""
    row = aggregate.first()
    if row is None:
        raise RuntimeError("a global aggregation returned no row")
    return row


def _rows(frame: DataFrame, limit: int) -> list[dict[str, Any]]:
    """At most ``limit`` rows of ``frame`` as dicts (the only way rows reach the driver)."""
    return [row.asDict(recursive=True) for row in frame.limit(limit).collect()]


def _page(frame: DataFrame, limit: int) -> tuple[list[dict[str, Any]], bool]:
    """At most ``limit`` rows and whether ``frame`` has more."""
    rows = _rows(frame, limit + 1)
    return rows[:limit], len(rows) > limit


def _line_counts(raw: DataFrame) -> dict[str, Any]:
    """Lines by status, ok events by kind, first and last event time (one pass).

    Only ``ok`` rows are grouped by kind (known kinds: a bounded result whatever the input).
    """
    kind = F.when(F.col("status") == STATUS_OK, F.col("kind"))
    rows = (
        raw.groupBy("status", kind.alias("kind"))
        .agg(F.count("*").alias("n"), F.min("ts").alias("first"), F.max("ts").alias("last"))
        .collect()
    )
    statuses = dict.fromkeys(STATUSES, 0)
    kinds: dict[str, int] = {}
    ok = [r for r in rows if r["status"] == STATUS_OK]
    for row in rows:
        statuses[row["status"]] += row["n"]
    for row in ok:
        kinds[row["kind"]] = kinds.get(row["kind"], 0) + row["n"]
    return {
        "lines": {"total": sum(statuses.values()), **statuses},
        "malformed_lines": statuses["malformed"],
        "events_by_kind": dict(sorted(kinds.items())),
        "first_ts": min((r["first"] for r in ok), default=None),
        "last_ts": max((r["last"] for r in ok), default=None),
    }


_VERDICT_FIELDS = ("key", "family", "addresses", "hellos", "rejects", "bad_messages", "wrong_ip_connects",
                   "hellos_without_connect", "rules_fired", "evidence")


def _per_ip_outputs(per_address: DataFrame, config: JobConfig, tables: ReportTables) -> dict[str, Any]:
    """Write ``per_ip/`` and ``verdicts/``; fill the tables; return the clients facts."""
    per_ip = per_key_summary(per_address, config.ipv6_prefix, config.rules).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        _write(per_ip, config.out_dir / "per_ip")
        verdicts = per_ip.filter(F.col("verdict") == "block").orderBy(F.desc("hellos"), "key")
        _write(verdicts, config.out_dir / "verdicts")
        tables.verdicts, truncated = _page(verdicts, config.max_verdicts)
        tables.top_clients = _rows(per_ip.orderBy(F.desc("hellos"), "key"), TOP_N)
        totals = _one_row(per_ip.agg(
            F.count("*").alias("keys"), F.sum("addresses").alias("addresses"),
            F.count_if(F.col("verdict") == "block").alias("flagged"),
        ))
    finally:
        per_ip.unpersist()
    if truncated:
        log.warning("%d client keys flagged; only the %d with the most HELLOs are listed and blocked "
                    "(all are in %s)", totals["flagged"], len(tables.verdicts), config.out_dir / "verdicts")
    return {
        "addresses": int(totals["addresses"] or 0),
        "keys": int(totals["keys"]),
        "flagged": int(totals["flagged"]),
        "verdicts_listed": len(tables.verdicts),
        "verdicts_truncated": truncated,
        "ipv6_prefix": config.ipv6_prefix,
    }


def _timeseries_outputs(counts: DataFrame, out: Path, tables: ReportTables) -> dict[str, Any]:
    """Write ``timeseries/`` (from :func:`.tables.event_counts` rows); keep the page the
    report plots; return its facts."""
    series = timeseries_from_counts(counts).persist(StorageLevel.MEMORY_AND_DISK)  # one row a minute
    try:
        _write(series.withColumn("minute_utc", F.timestamp_seconds("minute")).orderBy("minute"), out / "timeseries")
        tables.timeseries, truncated = _page(series.orderBy("minute"), MAX_REPORT_MINUTES)
        minutes = series.count() if truncated else len(tables.timeseries)
    finally:
        series.unpersist()
    return {"minutes": minutes, **({"plotted_minutes": len(tables.timeseries)} if truncated else {})}


def _driver_outputs(events: DataFrame, out: Path, tables: ReportTables) -> dict[str, Any]:
    """Write ``driver_counters/``, ``driver_loss/``, ``driver_errors/``; return totals.

    The few ``driver_snapshot`` rows are picked out of the events once and kept: the
    five tables and totals below then never scan all events again."""
    snapshots = events.filter(F.col("kind") == "driver_snapshot").select(
        "kind", "ts", "server_id", "counters", "new_loss", "new_errors"
    ).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        counters = build_driver_counters(snapshots).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            _write(counters.orderBy("server_id", "name", "minute"), out / "driver_counters")
            names = [r["name"] for r in counters.select("name").distinct().limit(MAX_COUNTER_NAMES).collect()]
            tables.counters, truncated = _page(
                counters.filter(F.col("name").isin(plotted_counters(names))).orderBy("server_id", "name", "minute"),
                MAX_COUNTER_ROWS,
            )
        finally:
            counters.unpersist()
        loss, errors = build_driver_records(snapshots, "new_loss"), build_driver_records(snapshots, "new_errors")
        _write(loss, out / "driver_loss")
        _write(errors, out / "driver_errors")
        loss_totals = _one_row(loss.agg(F.count("*").alias("n"), F.sum("total_bytes_lost").alias("bytes")))
        error_totals = _one_row(errors.agg(F.count("*").alias("n"), F.countDistinct("message").alias("distinct")))
    finally:
        snapshots.unpersist()
    return {
        "loss_records": int(loss_totals["n"]),
        "bytes_lost": int(loss_totals["bytes"] or 0),
        "error_records": int(error_totals["n"]),
        "distinct_errors": int(error_totals["distinct"]),
        **({"counter_rows_truncated": True} if truncated else {}),
    }


def _rtt_outputs(events: DataFrame, per_address: DataFrame, out: Path, tables: ReportTables) -> dict[str, Any]:
    """Write ``rtt/``; return the client count and the percentiles over all samples.

    Per client, ``percentile_approx`` (see :func:`.tables.build_rtt`); over all samples,
    the logarithmic histogram of :func:`.tables.rtt_histogram`: each overall percentile
    is within 1 % (relative) of the exact nearest-rank value, exact when the samples of
    its bucket are all equal (``rtt.overall_percentile_error`` in the report)."""
    rtt = rtt_table(per_address, rtt_percentiles(events)).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        _write(rtt, out / "rtt")
        slowest = rtt.filter(F.col("samples") >= 10).orderBy(F.desc("p99_us"), "client_ip")
        tables.rtt_top = _rows(slowest, TOP_N)
        clients = rtt.count()
    finally:
        rtt.unpersist()
    # Bounded: one row per non-empty bucket (see rtt_histogram).
    buckets = [(int(r["n"]), float(r["lo"]), float(r["hi"])) for r in rtt_histogram(events).collect()]
    quantiles = histogram_percentiles(buckets)
    return {"clients": clients, "samples": sum(b[0] for b in buckets), "p50_us": quantiles[0],
            "p90_us": quantiles[1], "p99_us": quantiles[2],
            "overall_percentile_error": f"<= {math.sqrt(RTT_BUCKET_RATIO) - 1:.3%} relative (log buckets)"}


def run_job(spark: SparkSession, config: JobConfig) -> dict[str, Any]:
    """Run the whole analysis; write every output; return the ``report.json`` content.

    Raises :class:`InputError` for a missing/empty events directory and
    ``BlocklistError`` for an unreadable existing blocklist (both checked before any
    Spark work starts).
    """
    started = time.monotonic()
    now = config.now if config.now is not None else time.time()
    files = check_events_dir(config.events_dir)
    if config.blocklist.exists():
        Blocklist.load(config.blocklist)  # fail early on a broken file
    if config.max_verdicts < 1:
        raise ValueError(f"max_verdicts must be at least 1, got {config.max_verdicts}")
    out = config.out_dir
    out.mkdir(parents=True, exist_ok=True)
    tables = ReportTables()
    report: dict[str, Any] = {
        "schema_version": 1,
        "generated_at": _iso(now),
        "events_dir": str(config.events_dir),
        "spark_master": spark.sparkContext.master,
        "input": {"files": len(files), "bytes": sum(p.stat().st_size for p in files)},
    }
    raw = stage_events(spark, config.events_dir)
    try:
        with _step("parse JSON (kept in memory/disk) and count lines"):
            counts = _line_counts(raw)
        log.info("lines by status: %s", counts["lines"])
        first_ts, last_ts = counts.pop("first_ts"), counts.pop("last_ts")
        report.update(counts)
        events = raw.filter(F.col("status") == STATUS_OK).drop("status")
        # Two aggregation levels: events counted per address, minute and kind (one pass),
        # then per address and per minute from those rows (see tables.event_counts).
        grouped = event_counts(events, first_ts).persist(StorageLevel.MEMORY_AND_DISK)
        per_address = per_address_from_counts(grouped).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            with object_aggregate_keys(spark):
                with _step("per-IP summary and verdicts"):
                    report["clients"] = _per_ip_outputs(per_address, config, tables)
                with _step("time series"):
                    series = _timeseries_outputs(grouped, out, tables)
                with _step("driver counters, loss and errors"):
                    report["driver"] = {"snapshots": counts["events_by_kind"].get("driver_snapshot", 0),
                                        **_driver_outputs(events, out, tables)}
                with _step("RTT percentiles"):
                    report["rtt"] = _rtt_outputs(events, per_address, out, tables)
        finally:
            per_address.unpersist()
            grouped.unpersist()
    finally:
        raw.unpersist()

    report["time_range"] = {
        "first_ts": first_ts, "last_ts": last_ts,
        "first": _iso(first_ts) if first_ts is not None else None,
        "last": _iso(last_ts) if last_ts is not None else None,
        **series,
    }
    report["rules"] = config.rules.to_dict()
    report["verdicts"] = [{k: row[k] for k in _VERDICT_FIELDS} for row in tables.verdicts]
    report["blocklist"] = update_blocklist(config.blocklist, tables.verdicts, now, config.blocklist_ttl)
    report["outputs"] = {name: f"{name}/" for name in _PARQUET_OUTPUTS} | {"report_html": "report.html"}
    with _step("plots and HTML"):
        render_report(out, report, tables)
    report["elapsed_s"] = round(time.monotonic() - started, 3)
    _write_json(out / "report.json", report)
    log.info(
        "%d events, %d malformed lines, %d keys, %d flagged; report in %s",
        report["lines"][STATUS_OK], report["malformed_lines"], report["clients"]["keys"],
        report["clients"]["flagged"], out,
    )
    return report


_PARQUET_OUTPUTS = ("per_ip", "verdicts", "timeseries", "driver_counters", "driver_loss", "driver_errors", "rtt")


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
    tmp.replace(path)
