"""Where the benchmarks live, log and write (stdlib only)."""
from __future__ import annotations

from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent.parent
REPO_DIR = BENCH_DIR.parent
LOG_DIR = BENCH_DIR / ".build" / "logs"
RESULTS_DIR = BENCH_DIR / "results"
