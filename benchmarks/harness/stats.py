"""Statistics of samples and rounds (stdlib only)."""
from __future__ import annotations

import logging
import math
import statistics
from collections.abc import Callable, Sequence
from typing import Any

from .children import BenchError

log = logging.getLogger("benchmarks.harness")


def nearest_rank(ordered: Sequence[float], q: float) -> float:
    """The nearest-rank ``q``-th percentile (0-100) of already sorted values."""
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))]


def percentiles_us(samples_ns: Sequence[int]) -> dict[str, float]:
    """p50/p90/p99/p99.9/max/mean (microseconds) of RTT samples, nearest-rank."""
    if not samples_ns:
        raise BenchError("no RTT samples to summarise")
    ordered = sorted(samples_ns)
    n = len(ordered)

    def rank(p: float) -> float:
        return ordered[min(n - 1, max(0, math.ceil(p * n) - 1))] / 1000.0

    return {
        "p50": rank(0.50), "p90": rank(0.90), "p99": rank(0.99), "p99_9": rank(0.999),
        "max": ordered[-1] / 1000.0, "mean": sum(ordered) / n / 1000.0, "count": float(n),
    }


def summarize(values: Sequence[float], *, scale: float = 1.0, digits: int = 1,
              quantiles: Sequence[float] = (50, 90, 99, 99.9),
              percentile: Callable[[Sequence[float], float], float] = nearest_rank) -> dict[str, float]:
    """Percentiles (keys ``p50``, ``p99_9``...), mean, max and count of ``values`` times
    ``scale``, rounded to ``digits``; NaNs are left out."""
    ordered = sorted(v * scale for v in values if not math.isnan(v))
    if not ordered:
        return {"count": 0}
    out: dict[str, float] = {f"p{q:g}".replace(".", "_"): round(percentile(ordered, q), digits) for q in quantiles}
    out.update(mean=round(sum(ordered) / len(ordered), digits), max=round(ordered[-1], digits), count=len(ordered))
    return out


def run_rounds(
    label: str, rounds: int, runners: dict[str, Callable[[], dict[str, Any]]], before: Callable[[], None]
) -> dict[str, list[dict[str, Any]]]:
    """Run every implementation ``rounds`` times, alternating them; a failed run is recorded
    as ``{"error": ...}`` instead of aborting the whole benchmark."""
    out: dict[str, list[dict[str, Any]]] = {impl: [] for impl in runners}
    for r in range(rounds):
        for impl, run in runners.items():
            log.info("%s: %s round %d/%d", label, impl, r + 1, rounds)
            try:
                before()
                result = run()
            except BenchError as exc:
                log.error("%s: %s round %d failed: %s", label, impl, r + 1, exc)
                result = {"error": str(exc)}
            out[impl].append(result)
    return out


def median_by_key(dicts: Sequence[dict[str, float]]) -> dict[str, float] | None:
    """Per-key median over several summaries with the same keys (None if there are none)."""
    if not dicts:
        return None
    return {k: statistics.median(d[k] for d in dicts) for k in dicts[0]}


def min_by_key(dicts: Sequence[dict[str, float]]) -> dict[str, float] | None:
    """Per-key minimum (the least disturbed round, for latencies) or None if there are none."""
    if not dicts:
        return None
    return {k: min(d[k] for d in dicts) for k in dicts[0]}


def ratio(a: float | None, b: float | None) -> float | None:
    """``a / b`` rounded, or None when either side is missing or ``b`` is zero."""
    if a is None or b is None or b == 0:
        return None
    return round(a / b, 3)
