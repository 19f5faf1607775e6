"""The job's output steps: each writes its Parquet tables from the summary and returns
its facts for ``report.json``; the driver only ever holds bounded pages of rows.

At most :data:`TOP_N` top clients and slowest RTT clients, ``max_verdicts`` verdicts
(``verdicts_truncated`` says when there are more: the blocklist then gets the ones with
the most HELLOs), at most :data:`MAX_REPORT_MINUTES` minutes and
:data:`MAX_COUNTER_ROWS` counter values for the plots (``*_truncated`` flags again), and
the RTT histogram (bounded by its buckets) reach the driver.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from aeron_py.analytics.report import ReportTables, plotted_counters
from aeron_py.analytics.rtt import RTT_PERCENTILE_ERROR, client_rtt_table, histogram_percentiles, overall_histogram
from aeron_py.analytics.rules import AbuseRules
from aeron_py.analytics.summary import driver_snapshots, rtt_part
from aeron_py.analytics.tables import (
    MAX_FILLED_MINUTES,
    build_driver_counters,
    build_driver_records,
    per_key_summary,
    timeseries_from_summary,
)

__all__ = [
    "MAX_COUNTER_NAMES", "MAX_COUNTER_ROWS", "MAX_REPORT_MINUTES", "TOP_N", "driver_outputs", "per_ip_outputs",
    "rtt_outputs", "timeseries_outputs",
]

log = logging.getLogger(__name__)

TOP_N = 25
#: Minutes of the time series the report plots (a filled series is at most a month).
MAX_REPORT_MINUTES = MAX_FILLED_MINUTES
#: Distinct counter names looked at to choose the plotted ones, and counter values plotted.
MAX_COUNTER_NAMES = 10_000
MAX_COUNTER_ROWS = 200_000


def write_table(frame: DataFrame, path: Path) -> None:
    """``frame`` as one Parquet file in directory ``path`` (overwritten)."""
    frame.coalesce(1).write.mode("overwrite").parquet(path.resolve().as_uri())


def one_row(aggregate: DataFrame) -> Row:
    """The single row of a global aggregation (``agg`` without ``groupBy`` always has one)."""
    row = aggregate.first()
    if row is None:
        raise RuntimeError("a global aggregation returned no row")
    return row


def rows(frame: DataFrame, limit: int) -> list[dict[str, Any]]:
    """At most ``limit`` rows of ``frame`` as dicts (the only way rows reach the driver)."""
    return [row.asDict(recursive=True) for row in frame.limit(limit).collect()]


def page(frame: DataFrame, limit: int) -> tuple[list[dict[str, Any]], bool]:
    """At most ``limit`` rows and whether ``frame`` has more."""
    got = rows(frame, limit + 1)
    return got[:limit], len(got) > limit


def per_ip_outputs(per_address: DataFrame, out: Path, rules: AbuseRules, ipv6_prefix: int, max_verdicts: int,
                   tables: ReportTables) -> dict[str, Any]:
    """Write ``per_ip/`` and ``verdicts/``; fill the tables; return the clients facts."""
    per_ip = per_key_summary(per_address, ipv6_prefix, rules).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        write_table(per_ip, out / "per_ip")
        verdicts = per_ip.filter(F.col("verdict") == "block").orderBy(F.desc("hellos"), "key")
        write_table(verdicts, out / "verdicts")
        tables.verdicts, truncated = page(verdicts, max_verdicts)
        tables.top_clients = rows(per_ip.orderBy(F.desc("hellos"), "key"), TOP_N)
        totals = one_row(per_ip.agg(
            F.count("*").alias("keys"), F.sum("addresses").alias("addresses"),
            F.count_if(F.col("verdict") == "block").alias("flagged"),
        ))
    finally:
        per_ip.unpersist()
    if truncated:
        log.warning("%d source keys flagged; only the %d with the most HELLOs are listed and blocked "
                    "(all are in %s)", totals["flagged"], len(tables.verdicts), out / "verdicts")
    return {
        "addresses": int(totals["addresses"] or 0),
        "keys": int(totals["keys"]),
        "flagged": int(totals["flagged"]),
        "verdicts_listed": len(tables.verdicts),
        "verdicts_truncated": truncated,
        "ipv6_prefix": ipv6_prefix,
    }


def timeseries_outputs(summary: DataFrame, first_ts: float | None, out: Path, tables: ReportTables) -> dict[str, Any]:
    """Write ``timeseries/``; keep the page the report plots; return its facts."""
    series = timeseries_from_summary(summary, first_ts).persist(StorageLevel.MEMORY_AND_DISK)  # one row a minute
    try:
        write_table(series.withColumn("minute_utc", F.timestamp_seconds("minute")).orderBy("minute"),
                    out / "timeseries")
        tables.timeseries, truncated = page(series.orderBy("minute"), MAX_REPORT_MINUTES)
        minutes = series.count() if truncated else len(tables.timeseries)
    finally:
        series.unpersist()
    return {"minutes": minutes, **({"plotted_minutes": len(tables.timeseries)} if truncated else {})}


def driver_outputs(summary: DataFrame, out: Path, tables: ReportTables) -> dict[str, Any]:
    """Write ``driver_counters/``, ``driver_loss/``, ``driver_errors/``; return totals
    (from the summary's few ``driver`` rows)."""
    # Picked out of the summary once and kept: the tables and totals below never scan it again.
    snapshots = driver_snapshots(summary).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        counters = build_driver_counters(snapshots).persist(StorageLevel.MEMORY_AND_DISK)
        try:
            write_table(counters.orderBy("server_id", "name", "minute"), out / "driver_counters")
            names = [r["name"] for r in counters.select("name").distinct().limit(MAX_COUNTER_NAMES).collect()]
            tables.counters, truncated = page(
                counters.filter(F.col("name").isin(plotted_counters(names))).orderBy("server_id", "name", "minute"),
                MAX_COUNTER_ROWS,
            )
        finally:
            counters.unpersist()
        loss, errors = build_driver_records(snapshots, "new_loss"), build_driver_records(snapshots, "new_errors")
        write_table(loss, out / "driver_loss")
        write_table(errors, out / "driver_errors")
        loss_totals = one_row(loss.agg(F.count("*").alias("n"), F.sum("total_bytes_lost").alias("bytes")))
        error_totals = one_row(errors.agg(F.count("*").alias("n"), F.countDistinct("message").alias("distinct")))
    finally:
        snapshots.unpersist()
    return {
        "loss_records": int(loss_totals["n"]),
        "bytes_lost": int(loss_totals["bytes"] or 0),
        "error_records": int(error_totals["n"]),
        "distinct_errors": int(error_totals["distinct"]),
        **({"counter_rows_truncated": True} if truncated else {}),
    }


def rtt_outputs(summary: DataFrame, out: Path, tables: ReportTables) -> dict[str, Any]:
    """Write ``rtt/``; return the client count and the percentiles over all samples.

    Per client and overall, percentiles come from the logarithmic histograms of
    :mod:`.rtt`: each within :data:`.rtt.RTT_PERCENTILE_ERROR` of the exact nearest-rank
    value (``rtt.percentile_error`` in the report; ``overall_percentile_error`` too, as
    before)."""
    buckets = rtt_part(summary)
    rtt = client_rtt_table(buckets).persist(StorageLevel.MEMORY_AND_DISK)
    try:
        write_table(rtt, out / "rtt")
        slowest = rtt.filter(F.col("samples") >= 10).orderBy(F.desc("p99_us"), "client_ip")
        tables.rtt_top = rows(slowest, TOP_N)
        clients = rtt.count()
    finally:
        rtt.unpersist()
    # Bounded: one row per non-empty bucket.
    merged = [(int(r["n"]), float(r["lo"]), float(r["hi"])) for r in overall_histogram(buckets).collect()]
    quantiles = histogram_percentiles(merged)
    return {"clients": clients, "samples": sum(b[0] for b in merged), "p50_us": quantiles[0],
            "p90_us": quantiles[1], "p99_us": quantiles[2],
            "percentile_error": RTT_PERCENTILE_ERROR, "overall_percentile_error": RTT_PERCENTILE_ERROR}
