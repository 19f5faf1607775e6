"""Spark schema of telemetry events and the tolerant JSON Lines loader.

The schema is the union of every kind's fields (see :mod:`aeron_py.telemetry.events`);
a field a kind does not have is null. Lines Spark cannot parse land in
:data:`CORRUPT_COLUMN` instead of failing the job. :func:`with_status` classifies each
row so the job analyses only well-formed events and reports the rest.
"""

from __future__ import annotations

from functools import reduce
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    DataType,
    DoubleType,
    IntegerType,
    LongType,
    MapType,
    StringType,
    StructField,
    StructType,
)

from aeron_py.telemetry.events import KIND_FIELDS, SCHEMA_VERSION

__all__ = [
    "ANALYSED_COLUMNS",
    "CORRUPT_COLUMN",
    "EVENT_SCHEMA",
    "STATUS_OK",
    "STATUSES",
    "analysed",
    "load_events",
    "with_status",
]

CORRUPT_COLUMN = "_corrupt_record"

LOSS_SCHEMA = StructType(
    [
        StructField("observation_count", LongType()),
        StructField("total_bytes_lost", LongType()),
        StructField("first_observation_ts", DoubleType()),
        StructField("last_observation_ts", DoubleType()),
        StructField("session_id", LongType()),
        StructField("stream_id", LongType()),
        StructField("channel", StringType()),
        StructField("source", StringType()),
    ]
)
ERROR_SCHEMA = StructType(
    [
        StructField("observation_count", LongType()),
        StructField("first_observation_ts", DoubleType()),
        StructField("last_observation_ts", DoubleType()),
        StructField("message", StringType()),
    ]
)

_TYPES: dict[str, DataType] = {
    "schema_version": IntegerType(),
    "ts": DoubleType(),
    "kind": StringType(),
    "source": StringType(),
    "server_id": StringType(),
    "initial_session": LongType(),
    "ip": StringType(),
    "port": LongType(),
    "key_valid": BooleanType(),
    "reason": StringType(),
    "session": LongType(),
    "owner_ip": StringType(),
    "data_port": LongType(),
    "control_port": LongType(),
    "wrong_ip": BooleanType(),
    "where": StringType(),
    "lifetime_s": DoubleType(),
    "msgs_in": LongType(),
    "msgs_out": LongType(),
    "bytes_in": LongType(),
    "bytes_out": LongType(),
    "rule": StringType(),
    "counters": MapType(StringType(), LongType()),
    "new_loss": ArrayType(LOSS_SCHEMA),
    "new_errors": ArrayType(ERROR_SCHEMA),
    "client_ip": StringType(),
    # Double, not long: a float written by a foreign producer must not corrupt the row.
    "rtt_us": DoubleType(),
    "seq": LongType(),
    "secure": BooleanType(),
}


def _event_schema() -> StructType:
    names = ["schema_version", "ts", "kind", "source", "server_id"]
    for fields in KIND_FIELDS.values():
        names += [f.name for f in fields if f.name not in names]
    missing = [n for n in names if n not in _TYPES]
    if missing:  # a field was added to the event schema but not here
        raise RuntimeError(f"no Spark type for event field(s): {', '.join(missing)}")
    return StructType(
        [StructField(n, _TYPES[n]) for n in names] + [StructField(CORRUPT_COLUMN, StringType())]
    )


EVENT_SCHEMA = _event_schema()

STATUS_OK = "ok"
#: Row classes counted in the report; only ``ok`` rows are analysed. ``incomplete``:
#: a known kind lacking a field the analysis uses (fields it does not use are not
#: checked, so Spark need not convert them: parsing is the job's biggest cost).
STATUSES = ("ok", "malformed", "unsupported_version", "unknown_kind", "incomplete")

#: The columns the job analyses (besides ``status`` and ``address``).
ANALYSED_COLUMNS = (
    "ts", "kind", "server_id", "key_valid", "reason", "wrong_ip", "where", "lifetime_s",
    "msgs_in", "msgs_out", "bytes_in", "bytes_out", "rtt_us", "counters", "new_loss", "new_errors",
)
ADDRESS_FIELDS = ("ip", "owner_ip", "client_ip")


def load_events(spark: SparkSession, events_dir: str | Path) -> DataFrame:
    """All ``*.jsonl`` lines of ``events_dir`` (not recursive) with :data:`EVENT_SCHEMA`."""
    uri = Path(events_dir).resolve().as_uri()
    return (
        spark.read.schema(EVENT_SCHEMA)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", CORRUPT_COLUMN)
        .option("pathGlobFilter", "*.jsonl")
        .option("ignoreMissingFiles", "true")  # retention may delete a file of a live directory
        .json(uri)
    )


def _complete(kind: str) -> Column:
    """True when every analysed, non-nullable field of ``kind`` is present."""
    used = set(ANALYSED_COLUMNS) | set(ADDRESS_FIELDS)
    required = [F.col(f.name).isNotNull() for f in KIND_FIELDS[kind] if not (f.nullable or f.optional) and f.name in used]
    return reduce(lambda a, b: a & b, required, F.lit(True))


def with_status(events: DataFrame) -> DataFrame:
    """Add a ``status`` column (one of :data:`STATUSES`) to loaded events."""
    kind = F.col("kind")
    kinds = list(KIND_FIELDS)
    complete = F.when(kind == kinds[0], _complete(kinds[0]))
    for name in kinds[1:]:
        complete = complete.when(kind == name, _complete(name))
    complete = complete.otherwise(F.lit(False))
    status = (
        F.when(F.col(CORRUPT_COLUMN).isNotNull(), "malformed")
        .when(kind.isNull() | F.col("ts").isNull() | F.col("schema_version").isNull(), "malformed")
        .when(F.col("schema_version") != SCHEMA_VERSION, "unsupported_version")
        .when(~kind.isin(kinds), "unknown_kind")
        .when(~complete, "incomplete")
        .otherwise(STATUS_OK)
    )
    return events.withColumn("status", status)


def analysed(events: DataFrame) -> DataFrame:
    """The narrow frame the job works on: ``status`` (see :func:`with_status`), the
    client ``address`` of the event (``ip``, ``owner_ip`` or ``client_ip``, whichever
    the kind has) and :data:`ANALYSED_COLUMNS`."""
    return with_status(events).select(
        "status", F.coalesce(*ADDRESS_FIELDS).alias("address"), *ANALYSED_COLUMNS
    )
