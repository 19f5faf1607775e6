"""Round-trip times: logarithmic histograms, and percentiles read off them.

Every ``rtt_sample`` value falls in one logarithmic bucket (:func:`rtt_bucket`: bucket
``k`` holds ``[RTT_BUCKET_RATIO**k, RTT_BUCKET_RATIO**(k+1))``, values below 1 µs share
bucket -1). Per bucket the job keeps the sample count ``n``, the smallest and largest
sample ``lo``/``hi`` and their ``total``; per client address those rows are the client's
histogram, and summed over clients the overall one. A nearest-rank percentile is then
found in its bucket exactly, and answered as that bucket's sample if all its samples are
equal (``lo == hi``), else ``sqrt(lo * hi)``: **within** ``sqrt(RTT_BUCKET_RATIO) - 1``
**(0.995 %) of the exact nearest-rank value, relative**, and never outside ``[lo, hi]``
(:data:`RTT_PERCENTILE_ERROR`; sub-µs samples, impossible round trips, get the middle
of ``[lo, hi]`` instead). The same rule runs in Spark for the per-client table
(:func:`client_rtt_table`) and in Python for the overall percentiles
(:func:`histogram_percentiles`); sample count, min, mean and max are exact.

A client's histogram has at most one row per distinct bucket of its samples (a few
dozen for real round trips), so no step ever holds a client's raw samples.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

__all__ = [
    "RTT_BUCKET_RATIO",
    "RTT_PERCENTILE_ERROR",
    "RTT_QUANTILES",
    "build_rtt",
    "client_rtt_table",
    "histogram_percentiles",
    "overall_histogram",
    "rtt_bucket",
    "rtt_buckets",
    "rtt_histogram",
]

#: Width of the buckets (each spans a factor of 1.02), so every percentile is within
#: ``sqrt(1.02) - 1`` (< 1 %) of the exact value.
RTT_BUCKET_RATIO = 1.02
RTT_QUANTILES = (0.5, 0.9, 0.99)
#: The documented bound of every RTT percentile (per client and overall), for the report.
RTT_PERCENTILE_ERROR = f"<= {math.sqrt(RTT_BUCKET_RATIO) - 1:.3%} relative (log buckets of {RTT_BUCKET_RATIO - 1:.0%})"
_QUANTILE_COLUMNS = ("p50_us", "p90_us", "p99_us")


def rtt_bucket(value: Column, ratio: float = RTT_BUCKET_RATIO) -> Column:
    """The logarithmic bucket (long) of an RTT value in µs; -1 below 1 µs."""
    return F.when(value >= 1, F.floor(F.log(value) / F.lit(math.log(ratio)))).otherwise(F.lit(-1)).cast("long")


def rtt_buckets(events: DataFrame, ratio: float = RTT_BUCKET_RATIO) -> DataFrame:
    """Per client ``address`` and bucket of its ``rtt_sample`` events: ``n``, ``lo``,
    ``hi``, ``total`` (the shape of the job's summary rows, see :mod:`.summary`)."""
    value = F.col("rtt_us")
    return (
        events.filter((F.col("kind") == "rtt_sample") & value.isNotNull())
        .groupBy("address", rtt_bucket(value, ratio).alias("bucket"))
        .agg(F.count("*").alias("n"), F.min(value).alias("lo"), F.max(value).alias("hi"), F.sum(value).alias("total"))
    )


def overall_histogram(buckets: DataFrame) -> DataFrame:
    """All clients' :func:`rtt_buckets` rows merged: one row per non-empty bucket with
    ``n``, ``lo``, ``hi``. At most ``log(max double) / log(ratio)`` rows (about 36,000
    for 2 %; a few hundred for real round trips), whatever the number of samples."""
    return buckets.groupBy("bucket").agg(F.sum("n").alias("n"), F.min("lo").alias("lo"), F.max("hi").alias("hi"))


def rtt_histogram(events: DataFrame, ratio: float = RTT_BUCKET_RATIO) -> DataFrame:
    """All ``rtt_sample`` values of ``events`` in logarithmic buckets (see
    :func:`overall_histogram`, :func:`histogram_percentiles`)."""
    return overall_histogram(rtt_buckets(events, ratio))


def _bucket_answer(lo: Column, hi: Column) -> Column:
    """The percentile a bucket answers (as :func:`histogram_percentiles`)."""
    return F.when(lo == hi, lo).when(lo > 0, F.sqrt(lo * hi)).otherwise((lo + hi) / 2)


def client_rtt_table(buckets: DataFrame) -> DataFrame:
    """Per client (``client_ip``): ``samples``, ``min_us``, ``mean_us``, ``p50_us``,
    ``p90_us``, ``p99_us``, ``max_us`` from its :func:`rtt_buckets` rows.

    Counts, min, mean and max are exact; each percentile is the answer of the bucket
    holding the nearest-rank sample (the ``ceil(p * samples)``-th smallest), within
    :data:`RTT_PERCENTILE_ERROR` of it. One Spark window per client over its buckets
    (ordered by bucket, which orders by value) gives the running count; exactly one
    bucket per percentile has ``running - n < rank <= running``.
    """
    client = Window.partitionBy("address")
    running = client.orderBy("bucket").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    ranked = buckets.select(
        "address", "n", "lo", "hi", "total",
        F.sum("n").over(running).alias("running"), F.sum("n").over(client).alias("samples"),
    )
    answer = _bucket_answer(F.col("lo"), F.col("hi"))
    picked = []
    for p, name in zip(RTT_QUANTILES, _QUANTILE_COLUMNS):
        rank = F.greatest(F.lit(1), F.ceil(F.lit(p) * F.col("samples")))
        hit = (F.col("running") >= rank) & (F.col("running") - F.col("n") < rank)
        picked.append(F.max(F.when(hit, answer)).alias(name))
    return ranked.groupBy(F.col("address").alias("client_ip")).agg(
        F.sum("n").alias("samples"),
        F.min("lo").alias("min_us"),
        (F.sum("total") / F.sum("n")).alias("mean_us"),
        *picked,
        F.max("hi").alias("max_us"),
    ).select("client_ip", "samples", "min_us", "mean_us", *_QUANTILE_COLUMNS, "max_us")


def build_rtt(events: DataFrame, ratio: float = RTT_BUCKET_RATIO) -> DataFrame:
    """Per client address: RTT sample count, min, mean, p50, p90, p99, max (µs) of its
    ``rtt_sample`` events (see :func:`client_rtt_table` for the percentiles' bound)."""
    return client_rtt_table(rtt_buckets(events, ratio))


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
