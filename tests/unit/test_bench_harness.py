"""The benchmarks' shared harness (``benchmarks/harness``): result files and child processes.

The benchmarks themselves are never run by the test suite; these check the pieces every
benchmark relies on, without Aeron.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from benchmarks.harness import BenchError, Child, pick, save_results
from benchmarks.harness.results import history_path, read_history

pytestmark = pytest.mark.timeout(60)


def test_each_run_overwrites_the_latest_and_appends_a_history_row(tmp_path: Path) -> None:
    path = tmp_path / "bench.json"
    save_results(path, {"run": 1, "samples": [1, 2, 3]}, {"p50_us": 1.5, "ok": True}, "quick")
    save_results(path, {"run": 2}, {"p50_us": 2.25, "rate_per_s": 10})

    assert json.loads(path.read_text()) == {"run": 2}
    assert history_path(path) == tmp_path / "history" / "bench.csv"
    rows = read_history(history_path(path))
    assert [r["label"] for r in rows] == ["quick", ""]
    assert [r["p50_us"] for r in rows] == ["1.5", "2.25"]
    # a column new in a later run is added, empty in the earlier rows
    assert [r["rate_per_s"] for r in rows] == ["", "10"]
    assert rows[0]["ok"] == "True" and all(r["date"] for r in rows)
    header = history_path(path).read_text().splitlines()[0]
    assert header.startswith("date,commit,label,")


def test_pick_reads_nested_values_or_none() -> None:
    doc = {"a": {"b": [{"c": 3}]}}
    assert pick(doc, "a", "b", 0, "c") == 3
    assert pick(doc, "a", "x") is None
    assert pick(doc, "a", "b", 5) is None


def test_a_child_answers_on_stdout_and_stops_when_its_stdin_closes(tmp_path: Path) -> None:
    code = ("import sys; print('READY', flush=True); "
            "print('line', sys.stdin.readline().strip(), flush=True); sys.stdin.read()")
    child = Child("echo-child", [sys.executable, "-c", code], {}, stdin=True, log_path=tmp_path / "child.log")
    try:
        index, line = child.next_line(0, lambda t: t == "READY", 30, "READY")
        assert (index, line.text) == (0, "READY")
        child.send("hello")
        assert child.next_line(index + 1, lambda t: t.startswith("line"), 30, "the echo")[1].text == "line hello"
    finally:
        assert child.stop(grace_s=30) == 0


def test_a_child_that_exits_first_is_an_error_not_a_hang(tmp_path: Path) -> None:
    child = Child("quits", [sys.executable, "-c", "print('bye')"], {}, log_path=tmp_path / "quits.log")
    with pytest.raises(BenchError, match="exited"):
        child.wait_for_line(lambda t: t == "READY", 30, "READY")
    child.stop()


def test_placement_puts_each_thread_on_the_cpu_its_mode_says() -> None:
    from benchmarks.harness.placement import cpu_for, is_driver_thread

    assert is_driver_thread("[conductor, sen") and not is_driver_thread("python")
    # crossed: each Python thread on the other process's driver's CPU
    assert cpu_for("crossed", "server", "[conductor, sen") == cpu_for("crossed", "load", "python") == 1
    assert cpu_for("crossed", "load", "[conductor, sen") == cpu_for("crossed", "server", "python") == 0
    # own: each process on one CPU
    assert cpu_for("own", "server", "[conductor, sen") == cpu_for("own", "server", "python") == 1
    assert cpu_for("own", "load", "[conductor, sen") == cpu_for("own", "load", "python") == 0


def test_placement_refuses_an_unknown_mode_and_pins_nothing_for_kernel() -> None:
    import os

    from benchmarks.harness.placement import Placement

    with pytest.raises(ValueError, match="crossed"):
        Placement("diagonal", {"server": os.getpid()})
    before = os.sched_getaffinity(0)
    with Placement("kernel", {"server": os.getpid()}) as placement:
        assert placement.mode == "kernel"
    assert os.sched_getaffinity(0) == before
