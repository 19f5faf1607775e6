"""The streaming defence: the batch job's abuse rules over a sliding event-time window,
continuously, with verdicts merged into the server's blocklist within seconds.

Spark Structured Streaming reads the telemetry directory as the writer publishes
complete files (:mod:`aeron_py.telemetry.writer`) with the explicit
:data:`~aeron_py.analytics.schema.EVENT_SCHEMA`. Two queries share the source:

``verdicts``  well-formed ``hello``/``reject``/``client_connected``/``bad_message``
              events, keyed per client (:func:`~aeron_py.analytics.rules.with_source_key`:
              IPv4 address, IPv6 ``--ipv6-prefix`` network), counted per sliding
              event-time window (``window``/``slide``) with a ``watermark`` bounding late
              data and state; every trigger's updated (window, key) rows go through
              :func:`~aeron_py.analytics.rules.apply_rules` and ``block`` verdicts are merged
              into the blocklist (:class:`~aeron_py.analytics.stream_sinks.BlocklistSink`)
``counts``    lines per batch by status and kind
              (:class:`~aeron_py.analytics.stream_sinks.CountSink`): the proof that every
              line is read once, across kills and restarts

Each query keeps its offsets and state under ``checkpoint/<query>``; both sinks are
idempotent per batch id, so a restart after ``kill -9`` neither loses nor double-counts.
``checkpoint/status.json`` shows each query's last progress (batch id, input rows,
rows per second, durations) for operators and the benchmark.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.streaming.query import StreamingQuery

from aeron_py.analytics.rules import AbuseRules, with_source_key
from aeron_py.analytics.schema import CORRUPT_COLUMN, EVENT_SCHEMA, STATUS_OK, analysed
from aeron_py.analytics.stream_sinks import LEDGER_NAME, BlocklistSink, CountSink, write_json_atomically

__all__ = ["StreamConfig", "judged_windows", "read_event_stream", "start_queries", "run_stream"]

log = logging.getLogger(__name__)

#: The kinds the abuse rules count.
JUDGED_KINDS = ("hello", "reject", "client_connected", "bad_message")


@dataclass(frozen=True)
class StreamConfig:
    """What the streaming job reads, how it judges and where it keeps its state."""

    events_dir: Path
    blocklist: Path
    checkpoint: Path
    counts_dir: Path | None = None  # None: checkpoint / "batch_counts"
    rules: AbuseRules = field(default_factory=AbuseRules)
    blocklist_ttl: float = 3600.0
    ipv6_prefix: int = 64
    window_s: float = 30.0
    slide_s: float = 5.0
    watermark_s: float = 10.0
    trigger_s: float = 1.0
    max_files_per_trigger: int = 1000
    available_now: bool = False  # process what is there, then stop

    def __post_init__(self) -> None:
        for name in ("window_s", "slide_s", "trigger_s"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name.removesuffix('_s')} must be positive, got {getattr(self, name)}")
        if self.watermark_s < 0:
            raise ValueError(f"watermark must be >= 0, got {self.watermark_s}")
        if self.slide_s > self.window_s:
            raise ValueError(f"slide ({self.slide_s:g} s) must not exceed the window ({self.window_s:g} s)")
        if self.max_files_per_trigger < 1:
            raise ValueError(f"max files per trigger must be >= 1, got {self.max_files_per_trigger}")

    @property
    def counts(self) -> Path:
        """Where the per-batch count files go."""
        return self.counts_dir or self.checkpoint / "batch_counts"

    @property
    def status(self) -> Path:
        """``status.json``: each query's last progress (batch id, rows, durations)."""
        return self.checkpoint / "status.json"

    @property
    def ledger(self) -> Path:
        """The blocklist ledger (last batch id merged)."""
        return self.checkpoint / LEDGER_NAME


def _interval(seconds: float) -> str:
    return f"{round(seconds * 1000)} milliseconds"


def read_event_stream(spark: SparkSession, config: StreamConfig) -> DataFrame:
    """The telemetry directory as a stream of :func:`analysed` rows (``status``, ``address``, ...).

    Only published ``*.jsonl`` files are read (the writer's temporary files are hidden);
    a file deleted by the writer's retention before it was read is skipped.
    """
    uri = config.events_dir.resolve().as_uri()
    raw = (
        spark.readStream.schema(EVENT_SCHEMA)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", CORRUPT_COLUMN)
        .option("pathGlobFilter", "*.jsonl")
        .option("maxFilesPerTrigger", config.max_files_per_trigger)
        .option("ignoreMissingFiles", "true")
        .json(uri)
    )
    return analysed(raw)


