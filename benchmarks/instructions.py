"""Instructions per call of the receive paths, aeron_py against pyaeron (callgrind).

    benchmarks/peer_venv.sh
    benchmarks/.build/peer-venv/bin/python benchmarks/instructions.py

Timings on this VM move by several ns per call from process to process; instruction counts
do not. Each library runs, in a child under ``valgrind --tool=callgrind``, one path of its
natural API twice, with N = 10,000 and N = 30,000 operations, on the shared ``aeronmd`` of
the other peer benchmarks (SHARED, backoff; one IPC publication and one subscription on a
stream of its own). Everything but the N operations is the same in both runs, so the
difference of the two totals divided by 20,000 is the cost of one operation:

* ``empty_poll``: ``sub.poll(handler, 10)`` with nothing to read;
* ``poll``: one message of ``sub.poll(handler, 256)`` draining 32 B messages written
  before (aeron_py's handler gets ``bytes``, pyaeron's its ``BufferView``);
* ``poll_zero_copy``: the same with ``zero_copy=True`` (pyaeron: ``poll``, already a view).

The handler is ``seen[0] += 1``, a closure, as in ``peer_paths.py``. Each count is split in
two: the instructions in the library's own extension module (the binding and the Aeron C
client it links) and the rest (CPython running the loop and the handler, libc). The split is
what bounds any ratio: a binding whose own share were zero would still run the rest.
Writes ``results/instructions.json`` and ``instructions.png``.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: this tree's benchmarks, the venv's aeron_py
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks import harness  # noqa: E402
from benchmarks.harness.driver import SharedDriver  # noqa: E402

log = logging.getLogger("benchmarks.instructions")

LIBRARIES = ("aeron_py", "pyaeron")
PATHS = ("empty_poll", "poll", "poll_zero_copy")
COUNTS = (10_000, 30_000)
FILL = 40_000  # messages written before a drain, whatever N is
CHILD_TIMEOUT_S = 600.0


def child(library: str, path: str, n: int, aeron_dir: str) -> None:
    """The measured process: set up, then N operations of `path`."""
    from benchmarks.peer_roles import AeronPy, PyAeron

    lib = AeronPy(aeron_dir, "spin") if library == "aeron_py" else PyAeron(aeron_dir, "spin")
    stream = 20_000 + os.getpid() % 40_000  # its own: no image left by an earlier child
    sub = lib.subscription("aeron:ipc", stream)
    pub = lib.publication("aeron:ipc", stream)
    msg = b"x" * 32
    seen = [0]

    def count(data: Any, header: Any) -> None:
        seen[0] += 1

    if path == "empty_poll":
        for _ in range(n):
            sub.poll(count, 10)
        return
    sent, offer, deadline = 0, pub.offer, time.monotonic() + 30
    while sent < FILL:
        result = offer(msg)
        if (result > 0) if library == "aeron_py" else bool(result):
            sent += 1
        elif time.monotonic() > deadline:
            raise harness.BenchError(f"fill: {sent} of {FILL} messages offered in 30 s")
    if path == "poll_zero_copy" and library == "aeron_py":
        while seen[0] < n:
            sub.poll(count, 256, zero_copy=True)
    else:
        while seen[0] < n:
            sub.poll(count, 256)


def _extension(library: str) -> str:
    return "_aeron.cpython" if library == "aeron_py" else "_pyaeron.cpython"


def _run(library: str, path: str, n: int, aeron_dir: str, work: Path) -> tuple[int, int]:
    """(total instructions, instructions in the library's extension) of one child."""
    out = work / f"{library}.{path}.{n}.callgrind"
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, str(Path(__file__).resolve()),
           "--child", library, path, str(n), aeron_dir]
    env = dict(os.environ, PYTHONHASHSEED="0")  # the same dict layouts in both runs
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S, env=env, cwd="/")
    if proc.returncode != 0:
        raise harness.BenchError(f"{library} {path} N={n}: exit {proc.returncode}: {proc.stderr[-2000:]}")
    annotate = subprocess.run(["callgrind_annotate", "--threshold=100", str(out)], capture_output=True, text=True,
                              check=True).stdout
    total = own = 0
    for line in annotate.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([^)]*\)\s+(.*)", line)
        if not m:
            continue
        count = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in m.group(2):
            total = count
        elif _extension(library) in m.group(2):
            own += count
    return total, own


