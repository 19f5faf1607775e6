"""The job's tables as lazy DataFrames over analysed events (see :func:`.schema.analysed`).

Everything is DataFrame expressions evaluated by Spark (no Python UDFs, nothing is
collected here): per client address (one aggregation feeding both the per-key summary
and the RTT table), per client key, per minute (gaps filled in Spark), driver counters,
loss and error records, per-client RTT percentiles (Spark's ``percentile_approx``) and
the logarithmic RTT histogram the overall percentiles come from.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from aeron_py.analytics.rules import AbuseRules, apply_rules, with_client_key
from aeron_py.telemetry.events import REJECT_REASONS

__all__ = [
    "MAX_FILLED_MINUTES",
    "OBJECT_AGGREGATE_KEYS",
    "RTT_ACCURACY",
    "RTT_BUCKET_RATIO",
    "RTT_QUANTILES",
    "build_driver_counters",
    "build_driver_records",
    "build_per_address",
    "build_per_ip",
    "build_rtt",
    "build_timeseries",
    "count_names",
    "event_counts",
    "per_address_from_counts",
    "timeseries_from_counts",
    "histogram_percentiles",
    "object_aggregate_keys",
    "per_key_summary",
    "rtt_histogram",
    "rtt_percentiles",
    "rtt_table",
]

#: Minutes beyond which the time series is not gap-filled (a stray timestamp must
#: not blow up the table).
MAX_FILLED_MINUTES = 60 * 24 * 31
#: ``percentile_approx`` accuracy of the per-client RTT percentiles: the rank of a
#: returned sample is within ``samples / RTT_ACCURACY`` of the exact nearest rank, so a
#: client with fewer than that many samples gets exact nearest-rank percentiles.
RTT_ACCURACY = 10_000
RTT_QUANTILES = (0.5, 0.9, 0.99)
_QUANTILE_COLUMNS = ("p50_us", "p90_us", "p99_us")
#: Width of the buckets of :func:`rtt_histogram` (each spans a factor of 1.02), so the
#: overall percentiles are within ``sqrt(1.02) - 1`` (< 1 %) of the exact value.
RTT_BUCKET_RATIO = 1.02
#: Groups an object aggregate (``percentile_approx``) may hash per task before Spark
#: falls back to sorting (see :func:`object_aggregate_keys`).
OBJECT_AGGREGATE_KEYS = 200_000


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
#: The RTT statistics of :func:`build_per_address` (µs, over ``rtt_sample`` events).
_RTT_STATS = ("min_us", "mean_us", "max_us")


#: The group keys of :func:`event_counts` besides ``address``: every column the
#: conditions of :func:`count_names` look at, plus the minute.
_DETAIL_KEYS = ("minute", "kind", "reason", "key_valid", "wrong_ip")


def event_counts(events: DataFrame, first_ts: float | None) -> DataFrame:
    """Events (all but driver snapshots) counted per ``address`` (when the frame has
    one), minute and every column a count condition looks at: ``n`` events, and per
    group the sums, first/last time and RTT statistics the tables need.

    The first of two aggregation levels: one cheap pass over all events (one count and
    a few sums per row, instead of every count condition per row) whose rows, about a
    tenth of the events, feed both :func:`build_per_address` and
    :func:`build_timeseries`. ``open_before`` counts duologues closed in the log but
    created before ``first_ts`` (the log's first event).
    """
    closed, rtt_sample = _is("duologue_closed"), _is("rtt_sample")
    rtt = F.when(rtt_sample, F.col("rtt_us"))
    address = [F.col("address")] if "address" in events.columns else []
    keys = [*address, _minute(F.col("ts")).alias("minute"), *[F.col(c) for c in _DETAIL_KEYS[1:]]]
    return (
        events.filter(~_is("driver_snapshot"))
        .groupBy(*keys)
        .agg(
            F.count("*").alias("n"),
            F.count_if(closed & (F.col("ts") - F.col("lifetime_s") < F.lit(first_ts))).alias("open_before"),
            *[F.sum(F.when(closed, F.col(c))).alias(c) for c in _SUM_COLUMNS],
            F.min("ts").alias("first_ts"),
            F.max("ts").alias("last_ts"),
            F.min(rtt).alias("min_us"),
            F.sum(rtt).alias("rtt_sum"),
            F.max(rtt).alias("max_us"),
        )
    )


def _counted(counts: DataFrame) -> list[Column]:
    """Every count of :func:`count_names` as a sum over :func:`event_counts` rows."""
    return [F.coalesce(F.sum(F.when(cond, F.col("n"))), F.lit(0)).alias(name) for name, cond in _count_columns()]


def per_address_from_counts(counts: DataFrame) -> DataFrame:
    """:func:`build_per_address` from :func:`event_counts` rows."""
    return counts.groupBy("address").agg(
        *_counted(counts),
        *[F.sum(c).alias(c) for c in _SUM_COLUMNS],
        F.min("first_ts").alias("first_ts"),
        F.max("last_ts").alias("last_ts"),
        F.min("min_us").alias("min_us"),
        (F.sum("rtt_sum") / F.sum(F.when(_is("rtt_sample"), F.col("n")))).alias("mean_us"),
        F.max("max_us").alias("max_us"),
    )


def build_per_address(events: DataFrame) -> DataFrame:
    """One row per client address (all events but driver snapshots): every count of
    :func:`count_names`, the summed traffic of closed duologues, first/last event time
    and the RTT ``min_us``/``mean_us``/``max_us`` of its ``rtt_sample`` events.

    Both the per-key summary (:func:`per_key_summary`) and the RTT table
    (:func:`rtt_table`) are built from it (via :func:`event_counts`).
    """
    return per_address_from_counts(event_counts(events, None))


def per_key_summary(per_address: DataFrame, ipv6_prefix: int, rules: AbuseRules) -> DataFrame:
    """:func:`build_per_ip` from the rows of :func:`build_per_address` (keyed per distinct
    address: the client-key expression runs once per address, not per event)."""
    summed = count_names() + list(_SUM_COLUMNS)
    per_key = (
        with_client_key(per_address.drop(*_RTT_STATS), "address", ipv6_prefix)
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
    """One row per client key with counts, derived rates and the verdict."""
    return per_key_summary(build_per_address(events), ipv6_prefix, rules)


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
    return timeseries_from_counts(event_counts(events, first_ts), max_filled_minutes)


def timeseries_from_counts(counts: DataFrame, max_filled_minutes: int = MAX_FILLED_MINUTES) -> DataFrame:
    """:func:`build_timeseries` from :func:`event_counts` rows."""
    names = count_names()
    per_minute = counts.groupBy("minute").agg(*_counted(counts), F.sum("open_before").alias("open_before"))
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


def rtt_percentiles(events: DataFrame, accuracy: int = RTT_ACCURACY) -> DataFrame:
    """Per client address (``client_ip``): ``p50_us``, ``p90_us``, ``p99_us`` of its
    ``rtt_sample`` events by Spark's ``percentile_approx`` with ``accuracy`` (see
    :func:`build_rtt`). Run it with :func:`object_aggregate_keys` raised: with
    Spark's default a task falls back to sorting its rows beyond 128 addresses."""
    return (
        events.filter(_is("rtt_sample"))
        .groupBy(F.col("address").alias("client_ip"))
        .agg(F.percentile_approx("rtt_us", list(RTT_QUANTILES), accuracy).alias("q"))
        .select("client_ip", *[F.col("q")[i].alias(name) for i, name in enumerate(_QUANTILE_COLUMNS)])
    )


