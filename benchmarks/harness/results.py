"""Results of a run: the latest in full, and one history row per run (stdlib only;
matplotlib is imported only by :func:`pyplot`).

Layout, for a benchmark writing ``results/<bench>.json``:

- ``results/<bench>.json``: the latest run, every number (overwritten by each run);
- ``results/<bench>.png``: its chart (overwritten too);
- ``results/history/<bench>.csv``: one row per run, oldest first: ``date``, ``commit``
  (of the tree that ran it; ``-dirty`` with uncommitted changes), ``label`` and the
  benchmark's headline numbers (appended by each run; a new column is added to the
  earlier rows as empty).
"""
from __future__ import annotations

import csv
import io
import json
import logging
import subprocess
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .paths import REPO_DIR

log = logging.getLogger("benchmarks.harness.results")

Scalar = str | int | float | bool | None
FIXED_COLUMNS = ("date", "commit", "label")


def tree_commit(repo: Path = REPO_DIR) -> str:
    """``git describe --always --dirty`` of ``repo`` ("" where git cannot tell)."""
    try:
        done = subprocess.run(["git", "-C", str(repo), "describe", "--always", "--dirty", "--abbrev=7"],
                              capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


def history_path(json_path: Path) -> Path:
    """``<dir>/history/<stem>.csv`` next to ``<dir>/<stem>.json``."""
    return json_path.parent / "history" / f"{json_path.stem}.csv"


def read_history(path: Path) -> list[dict[str, str]]:
    """The rows of a history CSV, oldest first ([] if there is none)."""
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _cell(value: Scalar) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.10g}"
    return str(value)


def write_history(path: Path, rows: list[Mapping[str, Scalar]]) -> None:
    """Write ``rows`` (columns: the fixed ones, then every other key in first-seen order)."""
    columns = list(FIXED_COLUMNS)
    for row in rows:
        columns += [k for k in row if k not in columns]
    out = io.StringIO()
    writer = csv.DictWriter(out, columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _cell(row.get(k)) for k in columns})
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(out.getvalue(), encoding="utf-8")


def append_history(json_path: Path, headline: Mapping[str, Scalar], label: str = "") -> dict[str, Scalar]:
    """Add this run's row (now, this tree's commit, ``label``, ``headline``) to the history."""
    row: dict[str, Scalar] = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "commit": tree_commit(),
                              "label": label, **headline}
    path = history_path(json_path)
    write_history(path, [*read_history(path), row])
    return row


def save_results(json_path: Path, results: Mapping[str, Any], headline: Mapping[str, Scalar],
                 label: str = "") -> None:
    """Overwrite ``json_path`` with ``results`` and append ``headline`` to its history."""
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    append_history(json_path, headline, label)
    log.info("wrote %s and a row of %s", json_path, history_path(json_path))


def save_run(out_dir: Path, name: str, results: Mapping[str, Any], headline: Mapping[str, Scalar],
             render: Callable[[Any, Path], None], label: str = "") -> tuple[Path, Path]:
    """:func:`save_results` to ``out_dir/<name>.json``, then ``render(results, out_dir/<name>.png)``;
    returns both paths."""
    json_path, png_path = out_dir / f"{name}.json", out_dir / f"{name}.png"
    save_results(json_path, results, headline, label)
    render(results, png_path)
    return json_path, png_path


def rounds_row(results: Mapping[str, Any]) -> dict[str, Any]:
    """The first history columns of a run of interleaved rounds on the shared driver."""
    return {"quick": results.get("quick"), "rounds": results.get("rounds"),
            "load_1min_before": pick(results, "machine", "loadavg_before", 0)}


def pick(d: Any, *path: str | int) -> Any:
    """``d[path[0]][path[1]]...`` or None where a key is missing (for headline rows)."""
    for key in path:
        try:
            d = d[key]
        except (KeyError, IndexError, TypeError):
            return None
    return d


def pyplot() -> Any:
    """``matplotlib.pyplot`` on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_grouped_bars(fig: Any, ax: Any, out: Path, groups: Sequence[str], ratios: Sequence[tuple[float, str]], *,
                      ylabel: str, title: str, legend_size: int = 8) -> None:
    """Finishes a chart of bars grouped by ``groups``: each group's ratio text (at its height,
    its label), the axis labels, the legend; writes ``out`` and closes the figure."""
    for x, (height, text) in enumerate(ratios):
        ax.annotate(text, (x, height), ha="center", va="bottom", fontsize=8)
    ax.set_xticks(list(range(len(groups))), list(groups), fontsize=8)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=legend_size)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    pyplot().close(fig)
