"""The analytics job: telemetry directory in, tables, verdicts, blocklist and report out.

Outputs under ``out_dir`` (Parquet directories are single-file, overwritten):

==========================  =========================================================
``per_ip/``                 one row per source key (IPv4 address or IPv6 prefix):
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

The JSON is read exactly once: one Spark aggregation (:func:`.summary.summarise`)
turns every line into a summary (on the 10 M-event benchmark: 0.9 M count rows and 3.1 M
RTT histogram rows, a client's round trips spreading over many 2 % buckets), persisted
``MEMORY_AND_DISK`` (what does not fit in storage memory goes to local disk), which feeds
every table: line counts by status and kind and the time range, per address, per client
key and per minute counts, the driver snapshot rows, and the RTT histograms. No frame with
one row per event is kept. The four output steps (per-IP, time series, driver tables, RTT)
then run at once, one thread each (:func:`_run_concurrently`). RTT percentiles, per
client and overall, come from logarithmic histograms (:mod:`.rtt`): each is **within
0.995 % (relative) of the exact nearest-rank value** (``sqrt(1.02) - 1``; exact when the
samples of its bucket are all equal), stated in the report as ``rtt.percentile_error``;
sample counts, min, mean and max are exact. Measured on 10 M events: see ``benchmarks/results/analytics.json``.
Everything is DataFrame expressions (no Python UDFs); every table is written by Spark,
and the driver only ever holds bounded pages of them (see :mod:`.outputs`): at most
``JobConfig.max_verdicts`` verdicts are listed and merged into the blocklist (the report
says ``verdicts_truncated`` when there are more: the blocklist then gets the ones with
the most HELLOs).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark import InheritableThread, StorageLevel
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from aeron_py.analytics.blocklist_merge import iso_utc
from aeron_py.analytics.blocklist_merge import update_blocklist as update_blocklist
from aeron_py.analytics.outputs import driver_outputs, per_ip_outputs, rtt_outputs, timeseries_outputs
from aeron_py.analytics.report import ReportTables, render_report
from aeron_py.analytics.rules import AbuseRules
from aeron_py.analytics.schema import STATUS_OK, STATUSES, analysed, load_events
from aeron_py.analytics.summary import DRIVER, EVENT, summarise
from aeron_py.analytics.tables import build_per_ip as build_per_ip
from aeron_py.analytics.tables import build_rtt as build_rtt
from aeron_py.analytics.tables import build_timeseries as build_timeseries
from aeron_py.analytics.tables import per_address_from_summary
from aeron_py.duologue.blocklist import Blocklist

# Also importable from here, as before the split: update_blocklist (.blocklist_merge),
# build_per_ip, build_timeseries (.tables), build_rtt (.rtt).
__all__ = ["InputError", "JobConfig", "check_events_dir", "run_job", "summarise_events"]

log = logging.getLogger(__name__)

#: Default ``JobConfig.max_verdicts``: verdicts listed in the report and merged into the
#: blocklist (all of them are in ``verdicts/``).
MAX_VERDICTS = 10_000


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
    max_verdicts: int = MAX_VERDICTS  # verdicts listed and merged into the blocklist

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


@contextmanager
def _step(name: str) -> Iterator[None]:
    """Log how long one step of the job took."""
    started = time.monotonic()
    yield
    log.info("%s: %.1f s", name, time.monotonic() - started)


def _run_concurrently(steps: dict[str, Callable[[], dict[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Run the output steps at once, one thread each; their results by name.

    They only read the cached summary and write their own outputs and
    :class:`ReportTables` fields, so they are independent. Run one after the other, each
    left the executors idle while the driver planned its next small job (about half of
    the time after the scan, measured); together, one step's planning overlaps another's
    tasks. Each thread is a :class:`pyspark.InheritableThread` (the thread's Spark
    properties, e.g. its job group, come from the caller's). Every step runs to its end,
    then the first failure (in ``steps`` order) is raised.
    """
    results: dict[str, dict[str, Any]] = {}
    failures: dict[str, BaseException] = {}

    def run(name: str, step: Callable[[], dict[str, Any]]) -> None:
        started = time.monotonic()
        try:
            results[name] = step()
        except BaseException as exc:  # noqa: BLE001 - re-raised in the calling thread
            failures[name] = exc
        log.info("%s: %.1f s (concurrently)", name, time.monotonic() - started)

    threads = [InheritableThread(target=run, args=(name, step), name=f"analytics-{name}")
               for name, step in steps.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for name in steps:
        if name in failures:
            raise failures[name]
    return results


def summarise_events(spark: SparkSession, events_dir: Path) -> DataFrame:
    """The summary (:func:`.summary.summarise`) of every line of ``events_dir``, computed
    by one scan of the JSON on first use and then kept (``MEMORY_AND_DISK``), each
    partition ordered by ``role``; unpersist when done."""
    summary = summarise(analysed(load_events(spark, events_dir)))
    # Rows of one role side by side: every later step filters on the role, and Spark skips
    # the cached batches whose min/max role cannot match (the RTT rows, 78 % of the
    # summary at 10 M events, are never read by the event and driver steps).
    return summary.sortWithinPartitions("role").persist(StorageLevel.MEMORY_AND_DISK)


def _line_counts(summary: DataFrame) -> dict[str, Any]:
    """Lines by status, ok events by kind, first and last event time (from the summary's
    ``event`` and ``driver`` rows: one per line; a bounded result, as only ``ok`` rows
    have a kind and those are known kinds)."""
    rows = (
        summary.filter(F.col("role").isin(EVENT, DRIVER))
        .groupBy("status", "kind")
        .agg(F.sum("n").alias("n"), F.min("first_ts").alias("first"), F.max("last_ts").alias("last"))
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
    if config.max_verdicts < 1:
        raise ValueError(f"max_verdicts must be at least 1, got {config.max_verdicts}")
    out = config.out_dir
    out.mkdir(parents=True, exist_ok=True)
    tables = ReportTables()
    report: dict[str, Any] = {
        "schema_version": 1,
        "generated_at": iso_utc(now),
        "events_dir": str(config.events_dir),
        "spark_master": spark.sparkContext.master,
        "input": {"files": len(files), "bytes": sum(p.stat().st_size for p in files)},
    }
    summary = summarise_events(spark, config.events_dir)
    try:
        with _step("scan JSON once into the summary, count lines"):
            counts = _line_counts(summary)
        log.info("lines by status: %s", counts["lines"])
        first_ts, last_ts = counts.pop("first_ts"), counts.pop("last_ts")
        report.update(counts)
        snapshots = counts["events_by_kind"].get("driver_snapshot", 0)
        with _step("tables from the summary, four steps at once"):
            facts = _run_concurrently({
                # per_ip_outputs keeps its (per key) table while it pages it
                "per-IP summary and verdicts": lambda: per_ip_outputs(
                    per_address_from_summary(summary), out, config.rules, config.ipv6_prefix, config.max_verdicts,
                    tables),
                "time series": lambda: timeseries_outputs(summary, first_ts, out, tables),
                "driver counters, loss and errors": lambda: driver_outputs(summary, out, tables),
                "RTT percentiles": lambda: rtt_outputs(summary, out, tables),
            })
    finally:
        summary.unpersist()
    report["clients"] = facts["per-IP summary and verdicts"]
    series = facts["time series"]
    report["driver"] = {"snapshots": snapshots, **facts["driver counters, loss and errors"]}
    report["rtt"] = facts["RTT percentiles"]

    report["time_range"] = {
        "first_ts": first_ts, "last_ts": last_ts,
        "first": iso_utc(first_ts) if first_ts is not None else None,
        "last": iso_utc(last_ts) if last_ts is not None else None,
        **series,
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
