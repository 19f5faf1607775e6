"""Merging the job's verdicts into a blocklist file (shared by the batch and streaming jobs)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from aeron_py.duologue.blocklist import Blocklist, Entry, parse_network

__all__ = ["iso_utc", "update_blocklist"]


def iso_utc(ts: float) -> str:
    """``ts`` (epoch seconds) as ``YYYY-MM-DDTHH:MM:SSZ``."""
    return datetime.fromtimestamp(ts, tz=timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


def update_blocklist(path: Path, flagged: list[dict[str, Any]], now: float, ttl: float) -> dict[str, Any]:
    """Merge flagged keys into the blocklist at ``path`` (atomically rewritten).

    Entries expired at ``now`` are dropped; a flagged key already listed keeps the
    later expiry; new keys expire at ``now + ttl`` (never if ``ttl`` is 0).
    """
    existing = Blocklist.load(path) if path.exists() else Blocklist()
    merged: dict[Any, Entry] = {}
    for entry in existing:
        if entry.active(now):
            kept = merged.get(entry.network)
            if kept is None or _later(entry, kept):
                merged[entry.network] = entry
    stats: dict[str, Any] = {
        "path": str(path),
        "expired_dropped": len(existing) - sum(1 for e in existing if e.active(now)),
        "added": 0,
        "extended": 0,
        "skipped": [],
    }
    expires = None if ttl == 0 else now + ttl
    for row in flagged:
        try:
            network = parse_network(row["key"])
        except ValueError as exc:
            stats["skipped"].append(f"{row['key']}: {exc}")
            continue
        reason = f"analytics {iso_utc(now)}: " + "; ".join(row["evidence"])
        entry = Entry(network, expires, reason)
        old = merged.get(network)
        if old is None:
            stats["added"] += 1
        elif _later(entry, old):
            stats["extended"] += 1
        else:
            continue
        merged[network] = entry
    Blocklist.write(path, merged.values())
    stats["entries"] = len(merged)
    return stats


def _later(a: Entry, b: Entry) -> bool:
    """True if ``a`` stays in force longer than ``b``."""
    if b.expires is None:
        return False
    return a.expires is None or a.expires > b.expires