def rtt_table(per_address: DataFrame, percentiles: DataFrame) -> DataFrame:
    """:func:`build_rtt` from per-address RTT statistics (``address``, ``rtt_samples``,
    ``min_us``, ``mean_us``, ``max_us``: :func:`build_per_address` rows, say) and
    :func:`rtt_percentiles`."""
    stats = per_address.filter(F.col("rtt_samples") > 0).select(
        F.col("address").alias("client_ip"), F.col("rtt_samples").alias("samples"), *_RTT_STATS
    )
    return stats.join(percentiles, "client_ip").select(
        "client_ip", "samples", "min_us", "mean_us", *_QUANTILE_COLUMNS, "max_us"
    )


def build_rtt(events: DataFrame, accuracy: int = RTT_ACCURACY) -> DataFrame:
    """Per client address: RTT sample count, min, mean, p50, p90, p99, max (µs).

    Percentiles are Spark's ``percentile_approx`` with ``accuracy``: each is one of the
    client's samples whose rank is within ``samples / accuracy`` of the nearest rank
    (the ``ceil(p * n)``-th smallest), i.e. exact for clients with fewer than
    ``accuracy`` samples. (The job takes the count, min, mean and max from
    :func:`build_per_address` instead of this separate aggregation.)
    """
    samples = events.filter(_is("rtt_sample"))
    stats = samples.groupBy("address").agg(
        F.count("*").alias("rtt_samples"), F.min("rtt_us").alias("min_us"), F.avg("rtt_us").alias("mean_us"),
        F.max("rtt_us").alias("max_us"),
    )
    return rtt_table(stats, rtt_percentiles(events, accuracy))


