"""The ``foreachBatch`` sinks of the streaming defence: blocklist merge and batch counts.

Both are idempotent per batch id, which is what makes the stream exactly-once end to
end (Spark re-runs the last uncommitted batch after a crash, with the same id and the
same input):

* :class:`BlocklistSink` merges a batch's ``block`` verdicts into the blocklist file
  (temporary file + rename, via :func:`aeron_py.analytics.job.update_blocklist`). A
  ledger file records the last batch id applied and, before the merge, the wall-clock
  ``now`` the batch uses. A batch id at or below the last applied one changes nothing;
  a batch that crashed between the merge and the ledger update is re-merged with the
  same ``now``, which yields the same entries.
* :class:`CountSink` writes ``batch-<id>.json`` (lines by status, events by kind) per
  batch; a replayed batch rewrites the same file with the same numbers, so the sum over
  the files is the number of lines the stream read, each exactly once.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyspark import StorageLevel
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from aeron_py.analytics.job import update_blocklist
from aeron_py.analytics.rules import AbuseRules, apply_rules
from aeron_py.analytics.schema import STATUS_OK
from aeron_py.duologue.blocklist import Blocklist, parse_network

__all__ = [
    "BatchCounts",
    "BlocklistSink",
    "CountSink",
    "LEDGER_NAME",
    "MAX_FLAGGED_PER_BATCH",
    "read_batch_counts",
    "write_json_atomically",
]

log = logging.getLogger(__name__)

LEDGER_NAME = "blocklist-ledger.json"
#: A batch merges at most this many keys into the blocklist (the rest wait for the next
#: batches): bounds what is collected to the driver.
MAX_FLAGGED_PER_BATCH = 10_000
#: At most this many flagged (window, key) rows are collected per batch.
MAX_WINDOW_ROWS_PER_BATCH = 100_000


def write_json_atomically(path: Path, data: dict[str, Any]) -> None:
    """Replace ``path`` with ``data`` as JSON (temporary file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except ValueError as exc:
        raise ValueError(f"{path}: not valid JSON ({exc}); remove it to start over") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a JSON object")
    return data


def with_rates(per_window_key: DataFrame) -> DataFrame:
    """Add the derived columns :func:`apply_rules` needs (as the batch job defines them)."""
    return per_window_key.withColumn(
        "hellos_without_connect", F.greatest(F.col("hellos") - F.col("connects"), F.lit(0))
    ).withColumn(
        "reject_rate",
        F.when(F.col("hellos") > 0, F.col("rejects") / F.col("hellos")).otherwise(F.lit(None).cast("double")),
    )


@dataclass
class BlocklistSink:
    """``foreachBatch`` function: merge the batch's ``block`` verdicts into ``blocklist``.

    ``batch`` rows are per (event-time window, source key) counts: ``key``, ``hellos``,
    ``rejects``, ``connects``, ``wrong_ip_connects``, ``bad_messages``.
    """

    blocklist: Path
    ledger: Path
    rules: AbuseRules = field(default_factory=AbuseRules)
    ttl: float = 3600.0
    clock: Callable[[], float] = time.time
    on_merge: Callable[[int, dict[str, Any]], None] | None = None

    def last_applied(self) -> int:
        """The last batch id merged into the blocklist (-1: none)."""
        return int(_read_json(self.ledger).get("last_batch", -1))

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        # Always run the batch to the end, even when it is a replay to skip: the window
        # state of this batch is committed only when the stateful plan is fully executed
        # (Spark fails the query if a batch leaves a state store uncommitted).
        batch.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            rows = batch.count()
            if batch_id <= self.last_applied():
                log.info("batch %d already merged into the blocklist: skipped", batch_id)
                return
            self.merge(batch_id, self._flagged(batch) if rows else [])
        finally:
            batch.unpersist()

    def merge(self, batch_id: int, flagged: list[dict[str, Any]]) -> dict[str, Any] | None:
        """Merge ``flagged`` rows (``key``, ``evidence``) as batch ``batch_id``, once.

        Returns the merge statistics, or None when the batch was merged before.
        """
        ledger = _read_json(self.ledger)
        if batch_id <= int(ledger.get("last_batch", -1)):
            log.info("batch %d already merged into the blocklist: skipped", batch_id)
            return None
        pending = ledger.get("pending") or {}
        if pending.get("batch") == batch_id:
            now = float(pending["now"])  # a replay after a crash mid-merge: same inputs, same entries
        else:
            now = self.clock()
            write_json_atomically(self.ledger, {**ledger, "pending": {"batch": batch_id, "now": now}})
        stats: dict[str, Any] = {"added": 0, "extended": 0, "flagged": len(flagged)}
        flagged = self._not_fresh(flagged, now)
        if flagged:
            stats |= update_blocklist(self.blocklist, flagged, now, self.ttl)
            log.warning(
                "batch %d: %d key(s) flagged (%s): blocklist %s +%d new, %d extended",
                batch_id, len(flagged), ", ".join(r["key"] for r in flagged[:5]), self.blocklist,
                stats["added"], stats["extended"],
            )
        write_json_atomically(self.ledger, {"last_batch": batch_id, "last_now": now})
        if self.on_merge is not None:
            self.on_merge(batch_id, stats)
        return stats

    def _not_fresh(self, flagged: list[dict[str, Any]], now: float) -> list[dict[str, Any]]:
        """The rows whose key is not listed already with at least half its lifetime left.

        A key flagged again and again while its flood is still being counted does not
        rewrite the server's file every batch (each rewrite is a reload there).
        """
        if not flagged or not self.blocklist.exists():
            return flagged
        horizon = None if self.ttl == 0 else now + self.ttl / 2
        fresh = set()
        for entry in Blocklist.load(self.blocklist):
            if entry.expires is None or (horizon is not None and entry.expires > horizon):
                fresh.add(entry.network)
        kept = []
        for row in flagged:
            try:
                network = parse_network(row["key"])
            except ValueError:
                kept.append(row)  # update_blocklist reports it
                continue
            if network not in fresh:
                kept.append(row)
        return kept

    def _flagged(self, batch: DataFrame) -> list[dict[str, Any]]:
        """One row per flagged key (its window with the most HELLOs), at most the cap.

        One Spark job, no shuffle: a batch holds at most a few windows per updated key,
        so the per-key choice is made here, over a bounded number of rows.
        """
        judged = (
            apply_rules(with_rates(batch), self.rules)
            .filter(F.col("verdict") == "block")
            .select("key", "evidence", "rules_fired", "hellos")
            .limit(MAX_WINDOW_ROWS_PER_BATCH)
        )
        worst: dict[str, dict[str, Any]] = {}
        for row in judged.collect():
            data = row.asDict(recursive=True)
            kept = worst.get(data["key"])
            if kept is None or data["hellos"] > kept["hellos"]:
                worst[data["key"]] = data
        rows = sorted(worst.values(), key=lambda r: (-r["hellos"], r["key"]))
        if len(rows) > MAX_FLAGGED_PER_BATCH:
            log.warning("more than %d keys flagged in one batch: the rest wait for the next batches",
                        MAX_FLAGGED_PER_BATCH)
            rows = rows[:MAX_FLAGGED_PER_BATCH]
        return rows


@dataclass
class BatchCounts:
    """Totals over the per-batch count files."""

    batches: int = 0
    lines: int = 0
    ok: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    by_kind: dict[str, int] = field(default_factory=dict)
    last_batch: int = -1


def read_batch_counts(directory: Path) -> BatchCounts:
    """Sum the ``batch-*.json`` files :class:`CountSink` wrote into ``directory``."""
    totals = BatchCounts()
    for path in sorted(Path(directory).glob("batch-*.json")):
        data = _read_json(path)
        totals.batches += 1
        totals.lines += int(data["lines"])
        totals.last_batch = max(totals.last_batch, int(data["batch_id"]))
        for name, n in data["by_status"].items():
            totals.by_status[name] = totals.by_status.get(name, 0) + int(n)
        for name, n in data["by_kind"].items():
            totals.by_kind[name] = totals.by_kind.get(name, 0) + int(n)
    totals.ok = totals.by_status.get(STATUS_OK, 0)
    return totals


@dataclass
class CountSink:
    """``foreachBatch`` function: write the batch's line counts to ``directory/batch-<id>.json``.

    ``batch`` rows carry ``status`` and ``kind`` (see :func:`aeron_py.analytics.schema.analysed`).
    """

    directory: Path
    clock: Callable[[], float] = time.time

    def __call__(self, batch: DataFrame, batch_id: int) -> None:
        kind = F.when(F.col("status") == STATUS_OK, F.col("kind"))  # bounded: known kinds only
        rows = batch.groupBy("status", kind.alias("kind")).count().collect()
        by_status: dict[str, int] = {}
        by_kind: dict[str, int] = {}
        for row in rows:
            by_status[row["status"]] = by_status.get(row["status"], 0) + int(row["count"])
            if row["kind"] is not None:
                by_kind[row["kind"]] = int(row["count"])
        path = self.directory / f"batch-{batch_id:09d}.json"
        previous = _read_json(path)
        record = {"batch_id": batch_id, "lines": sum(by_status.values()), "by_status": by_status,
                  "by_kind": by_kind, "written_at": previous.get("written_at", self.clock())}
        if previous and {k: v for k, v in previous.items() if k != "written_at"} != {
            k: v for k, v in record.items() if k != "written_at"
        }:
            log.error("batch %d replayed with different counts: %s then %s", batch_id, previous, record)
        write_json_atomically(path, record)
        log.info("batch %d: %d lines (%s)", batch_id, record["lines"], by_status)
