"""The benchmarks' shared harness.

- :mod:`.children`: child processes (tracked, stdout lines with arrival times, bounded
  stops, SIGTERM to orphans), ports, stream ids, signal cleanup;
- :mod:`.stats`: percentiles, rounds, medians, ratios;
- :mod:`.machine`: machine info, load averages, package versions;
- :mod:`.probes`: CPU, memory and driver-directory probes of running processes, py-spy/perf;
- :mod:`.results`: the latest run's JSON, the history CSV, matplotlib on Agg;
- :mod:`.driver`: the one shared ``aeronmd`` of a run (imports aeron_py, so it is not
  re-exported here: a pyaeron process imports this package without loading aeron_py).

Everything here but :mod:`.driver` is stdlib only.
"""
from .children import (BenchError, Child, Line, aeron_free_env, free_udp_ports, install_signal_cleanup,
                       next_stream_id, orphan_guard, python_child_argv, stop_all_children, StopFlag, wait_until)
from .machine import dist_version, echo_machine_info, loadavg, machine_info
from .paths import BENCH_DIR, LOG_DIR, REPO_DIR, RESULTS_DIR
from .results import pick, pyplot, rounds_row, save_grouped_bars, save_results, save_run
from .stats import median_by_key, min_by_key, percentiles_us, ratio, run_rounds, summarize

# Idle modes compared: "spin" = Aeron's busy-spin (the stock C samples' hard-coded idle),
# "yield" = Aeron's yielding idle (C samples rebuilt with the remap, see c_tools).
IDLE_MODES: tuple[str, ...] = ("spin", "yield")

__all__ = [
    "BENCH_DIR", "IDLE_MODES", "LOG_DIR", "REPO_DIR", "RESULTS_DIR", "BenchError", "Child", "Line", "StopFlag",
    "aeron_free_env", "dist_version", "echo_machine_info", "free_udp_ports", "install_signal_cleanup", "loadavg",
    "machine_info", "median_by_key", "min_by_key", "next_stream_id", "orphan_guard", "percentiles_us", "pick",
    "pyplot", "python_child_argv", "ratio", "rounds_row", "run_rounds", "save_grouped_bars", "save_results", "save_run",
    "stop_all_children", "summarize", "wait_until",
]
