"""The job's tables as lazy DataFrames over analysed events (see :func:`.schema.analysed`).

Everything is DataFrame expressions evaluated by Spark (no Python UDFs, nothing is
collected here): per client key, per minute (gaps filled in Spark), driver counters,
loss and error records, RTT percentiles (Spark's ``percentile_approx``).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from aeron_py.analytics.rules import AbuseRules, apply_rules, with_client_key
from aeron_py.telemetry.events import REJECT_REASONS

__all__ = [
    "MAX_FILLED_MINUTES",
    "RTT_ACCURACY",
    "build_driver_counters",
    "build_driver_records",
    "build_per_ip",
    "build_rtt",
    "build_timeseries",
    "count_names",
]

#: Minutes beyond which the time series is not gap-filled (a stray timestamp must
#: not blow up the table).
MAX_FILLED_MINUTES = 60 * 24 * 31
#: ``percentile_approx`` accuracy of the RTT percentiles: the rank of a returned sample
#: is within ``samples / RTT_ACCURACY`` of the exact nearest rank, so a client with
#: fewer than that many samples gets exact nearest-rank percentiles.
RTT_ACCURACY = 10_000


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


def _minute(ts: Column) -> Column:
    return (F.floor(ts / 60) * 60).cast("long")


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
    closed = _is("duologue_closed")
    names = count_names()
    per_minute = (
        events.filter(~_is("driver_snapshot"))
        .groupBy(_minute(F.col("ts")).alias("minute"))
        .agg(
            *[F.count_if(cond).alias(name) for name, cond in _count_columns()],
            F.count_if(closed & (F.col("ts") - F.col("lifetime_s") < F.lit(first_ts))).alias("open_before"),
        )
    )
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


def build_rtt(events: DataFrame, accuracy: int = RTT_ACCURACY) -> DataFrame:
    """Per client address: RTT sample count, min, mean, p50, p90, p99, max (µs).

    Percentiles are Spark's ``percentile_approx`` with ``accuracy``: each is one of the
    client's samples whose rank is within ``samples / accuracy`` of the nearest rank
    (the ``ceil(p * n)``-th smallest), i.e. exact for clients with fewer than
    ``accuracy`` samples.
    """
    return (
        events.filter(_is("rtt_sample"))
        .groupBy(F.col("address").alias("client_ip"))
        .agg(
            F.count("*").alias("samples"),
            F.min("rtt_us").alias("min_us"),
            F.avg("rtt_us").alias("mean_us"),
            F.percentile_approx("rtt_us", [0.5, 0.9, 0.99], accuracy).alias("q"),
            F.max("rtt_us").alias("max_us"),
        )
        .select(
            "client_ip", "samples", "min_us", "mean_us",
            F.col("q")[0].alias("p50_us"), F.col("q")[1].alias("p90_us"), F.col("q")[2].alias("p99_us"), "max_us",
        )
    )
