"""The job's one pass over the events: every line aggregated into a small summary.

The JSON is read exactly once, by one Spark aggregation (:func:`summarise`) whose rows,
far fewer than the events, are what the job keeps (persisted) and builds every table
from. A summary row is one group of one of three roles (column ``role``):

``event``  one per (``status``, ``address``, ``minute``, ``kind``, ``reason``,
           ``key_valid``, ``wrong_ip``, ``opened``): every line is in exactly one such
           row, so their ``n`` count the lines by status and the events by kind, their
           ``first_ts``/``last_ts`` the time range. Lines that are not ``ok`` keep only
           their ``status``. ``opened`` (creation time, ``ts - lifetime_s``) is set for
           ``duologue_closed`` events only, so duologues open before the log's first
           event are counted exactly once that is known (:func:`.tables.timeseries_from_summary`).
           The sums of closed duologues' traffic and the RTT min/sum/max ride along.
``rtt``    a second row for every ``rtt_sample`` event: per ``address`` and logarithmic
           ``bucket`` (:func:`.rtt.rtt_bucket`), ``n`` and ``lo``/``hi``/``total``, the
           clients' RTT histograms (see :mod:`.rtt`).
``driver`` one per ``driver_snapshot`` event: its ``snapshot`` payload (server, counters,
           loss and error records) as a group key made unique by a row id, so the rare
           snapshot rows come out of the same scan whole.

All aggregate buffers are fixed-width numbers (counts, sums, min, max), so Spark keeps
the whole pass a hash aggregation (no sort), partially aggregated before the shuffle.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import DataType

from aeron_py.analytics.rtt import rtt_bucket
from aeron_py.analytics.schema import EVENT_SCHEMA, STATUS_OK

__all__ = ["DRIVER", "EVENT", "RTT", "SUM_COLUMNS", "driver_snapshots", "events_part", "rtt_part", "summarise"]

EVENT, RTT, DRIVER = "event", "rtt", "driver"
#: Traffic of closed duologues, summed per group.
SUM_COLUMNS = ("msgs_in", "msgs_out", "bytes_in", "bytes_out")
_KEYS = ("key_valid", "reason", "wrong_ip")


def _column(events: DataFrame, name: str, data_type: DataType | str) -> Column:
    """``events[name]``, or a typed null when the frame has no such column (the table
    builders also take narrow, hand-made frames)."""
    return F.col(name) if name in events.columns else F.lit(None).cast(data_type)


def _is(kind: str) -> Column:
    return F.col("kind") == kind


def _minute(ts: Column) -> Column:
    return (F.floor(ts / 60) * 60).cast("long")


def summarise(events: DataFrame) -> DataFrame:
    """The summary rows (see the module docstring) of analysed events
    (:func:`.schema.analysed`; ``status`` and ``address`` may be missing: all ``ok``,
    no address)."""
    ok = F.col("status") == STATUS_OK if "status" in events.columns else F.lit(True)
    closed, driver = ok & _is("duologue_closed"), ok & _is("driver_snapshot")
    is_rtt = ok & _is("rtt_sample") & F.col("rtt_us").isNotNull()
    fields = {f.name: f.dataType for f in EVENT_SCHEMA.fields}
    snapshot = F.struct(
        F.monotonically_increasing_id().alias("id"),
        _column(events, "server_id", "string").alias("server_id"),
        F.map_entries(_column(events, "counters", fields["counters"])).alias("counters"),
        _column(events, "new_loss", fields["new_loss"]).alias("new_loss"),
        _column(events, "new_errors", fields["new_errors"]).alias("new_errors"),
    )
    roles = F.when(is_rtt, F.array(F.lit(EVENT), F.lit(RTT))).otherwise(
        F.array(F.when(driver, F.lit(DRIVER)).otherwise(F.lit(EVENT))))
    rows = events.select(
        (F.col("status") if "status" in events.columns else F.lit(STATUS_OK)).alias("status"),
        F.when(ok & ~driver, _column(events, "address", "string")).alias("address"),
        F.when(ok, F.col("ts")).alias("ts"),
        F.when(ok, F.col("kind")).alias("kind"),
        *[F.when(ok, F.col(c)).alias(c) for c in _KEYS],
        F.when(closed, F.col("ts") - F.col("lifetime_s")).alias("opened"),
        *[F.when(closed, F.col(c)).alias(c) for c in SUM_COLUMNS],
        F.when(is_rtt, F.col("rtt_us")).alias("rtt_us"),
        F.when(driver, snapshot).alias("snapshot"),
        F.explode(roles).alias("role"),
    )
    event, rtt = F.col("role") == EVENT, F.col("role") == RTT
    keys = [
        F.col("role"), F.col("status"), F.col("address"),
        F.when(event, _minute(F.col("ts"))).alias("minute"),
        *[F.when(~rtt, F.col(c)).alias(c) for c in ("kind", *_KEYS, "opened")],
        F.when(rtt, rtt_bucket(F.col("rtt_us"))).alias("bucket"),
        F.col("snapshot"),
    ]
    return rows.groupBy(*keys).agg(
        F.count("*").alias("n"),
        *[F.sum(c).alias(c) for c in SUM_COLUMNS],
        F.min("ts").alias("first_ts"),
        F.max("ts").alias("last_ts"),
        F.min("rtt_us").alias("lo"),
        F.sum("rtt_us").alias("total"),
        F.max("rtt_us").alias("hi"),
    )


def events_part(summary: DataFrame) -> DataFrame:
    """The ``ok`` events but driver snapshots, one count row per group (role ``event``)."""
    return summary.filter((F.col("role") == EVENT) & (F.col("status") == STATUS_OK))


def rtt_part(summary: DataFrame) -> DataFrame:
    """The clients' RTT histograms: ``address``, ``bucket``, ``n``, ``lo``, ``hi``,
    ``total`` (the shape of :func:`.rtt.rtt_buckets`)."""
    return summary.filter(F.col("role") == RTT).select("address", "bucket", "n", "lo", "hi", "total")


def driver_snapshots(summary: DataFrame) -> DataFrame:
    """The ``driver_snapshot`` events again, as analysed rows (``kind``, ``ts``,
    ``server_id``, ``counters``, ``new_loss``, ``new_errors``)."""
    snapshot = F.col("snapshot")
    return summary.filter(F.col("role") == DRIVER).select(
        F.lit("driver_snapshot").alias("kind"),
        F.col("first_ts").alias("ts"),
        snapshot["server_id"].alias("server_id"),
        F.map_from_entries(snapshot["counters"]).alias("counters"),
        snapshot["new_loss"].alias("new_loss"),
        snapshot["new_errors"].alias("new_errors"),
    )
