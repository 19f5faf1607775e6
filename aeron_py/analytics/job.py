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

The JSON is parsed once, into a narrow Parquet copy (``out_dir/tmp-staging``, removed at
the end) that every step then scans column by column: memory does not grow with the
input. Everything is DataFrame expressions (no Python UDFs); only small results (one
row per minute, flagged keys, top lists) are collected to the driver.
"""

from __future__ import annotations

import json
import logging
import shutil
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StructField, StructType

from aeron_py.analytics.report import ReportTables, render_report
from aeron_py.analytics.rules import AbuseRules, apply_rules, with_client_key
from aeron_py.analytics.schema import STATUS_OK, STATUSES, analysed, load_events
from aeron_py.blocklist import Blocklist, Entry, parse_network
from aeron_py.telemetry.events import REJECT_REASONS

__all__ = ["InputError", "JobConfig", "check_events_dir", "run_job", "update_blocklist"]

log = logging.getLogger(__name__)

#: Minutes beyond which the time series is not gap-filled (a stray timestamp must
#: not blow up the table).
MAX_FILLED_MINUTES = 60 * 24 * 31
TOP_N = 25
STAGING_DIR = "tmp-staging"  # under out_dir, removed when the job ends (no leading dot: Spark hides those)


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


# -- per-key summary ------------------------------------------------------------------

def _is(kind: str) -> Column:
    return F.col("kind") == kind


def _count_columns() -> list[tuple[str, Column]]:
    """(column name, condition) of every per-key / per-minute event count."""
    reject, closed = _is("reject"), _is("duologue_closed")
    connected = _is("client_connected")
    return [
        ("hellos", _is("hello")),
        ("hellos_bad_key", _is("hello") & ~F.col("key_valid")),
        ("rejects", reject),
        *[(f"rejects_{reason}", reject & (F.col("reason") == reason)) for reason in REJECT_REASONS],
        ("duologues_created", _is("duologue_created")),
        ("connects", connected & ~F.col("wrong_ip")),
        ("wrong_ip_connects", connected & F.col("wrong_ip")),
        ("bad_messages", _is("bad_message")),
        ("duologues_closed", closed),
        ("duologues_expired", closed & (F.col("reason") == "expired")),
        ("blocklist_hits", _is("blocklist_hit")),
        ("rtt_samples", _is("rtt_sample")),
    ]


_SUM_COLUMNS = ("msgs_in", "msgs_out", "bytes_in", "bytes_out")


def build_per_ip(events: DataFrame, ipv6_prefix: int, rules: AbuseRules) -> DataFrame:
    """One row per client key with counts, derived rates and the verdict."""
    counts = _count_columns()
    per_address = (
        events.filter(~_is("driver_snapshot"))
        .groupBy("address")
        .agg(
            *[F.count_if(cond).alias(name) for name, cond in counts],
            *[F.sum(F.when(_is("duologue_closed"), F.col(c))).alias(c) for c in _SUM_COLUMNS],
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
        )
    )
    summed = [name for name, _ in counts] + list(_SUM_COLUMNS)
    per_key = (
        with_client_key(per_address, "address", ipv6_prefix)
        .groupBy("key", "family")
        .agg(
            F.count("address").alias("addresses"),
            *[F.coalesce(F.sum(c), F.lit(0)).cast("long").alias(c) for c in summed],
            F.min("first_ts").alias("first_ts"),
            F.max("last_ts").alias("last_ts"),
        )
        .withColumn("hellos_without_connect", F.greatest(F.col("hellos") - F.col("connects"), F.lit(0)))
        .withColumn(
            "reject_rate",
            F.when(F.col("hellos") > 0, F.col("rejects") / F.col("hellos")).otherwise(F.lit(None).cast("double")),
        )
    )
    return apply_rules(per_key, rules)


# -- time series ------------------------------------------------------------------------

def _minute(ts: Column) -> Column:
    return (F.floor(ts / 60) * 60).cast("long")


def build_timeseries(events: DataFrame, first_ts: float) -> list[dict[str, Any]]:
    """Per-minute counts plus ``active_duologues`` (open at the end of the minute).

    Duologues closed in the log but created before its first event (``ts -
    lifetime_s < first_ts``) count as open from the first minute on.
    """
    closed = _is("duologue_closed")
    rows = (
        events.filter(~_is("driver_snapshot"))
        .groupBy(_minute(F.col("ts")).alias("minute"))
        .agg(
            *[F.count_if(cond).alias(name) for name, cond in _count_columns()],
            F.count_if(closed & (F.col("ts") - F.col("lifetime_s") < F.lit(first_ts))).alias("open_before"),
        )
        .orderBy("minute")
        .collect()
    )
    if not rows:
        return []
    names = [name for name, _ in _count_columns()]
    by_minute = {row["minute"]: row.asDict() for row in rows}
    first, last = rows[0]["minute"], rows[-1]["minute"]
    if (last - first) // 60 <= MAX_FILLED_MINUTES:
        minutes: Sequence[int] = range(first, last + 60, 60)
    else:
        log.warning("time series spans %d minutes; gaps are not filled", (last - first) // 60)
        minutes = sorted(by_minute)
    active = sum(row["open_before"] for row in rows)
    series = []
    for minute in minutes:
        row = by_minute.get(minute) or dict.fromkeys(names, 0)
        active += row["duologues_created"] - row["duologues_closed"]
        series.append({"minute": minute, **{n: row[n] for n in names}, "active_duologues": active})
    return series


def _timeseries_frame(spark: SparkSession, series: list[dict[str, Any]]) -> DataFrame:
    names = ["minute"] + [name for name, _ in _count_columns()] + ["active_duologues"]
    schema = StructType([StructField(n, LongType()) for n in names])
    frame = spark.createDataFrame([tuple(row[n] for n in names) for row in series], schema)
    return frame.withColumn("minute_utc", F.timestamp_seconds("minute"))


# -- driver, RTT ----------------------------------------------------------------------

def build_driver_counters(events: DataFrame) -> DataFrame:
    """Per server, minute and counter name: the largest (latest cumulative) value."""
    return (
        events.filter(_is("driver_snapshot"))
        .select("server_id", _minute(F.col("ts")).alias("minute"), F.explode("counters").alias("name", "value"))
        .groupBy("server_id", "minute", "name")
        .agg(F.max("value").alias("value"))
    )


def _exploded(events: DataFrame, column: str) -> DataFrame:
    return (
        events.filter(_is("driver_snapshot"))
        .select("ts", "server_id", F.explode(column).alias("record"))
        .select("ts", "server_id", "record.*")
    )


def build_rtt(events: DataFrame) -> DataFrame:
    """Per client address: RTT sample count, min, mean, p50, p90, p99, max (µs).

    Percentiles are exact (nearest rank: the ``ceil(p * n)``-th smallest sample) from
    each client's sorted samples; measured faster than ``percentile_approx`` here, and
    the result does not depend on partitioning.
    """
    def rank(p: float) -> Column:
        return F.element_at("samples_sorted", F.greatest(F.lit(1), F.ceil(F.col("samples") * p).cast("int")))

    return (
        events.filter(_is("rtt_sample"))
        .groupBy(F.col("address").alias("client_ip"))
        .agg(
            F.count("*").alias("samples"),
            F.min("rtt_us").alias("min_us"),
            F.avg("rtt_us").alias("mean_us"),
            F.max("rtt_us").alias("max_us"),
            F.sort_array(F.collect_list("rtt_us")).alias("samples_sorted"),
        )
        .select(
            "client_ip", "samples", "min_us", "mean_us",
            rank(0.5).alias("p50_us"), rank(0.9).alias("p90_us"), rank(0.99).alias("p99_us"), "max_us",
        )
    )


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


def stage_events(spark: SparkSession, events_dir: Path, staging: Path) -> DataFrame:
    """Parse the JSON once into a narrow Parquet copy and return a frame reading it.

    Every later step scans only the Parquet columns it needs; unlike caching the
    parsed rows, this needs no memory proportional to the input.
    """
    uri = staging.resolve().as_uri()
    analysed(load_events(spark, events_dir)).write.mode("overwrite").parquet(uri)
    return spark.read.parquet(uri)


def _one_row(aggregate: DataFrame) -> Row:
    """The single row of a global aggregation (``agg`` without ``groupBy`` always has one)."""
    row = aggregate.first()
    if row is None:
        raise RuntimeError("a global aggregation returned no row")
    return row


def _rows(frame: DataFrame) -> list[dict[str, Any]]:
    return [row.asDict(recursive=True) for row in frame.collect()]


def _line_counts(raw: DataFrame) -> dict[str, Any]:
    """Lines by status, ok events by kind, first and last event time (one pass)."""
    rows = (
        raw.groupBy("status", "kind")
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


def _per_ip_outputs(events: DataFrame, config: JobConfig, tables: ReportTables) -> dict[str, Any]:
    """Write ``per_ip/`` and ``verdicts/``; fill the tables; return the clients facts."""
    per_ip = build_per_ip(events, config.ipv6_prefix, config.rules).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        _write(per_ip, config.out_dir / "per_ip")
        verdicts = per_ip.filter(F.col("verdict") == "block").orderBy(F.desc("hellos"), "key")
        tables.verdicts = _rows(verdicts)
        _write(verdicts, config.out_dir / "verdicts")
        tables.top_clients = _rows(per_ip.orderBy(F.desc("hellos"), "key").limit(TOP_N))
        totals = _one_row(per_ip.agg(F.count("*").alias("keys"), F.sum("addresses").alias("addresses")))
    finally:
        per_ip.unpersist()
    return {
        "addresses": int(totals["addresses"] or 0),
        "keys": int(totals["keys"]),
        "flagged": len(tables.verdicts),
        "ipv6_prefix": config.ipv6_prefix,
    }


def _driver_outputs(spark: SparkSession, events: DataFrame, out: Path, tables: ReportTables) -> dict[str, int]:
    """Write ``driver_counters/``, ``driver_loss/``, ``driver_errors/``; return totals."""
    counters = build_driver_counters(events).orderBy("server_id", "name", "minute")
    tables.counters = _rows(counters)  # small: one row per server, counter and minute
    _write(spark.createDataFrame(tables.counters, counters.schema) if tables.counters else counters,
           out / "driver_counters")
    loss, errors = _exploded(events, "new_loss"), _exploded(events, "new_errors")
    _write(loss, out / "driver_loss")
    _write(errors, out / "driver_errors")
    loss_totals = _one_row(loss.agg(F.count("*").alias("n"), F.sum("total_bytes_lost").alias("bytes")))
    error_totals = _one_row(errors.agg(F.count("*").alias("n"), F.countDistinct("message").alias("distinct")))
    return {
        "loss_records": int(loss_totals["n"]),
        "bytes_lost": int(loss_totals["bytes"] or 0),
        "error_records": int(error_totals["n"]),
        "distinct_errors": int(error_totals["distinct"]),
    }


def _rtt_outputs(events: DataFrame, out: Path, tables: ReportTables) -> dict[str, Any]:
    """Write ``rtt/``; return the client count and the percentiles over all samples."""
    rtt = build_rtt(events).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        _write(rtt, out / "rtt")
        slowest = rtt.filter(F.col("samples") >= 10).orderBy(F.desc("p99_us"), "client_ip").limit(TOP_N)
        tables.rtt_top = _rows(slowest)
        clients = rtt.count()
    finally:
        rtt.unpersist()
    overall = _one_row(
        events.filter(_is("rtt_sample"))
        .agg(F.count("*").alias("n"), F.percentile_approx("rtt_us", [0.5, 0.9, 0.99], 10_000).alias("q"))
    )
    quantiles = overall["q"] or [None, None, None]
    return {"clients": clients, "samples": int(overall["n"]), "p50_us": quantiles[0],
            "p90_us": quantiles[1], "p99_us": quantiles[2]}


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
    staging = out / STAGING_DIR
    try:
        with _step("parse JSON into a Parquet staging copy"):
            raw = stage_events(spark, config.events_dir, staging)
        with _step("count lines"):
            counts = _line_counts(raw)
        log.info("lines by status: %s", counts["lines"])
        first_ts, last_ts = counts.pop("first_ts"), counts.pop("last_ts")
        report.update(counts)
        events = raw.filter(F.col("status") == STATUS_OK).drop("status")
        with _step("per-IP summary and verdicts"):
            report["clients"] = _per_ip_outputs(events, config, tables)
        with _step("time series"):
            tables.timeseries = build_timeseries(events, first_ts) if first_ts is not None else []
            _write(_timeseries_frame(spark, tables.timeseries), out / "timeseries")
        with _step("driver counters, loss and errors"):
            report["driver"] = {"snapshots": counts["events_by_kind"].get("driver_snapshot", 0),
                                **_driver_outputs(spark, events, out, tables)}
        with _step("RTT percentiles"):
            report["rtt"] = _rtt_outputs(events, out, tables)
    finally:
        shutil.rmtree(staging, ignore_errors=True)

    report["time_range"] = {
        "first_ts": first_ts, "last_ts": last_ts,
        "first": _iso(first_ts) if first_ts is not None else None,
        "last": _iso(last_ts) if last_ts is not None else None,
        "minutes": len(tables.timeseries),
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