def measure(aeron_dir: str) -> dict[str, Any]:
    per_op: dict[str, dict[str, dict[str, float]]] = {lib: {} for lib in LIBRARIES}
    with tempfile.TemporaryDirectory(prefix="aeron-py-callgrind-") as tmp:
        for path in PATHS:
            for library in LIBRARIES:
                (ta, oa), (tb, ob) = (_run(library, path, n, aeron_dir, Path(tmp)) for n in COUNTS)
                span = COUNTS[1] - COUNTS[0]
                total, own = (tb - ta) / span, (ob - oa) / span
                per_op[library][path] = {"total": round(total, 1), "extension": round(own, 1),
                                         "rest": round(total - own, 1)}
                log.info("%s %s: %.1f instructions per op (%.1f in the extension)", library, path, total, own)
    ratio = {p: round(per_op["pyaeron"][p]["total"] / per_op["aeron_py"][p]["total"], 3) for p in PATHS}
    # what pyaeron would be against a binding whose own share were zero
    ceiling = {p: round(per_op["pyaeron"][p]["total"] / per_op["aeron_py"][p]["rest"], 3) for p in PATHS}
    return {"instructions_per_op": per_op, "pyaeron_over_aeron_py": ratio,
            "pyaeron_over_aeron_py_rest_only": ceiling}


def render(results: dict[str, Any], out: Path) -> None:
    plt = harness.pyplot()
    per_op = results["instructions_per_op"]
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, library in enumerate(LIBRARIES):
        xs = [x + (i - 0.5) * 0.4 for x in range(len(PATHS))]
        rest = [per_op[library][p]["rest"] for p in PATHS]
        own = [per_op[library][p]["extension"] for p in PATHS]
        ax.bar(xs, rest, 0.4, label=f"{library}: CPython and libc", alpha=0.55 if i else 0.9)
        ax.bar(xs, own, 0.4, bottom=rest, label=f"{library}: its extension (binding + Aeron client)",
               alpha=0.55 if i else 0.9)
    ratios = [(per_op["pyaeron"][p]["total"], f"{results['pyaeron_over_aeron_py'][p]:.2f}x") for p in PATHS]
    harness.save_grouped_bars(fig, ax, out, PATHS, ratios, ylabel="instructions per operation (callgrind)",
                              title=f"Receive paths, aeron_py (left) vs pyaeron (right), Python "
                                    f"{results['machine']['python']}", legend_size=7)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        child(argv[1], argv[2], int(argv[3]), argv[4])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     epilog="Needs valgrind and the peer venv (benchmarks/peer_venv.sh). Writes "
                                            "results/instructions.json and instructions.png.")
    parser.add_argument("--out-dir", type=Path, default=harness.RESULTS_DIR)
    args = parser.parse_args(argv)
    for tool in ("valgrind", "callgrind_annotate"):
        if shutil.which(tool) is None:
            parser.error(f"{tool} not found: install valgrind (it provides both)")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    from benchmarks import c_tools

    harness.install_signal_cleanup()
    started = time.monotonic()
    tools = c_tools.build_c_tools()
    with SharedDriver(tools.aeronmd, harness.LOG_DIR) as driver:
        results: dict[str, Any] = {"method": __doc__, "counts": COUNTS, "machine": harness.machine_info(),
                                   **measure(driver.dir)}
    results["duration_s"] = round(time.monotonic() - started, 1)
    headline = {f"{lib}_{p}": results["instructions_per_op"][lib][p]["total"] for lib in LIBRARIES
                for p in PATHS}
    json_path, png_path = harness.save_run(args.out_dir, "instructions", results, headline, render)
    print(json.dumps({k: results[k] for k in ("instructions_per_op", "pyaeron_over_aeron_py")}, indent=1))
    print(f"wrote {json_path} and {png_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