def rtt_histogram(events: DataFrame, ratio: float = RTT_BUCKET_RATIO) -> DataFrame:
    """All ``rtt_sample`` values in logarithmic buckets: one row per non-empty bucket
    with ``n`` (samples), ``lo`` and ``hi`` (smallest and largest sample in it).

    Bucket ``k`` holds the values in ``[ratio**k, ratio**(k+1))``; values below 1 µs
    (impossible round trips: zero, negative) share one bucket. At most
    ``log(max double) / log(ratio)`` rows (about 36,000 for 2 %; a few hundred for real
    round trips), whatever the number of samples: see :func:`histogram_percentiles`.
    """
    value = F.col("rtt_us")
    bucket = F.when(value >= 1, F.floor(F.log(value) / F.lit(math.log(ratio)))).otherwise(F.lit(-1))
    return (
        events.filter(_is("rtt_sample") & value.isNotNull())
        .groupBy(bucket.cast("long").alias("bucket"))
        .agg(F.count("*").alias("n"), F.min(value).alias("lo"), F.max(value).alias("hi"))
    )


def histogram_percentiles(
    buckets: Sequence[tuple[int, float, float]], quantiles: Sequence[float] = RTT_QUANTILES
) -> list[float | None]:
    """Nearest-rank percentiles from ``(n, lo, hi)`` buckets (:func:`rtt_histogram` rows).

    For each quantile ``p`` the bucket holding the ``ceil(p * total)``-th smallest sample
    is found exactly; the answer is that sample if the bucket's samples are all equal
    (``lo == hi``), else ``sqrt(lo * hi)``: within ``sqrt(ratio) - 1`` (0.995 % for 2 %
    buckets) of the exact nearest-rank value, relative, and never outside
    ``[lo, hi]``. None for each quantile when there are no samples.
    """
    ordered = sorted(buckets, key=lambda b: b[1])
    total = sum(b[0] for b in ordered)
    result: list[float | None] = []
    for p in quantiles:
        if total == 0:
            result.append(None)
            continue
        rank = max(1, math.ceil(p * total))
        seen = 0
        for n, lo, hi in ordered:
            seen += n
            if seen >= rank:
                result.append(lo if lo == hi else math.sqrt(lo * hi) if lo > 0 else (lo + hi) / 2)
                break
    return result


@contextmanager
def object_aggregate_keys(spark: SparkSession, keys: int = OBJECT_AGGREGATE_KEYS) -> Iterator[None]:
    """Let object aggregates (``percentile_approx``) hash up to ``keys`` groups per task
    before falling back to sorting the task's rows (Spark's default is 128), restoring
    the setting afterwards. The memory this takes is bounded by the task's rows."""
    name = "spark.sql.objectHashAggregate.sortBased.fallbackThreshold"
    old = spark.conf.get(name, None)
    spark.conf.set(name, str(keys))
    try:
        yield
    finally:
        if old is None:
            spark.conf.unset(name)
        else:
            spark.conf.set(name, old)