def judged_windows(events: DataFrame, config: StreamConfig) -> DataFrame:
    """Per sliding event-time window and source key: the counts the abuse rules use."""
    kind = F.col("kind")
    connected = kind == "client_connected"
    relevant = events.filter(
        (F.col("status") == STATUS_OK) & kind.isin(*JUDGED_KINDS) & F.col("address").isNotNull()
    ).select(F.timestamp_seconds("ts").alias("event_time"), "address", "kind", "wrong_ip")
    return (
        with_source_key(relevant, "address", config.ipv6_prefix)
        .withWatermark("event_time", _interval(config.watermark_s))
        .groupBy(F.window("event_time", _interval(config.window_s), _interval(config.slide_s)), "key", "family")
        .agg(
            F.count_if(kind == "hello").alias("hellos"),
            F.count_if(kind == "reject").alias("rejects"),
            F.count_if(connected & ~F.col("wrong_ip")).alias("connects"),
            F.count_if(connected & F.col("wrong_ip")).alias("wrong_ip_connects"),
            F.count_if(kind == "bad_message").alias("bad_messages"),
            F.approx_count_distinct("address").alias("addresses"),
        )
    )


def start_queries(
    spark: SparkSession,
    config: StreamConfig,
    on_merge: Callable[[int, dict[str, Any]], None] | None = None,
) -> list[StreamingQuery]:
    """Start the ``verdicts`` and ``counts`` queries; return them (running)."""
    config.checkpoint.mkdir(parents=True, exist_ok=True)
    config.counts.mkdir(parents=True, exist_ok=True)
    events = read_event_stream(spark, config)
    sink = BlocklistSink(config.blocklist, config.ledger, config.rules, config.blocklist_ttl, on_merge=on_merge)
    queries = []
    for name, frame, mode, function in (
        ("verdicts", judged_windows(events, config), "update", sink),
        ("counts", events.select("status", "kind"), "append", CountSink(config.counts)),
    ):
        writer = (
            frame.writeStream.queryName(f"aeron_py-{name}")
            .outputMode(mode)
            .option("checkpointLocation", (config.checkpoint / name).resolve().as_uri())
            .foreachBatch(function)
        )
        writer = writer.trigger(availableNow=True) if config.available_now else writer.trigger(
            processingTime=_interval(config.trigger_s)
        )
        queries.append(writer.start())
        log.info("query %s started (checkpoint %s)", name, config.checkpoint / name)
    return queries


def _progress(query: StreamingQuery) -> dict[str, Any] | None:
    """The query's last progress report as a plain dict (the parts an operator needs)."""
    progress = query.lastProgress
    if progress is None:
        return None
    data = json.loads(progress.json)
    keep = ("batchId", "timestamp", "numInputRows", "inputRowsPerSecond", "processedRowsPerSecond",
            "durationMs", "eventTime")
    return {k: data[k] for k in keep if k in data}


def _write_status(config: StreamConfig, queries: list[StreamingQuery], reported: dict[str, Any]) -> None:
    """Rewrite ``checkpoint/status.json`` when a query reported a new batch."""
    status = {q.name: _progress(q) for q in queries}
    if status == reported:
        return
    reported.clear()
    reported.update(status)
    write_json_atomically(config.status, {"queries": status, "blocklist": str(config.blocklist)})


def run_stream(spark: SparkSession, config: StreamConfig, stop: threading.Event) -> None:
    """Run both queries until ``stop`` is set (or, with ``available_now``, the input is done).

    Raises the first query's failure (``StreamingQueryException``) after stopping the other.
    """
    # Few shuffle partitions: the state per window and key is tiny. Fixed by the first run
    # of a checkpoint (Spark keeps the value the state was written with).
    spark.conf.set("spark.sql.shuffle.partitions", "1")
    spark.conf.set("spark.sql.streaming.minBatchesToRetain", "20")
    # No batches without new data: window state is evicted by the next batch with data,
    # and an idle stream costs nothing (a no-data batch costs seconds on a busy machine).
    spark.conf.set("spark.sql.streaming.noDataMicroBatches.enabled", "false")
    queries = start_queries(spark, config)
    reported: dict[str, Any] = {}
    try:
        while not stop.is_set():
            if all(not q.isActive for q in queries):
                break
            for query in queries:
                error = query.exception()
                if error is not None:
                    raise error
            _write_status(config, queries, reported)
            stop.wait(0.5)
    finally:
        for query in queries:
            try:
                query.stop()
            except Exception:  # noqa: BLE001 - stopping a failed query may fail again
                log.debug("stopping %s failed", query.name, exc_info=True)
    for query in queries:
        error = query.exception()
        if error is not None:
            raise error
    log.info("stream stopped")
