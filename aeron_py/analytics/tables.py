"""The job's tables as lazy DataFrames, built from the summary of :mod:`.summary`.

Everything is DataFrame expressions evaluated by Spark (no Python UDFs, nothing is
collected here): per client address (from the summary's ``event`` rows), per source key
(the source-key expression runs once per distinct address), per minute (gaps filled in
Spark), driver counters, loss and error records (from its ``driver`` rows). The RTT
tables are in :mod:`.rtt` (re-exported here). The ``build_*`` functions take analysed
events (:func:`.schema.analysed`) and summarise them first: the job instead summarises
once and calls the ``*_from_summary`` functions.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from aeron_py.analytics.rtt import (
    RTT_BUCKET_RATIO,
    RTT_QUANTILES,
    build_rtt,
    client_rtt_table,
    histogram_percentiles,
    rtt_histogram,
)
from aeron_py.analytics.rules import AbuseRules, apply_rules, with_source_key
from aeron_py.analytics.summary import SUM_COLUMNS, events_part, summarise
from aeron_py.telemetry.events import REJECT_REASONS

__all__ = [
    "MAX_FILLED_MINUTES",
    "RTT_BUCKET_RATIO",
    "RTT_QUANTILES",
    "build_driver_counters",
    "build_driver_records",
    "build_per_address",
    "build_per_ip",
    "build_rtt",
    "build_timeseries",
    "client_rtt_table",
    "count_names",
    "histogram_percentiles",
    "per_address_from_summary",
    "per_key_summary",
    "rtt_histogram",
    "timeseries_from_summary",
]

#: Minutes beyond which the time series is not gap-filled (a stray timestamp must
#: not blow up the table).
MAX_FILLED_MINUTES = 60 * 24 * 31


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


def count_names() -> list[str]:
    """The per-key / per-minute count columns, in table order."""
    return [name for name, _ in _count_columns()]



def _counted() -> list[Column]:
    """Every count of :func:`count_names` as a sum of ``n`` over summary rows."""
    return [F.coalesce(F.sum(F.when(cond, F.col("n"))), F.lit(0)).alias(name) for name, cond in _count_columns()]


def per_address_from_summary(summary: DataFrame) -> DataFrame:
    """:func:`build_per_address` from :func:`.summary.summarise` rows."""
    rtt_samples = F.sum(F.when(_is("rtt_sample"), F.col("n")))
    return events_part(summary).groupBy("address").agg(
        *_counted(),
        *[F.sum(c).alias(c) for c in SUM_COLUMNS],
        F.min("first_ts").alias("first_ts"),
        F.max("last_ts").alias("last_ts"),
        F.min("lo").alias("min_us"),
        (F.sum("total") / rtt_samples).alias("mean_us"),
        F.max("hi").alias("max_us"),
    )


#: The RTT statistics of :func:`build_per_address` (µs, over ``rtt_sample`` events).
_RTT_STATS = ("min_us", "mean_us", "max_us")


def build_per_address(events: DataFrame) -> DataFrame:
    """One row per client address (all events but driver snapshots): every count of
    :func:`count_names`, the summed traffic of closed duologues, first/last event time
    and the RTT ``min_us``/``mean_us``/``max_us`` of its ``rtt_sample`` events."""
    return per_address_from_summary(summarise(events))


def per_key_summary(per_address: DataFrame, ipv6_prefix: int, rules: AbuseRules) -> DataFrame:
    """:func:`build_per_ip` from the rows of :func:`build_per_address` (keyed per distinct
    address: the source-key expression runs once per address, not per event)."""
    summed = count_names() + list(SUM_COLUMNS)
    per_key = (
        with_source_key(per_address.drop(*_RTT_STATS), "address", ipv6_prefix)
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


def build_per_ip(events: DataFrame, ipv6_prefix: int, rules: AbuseRules) -> DataFrame:
    """One row per source key with counts, derived rates and the verdict."""
    return per_key_summary(build_per_address(events), ipv6_prefix, rules)



def build_timeseries(
    events: DataFrame, first_ts: float | None, max_filled_minutes: int = MAX_FILLED_MINUTES
) -> DataFrame:
    """Per-minute counts plus ``active_duologues`` (open at the end of the minute).

    Minutes without events between the first and the last get zero counts (filled in
    Spark: a ``sequence`` of minutes exploded and joined), unless the series spans more
    than ``max_filled_minutes``. Duologues closed in the log but created before its
    first event (``ts - lifetime_s < first_ts``) count as open from the first minute on.
    Columns: ``minute`` (epoch seconds), the counts, ``active_duologues``.
    """
    return timeseries_from_summary(summarise(events), first_ts, max_filled_minutes)


def timeseries_from_summary(
    summary: DataFrame, first_ts: float | None, max_filled_minutes: int = MAX_FILLED_MINUTES
) -> DataFrame:
    """:func:`build_timeseries` from :func:`.summary.summarise` rows."""
    names = count_names()
    open_before = F.sum(F.when(F.col("opened") < F.lit(first_ts), F.col("n")))
    per_minute = events_part(summary).groupBy("minute").agg(*_counted(), open_before.alias("open_before"))
    lo, hi = F.col("lo"), F.col("hi")
    filled = (
        per_minute.agg(F.min("minute").alias("lo"), F.max("minute").alias("hi"))
        .select(F.explode(
            F.when(hi - lo <= F.lit(max_filled_minutes * 60), F.sequence(lo, hi, F.lit(60).cast("long")))
            .otherwise(F.array().cast("array<bigint>"))
        ).alias("minute"))
    )
    minutes = filled.unionByName(per_minute.select("minute")).distinct()
    table = minutes.join(per_minute, "minute", "left").fillna(0, subset=[*names, "open_before"])
    # One partition: the table has one row per minute (at most a month when filled).
    everything = Window.partitionBy(F.lit(0))
    so_far = everything.orderBy("minute").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    active = F.sum("open_before").over(everything) + F.sum(
        F.col("duologues_created") - F.col("duologues_closed")
    ).over(so_far)
    return table.select("minute", *names, active.cast("long").alias("active_duologues"))


def _minute(ts: Column) -> Column:
    return (F.floor(ts / 60) * 60).cast("long")


def build_driver_counters(events: DataFrame) -> DataFrame:
    """Per server, minute and counter name: the largest (latest cumulative) value."""
    return (
        events.filter(_is("driver_snapshot"))
        .select("server_id", _minute(F.col("ts")).alias("minute"), F.explode("counters").alias("name", "value"))
        .groupBy("server_id", "minute", "name")
        .agg(F.max("value").alias("value"))
    )


def build_driver_records(events: DataFrame, column: str) -> DataFrame:
    """Every record of the ``new_loss`` or ``new_errors`` arrays of driver snapshots."""
    return (
        events.filter(_is("driver_snapshot"))
        .select("ts", "server_id", F.explode(column).alias("record"))
        .select("ts", "server_id", "record.*")
    )

