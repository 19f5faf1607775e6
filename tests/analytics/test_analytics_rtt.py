"""RTT tables from logarithmic histograms: per client (Spark) and overall (Python), each
percentile within the documented bound of the exact nearest-rank value."""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

import pytest
from pyspark.sql import SparkSession

from aeron_py.analytics.rtt import (
    RTT_BUCKET_RATIO,
    RTT_QUANTILES,
    build_rtt,
    histogram_percentiles,
    rtt_buckets,
    rtt_histogram,
)
from aeron_py.analytics.session import build_session

pytestmark = [pytest.mark.spark, pytest.mark.timeout(120)]

BOUND = math.sqrt(RTT_BUCKET_RATIO) - 1
COLUMNS = ("p50_us", "p90_us", "p99_us")


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    session = build_session("local[1]", log_level="ERROR", driver_memory="1g")
    yield session
    session.stop()


def _nearest_rank(values: list[float], p: float) -> float:
    return sorted(values)[max(1, math.ceil(p * len(values))) - 1]


def test_client_percentiles_are_exact_when_buckets_hold_equal_samples(spark: SparkSession) -> None:
    frame = spark.createDataFrame([("rtt_sample", "10.0.0.1", v) for v in (900.0, 500.0, 700.0)] + [
        ("hello", "10.0.0.1", 5.0)], "kind string, address string, rtt_us double")
    assert [r.asDict() for r in build_rtt(frame).collect()] == [{
        "client_ip": "10.0.0.1", "samples": 3, "min_us": 500.0, "mean_us": 700.0,
        "p50_us": 700.0, "p90_us": 900.0, "p99_us": 900.0, "max_us": 900.0,
    }]


def test_client_percentiles_are_within_the_bound_of_the_exact_ones(spark: SparkSession) -> None:
    """Several clients with different spreads (sub-µs values too), rows spread over partitions."""
    rng = random.Random(7)
    clients = {
        "10.0.0.7": [float(rng.randrange(100, 50_000)) for _ in range(3_000)],
        "2001:db8::9": [float(v) for v in range(1, 201)],
        "10.0.0.8": [rng.lognormvariate(math.log(600), 0.3) for _ in range(500)] + [0.0, 0.5],
        "10.0.0.9": [42.0] * 10,
    }
    rows = [("rtt_sample", ip, v) for ip, values in clients.items() for v in values]
    rng.shuffle(rows)
    frame = spark.createDataFrame(rows, "kind string, address string, rtt_us double").repartition(3)
    table = {r["client_ip"]: r for r in build_rtt(frame).collect()}
    assert set(table) == set(clients)
    for ip, values in clients.items():
        row = table[ip]
        assert (row["samples"], row["min_us"], row["max_us"]) == (len(values), min(values), max(values))
        assert row["mean_us"] == pytest.approx(sum(values) / len(values))
        for column, p in zip(COLUMNS, RTT_QUANTILES):
            exact = _nearest_rank(values, p)
            assert abs(row[column] - exact) <= BOUND * exact, (ip, column, row[column], exact)
            assert row["min_us"] <= row[column] <= row["max_us"]
    assert table["10.0.0.9"]["p99_us"] == 42.0


def test_client_and_overall_percentiles_follow_the_same_rule(spark: SparkSession) -> None:
    """Spark's per-client answer equals the Python answer over that client's buckets."""
    rng = random.Random(3)
    values = [float(rng.randrange(1, 10_000)) for _ in range(2_000)]
    frame = spark.createDataFrame([("rtt_sample", "10.0.0.5", v) for v in values],
                                  "kind string, address string, rtt_us double").repartition(2)
    buckets = [(r["n"], r["lo"], r["hi"]) for r in rtt_buckets(frame).collect()]
    row = build_rtt(frame).first()
    assert row is not None
    assert [row[c] for c in COLUMNS] == histogram_percentiles(buckets)


def test_overall_rtt_percentiles_are_within_the_histogram_bound(spark: SparkSession) -> None:
    """The overall percentiles come from 2 % log buckets: within sqrt(1.02) - 1 of the exact
    nearest-rank value, and exact when the samples of the bucket hit are all equal."""
    rng = random.Random(5)
    values = [float(rng.randrange(50, 80_000)) for _ in range(5_000)] + [0.0, 0.5]
    frame = spark.createDataFrame([("rtt_sample", "10.0.0.8", v) for v in values[:2_500]] + [
        ("rtt_sample", "10.0.0.9", v) for v in values[2_500:]] + [("hello", "10.0.0.8", 1e9)],
        "kind string, address string, rtt_us double").repartition(3)
    buckets = [(r["n"], r["lo"], r["hi"]) for r in rtt_histogram(frame).collect()]
    assert sum(n for n, _, _ in buckets) == len(values)  # the hello's value is not a sample
    for p, got in zip(RTT_QUANTILES, histogram_percentiles(buckets)):
        exact = _nearest_rank(values, p)
        assert got is not None and abs(got - exact) <= BOUND * exact, (p, got, exact)
    spread = [100.0, 200.0, 400.0, 800.0]  # one sample per bucket: exact
    assert histogram_percentiles([(1, v, v) for v in spread]) == [200.0, 800.0, 800.0]
    assert histogram_percentiles([]) == [None, None, None]
