"""Aeron Archive from Python against Aeron's own Java archive client: record and replay throughput.

One embedded media driver (``MediaDriver()`` defaults: SHARED threading, backoff idle) in
this process, and Aeron's Java ``Archive`` (from the Java interop jar) attached to it. The
same two runs are made through aeron_py (this process) and through Aeron's Java client and
Java archive client (``java ... interop.Main archive-record|archive-replay``, a fresh JVM per
run, attached to the same driver and Archive), alternated, per message size:

- record: start recording an ``aeron:ipc`` stream (default term length), offer ``--messages``
  messages as fast as the publication accepts them (retrying back pressure: Python
  ``pub.offer`` with ``sched_yield``, Java ``offer`` with a backoff idle), timed from the first
  offer until the Archive's recording position reaches the last message;
- replay: replay one recording (the one aeron_py made, for both sides) from position 0
  onto an ``aeron:ipc`` stream, polling 256 fragments at a time (Python: ``poll(handler, 256)``
  with the default ``bytes`` payload), timed from the replay request to the last message.

Recordings are purged after each round (the Archive's files live in a temporary folder,
bounded by ``--messages``). Results: ``results/archive_throughput.json`` and ``.png``, a row of
``results/history/archive_throughput.csv``; the headline is aeron_py / Java per run and size.
"""
from __future__ import annotations

import argparse
import itertools
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a file: make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks import harness  # noqa: E402
from benchmarks.harness.children import BenchError  # noqa: E402

sys.path.insert(0, str(harness.REPO_DIR / "tests" / "interop"))
from run_java import JVM_FLAGS, build_jar, java_env  # noqa: E402

log = logging.getLogger("benchmarks.archive_throughput")

IPC = "aeron:ipc"
SIZES = (32, 1024)
WAIT_S = 120.0
_streams = itertools.count(5101)


def start_archive(driver_dir: str, archive_dir: Path, control_port: int) -> subprocess.Popen[bytes]:
    properties = {
        "aeron.dir": driver_dir, "aeron.archive.dir": str(archive_dir), "aeron.archive.id": "11",
        "aeron.archive.control.channel": f"aeron:udp?endpoint=127.0.0.1:{control_port}",
        "aeron.archive.replication.channel": "aeron:udp?endpoint=127.0.0.1:0",
        "aeron.archive.threading.mode": "SHARED",
        "aeron.archive.idle.strategy": "org.agrona.concurrent.BackoffIdleStrategy",
        "aeron.archive.file.sync.level": "0",
    }
    command = ["java", *JVM_FLAGS, *(f"-D{k}={v}" for k, v in properties.items()), "-cp", str(build_jar()),
               "io.aeron.archive.Archive"]
    return subprocess.Popen(command, env=java_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def connect(aeron: Any, control: str) -> Any:
    from aeron_py.archive import AeronArchive, ArchiveTimeoutError

    deadline = time.monotonic() + 60.0
    while True:
        try:
            return AeronArchive.connect(aeron, control_channel=control, response_channel="aeron:udp?endpoint=127.0.0.1:0",
                                        message_timeout=5.0)
        except ArchiveTimeoutError:
            if time.monotonic() > deadline:
                raise BenchError("the Java Archive did not answer within 60 s") from None


def py_record(aeron: Any, archive: Any, size: int, count: int) -> dict[str, Any]:
    stream = next(_streams)
    subscription_id = archive.start_recording(IPC, stream)
    pub = aeron.add_exclusive_publication(IPC, stream)
    payload = bytes(size)
    offer, yield_ = pub.offer, os.sched_yield
    started = time.perf_counter()
    position = 0
    for _ in range(count):
        while (position := offer(payload)) < 0:
            yield_()
    recording_id = None
    while recording_id is None:
        recording_id = archive.find_last_matching_recording(IPC, stream, pub.session_id)
    deadline = time.monotonic() + WAIT_S
    while archive.recording_position(recording_id) < position:
        if time.monotonic() > deadline:
            raise BenchError("the recording did not catch up")
        time.sleep(0.0005)
    seconds = time.perf_counter() - started
    archive.stop_recording(subscription_id)
    pub.close()
    return {"seconds": seconds, "msgs_per_s": count / seconds, "recording_id": recording_id}


def py_replay(archive: Any, recording_id: int, count: int) -> dict[str, Any]:
    from aeron_py.archive import FOLLOW

    received = [0]

    def handler(data: bytes, header: Any) -> None:
        received[0] += 1

    started = time.perf_counter()
    sub = archive.replay(recording_id, IPC, next(_streams), position=0, length=FOLLOW)
    deadline = time.monotonic() + WAIT_S
    poll, yield_ = sub.poll, os.sched_yield
    while received[0] < count:
        if poll(handler, 256) == 0:
            if time.monotonic() > deadline:
                raise BenchError("the replay did not deliver every message")
            yield_()
    seconds = time.perf_counter() - started
    sub.close()
    return {"seconds": seconds, "msgs_per_s": count / seconds}


def java(mode: str, driver_dir: str, control: str, *args: object) -> dict[str, Any]:
    command = ["java", *JVM_FLAGS, "-cp", str(build_jar()), "interop.Main", f"archive-{mode}", driver_dir, control,
               *(str(a) for a in args)]
    done = subprocess.run(command, env=java_env(), capture_output=True, text=True, timeout=WAIT_S + 60)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("RESULT ")), None)
    if done.returncode != 0 or line is None:
        raise BenchError(f"java {mode} failed ({done.returncode}): {done.stdout[-500:]}{done.stderr[-1500:]}")
    fields = dict(item.split("=", 1) for item in line.split()[2:])
    seconds, count = float(fields["seconds"]), int(fields["count"])
    return {"seconds": seconds, "msgs_per_s": count / seconds, "recording_id": int(fields["recording_id"])}


def one_round(index: int, aeron: Any, archive: Any, driver_dir: str, control: str,
              counts: dict[int, int]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for size in SIZES:
        count = counts[size]
        order = ("py", "java") if index % 2 == 0 else ("java", "py")
        made: dict[str, int] = {}
        for side in order:
            run = (py_record(aeron, archive, size, count) if side == "py"
                   else java("record", driver_dir, control, next(_streams), size, count))
            made[side] = run["recording_id"]
            out[f"record_{size}_{side}"] = run["msgs_per_s"]
        for side in order:
            run = (py_replay(archive, made["py"], count) if side == "py"
                   else java("replay", driver_dir, control, made["py"], next(_streams), count))
            out[f"replay_{size}_{side}"] = run["msgs_per_s"]
        for recording_id in made.values():
            archive.purge_recording(recording_id)
        log.info("round %d, %d B: %s", index, size, {k: round(v) for k, v in out.items() if f"_{size}_" in k})
    return out


def render(results: dict[str, Any], png: Path) -> None:
    plt = harness.pyplot()
    fig, axes = plt.subplots(1, 2, figsize=(10, 4))
    medians = results["medians"]
    for ax, kind in zip(axes, ("record", "replay")):
        width = 0.35
        for i, side in enumerate(("py", "java")):
            values = [medians.get(f"{kind}_{n}_{side}", 0) for n in SIZES]
            ax.bar([x + i * width for x in range(len(SIZES))], values, width,
                   label="aeron_py" if side == "py" else "Aeron Java client")
        ax.set_xticks([x + width / 2 for x in range(len(SIZES))], [f"{n} B" for n in SIZES])
        ax.set_ylabel("messages/s")
        ax.set_title(f"{kind} (median of rounds)")
        ax.legend()
    fig.suptitle("Archive throughput, aeron_py / Java: " + ", ".join(
        f"{k} {v}x" for k, v in results["ratios"].items() if v is not None), fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    plt.close(fig)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="1 round, fewer messages (~30 s)")
    p.add_argument("--rounds", type=int, default=3, help="rounds, each side first in turn (3)")
    p.add_argument("--messages-32", type=int, default=2_000_000, help="messages per run at 32 B (2000000)")
    p.add_argument("--messages-1k", type=int, default=500_000, help="messages per run at 1 KiB (500000)")
    p.add_argument("--out-dir", type=Path, default=harness.RESULTS_DIR)
    p.add_argument("--label", default="", help="label of the history row")
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.quick:
        args.rounds, args.messages_32, args.messages_1k = 1, 100_000, 20_000
    from aeron_py import Aeron, MediaDriver

    harness.install_signal_cleanup()
    counts = {32: args.messages_32, 1024: args.messages_1k}
    results: dict[str, Any] = {"quick": args.quick, "rounds": args.rounds, "messages": counts,
                               "machine": harness.machine_info(),
                               "defaults": "MediaDriver() defaults (SHARED, backoff idle); aeron:ipc default term "
                                           "length; Java Archive 1.51.0, SHARED, backoff idle, file sync off"}
    results["machine"]["loadavg_before"] = os.getloadavg()
    archive_dir = Path(tempfile.mkdtemp(prefix="aeron-py-archive-bench-"))
    control_port = harness.free_udp_ports(1)[0]
    control = f"aeron:udp?endpoint=127.0.0.1:{control_port}"
    rounds: list[dict[str, Any]] = []
    with MediaDriver() as driver:
        process = start_archive(driver.dir, archive_dir, control_port)
        try:
            with Aeron(driver=driver) as aeron, connect(aeron, control) as archive:
                for index in range(args.rounds):
                    rounds.append(one_round(index, aeron, archive, driver.dir, control, counts))
        finally:
            process.terminate()
            process.wait(timeout=30)
            shutil.rmtree(archive_dir, ignore_errors=True)
    keys = sorted(rounds[0])
    results["rounds_data"] = rounds
    results["medians"] = {k: round(statistics.median(r[k] for r in rounds)) for k in keys}
    results["ratios"] = {f"{kind}_{n}": harness.ratio(results["medians"][f"{kind}_{n}_py"],
                                                      results["medians"][f"{kind}_{n}_java"])
                         for kind in ("record", "replay") for n in SIZES}
    headline = {**harness.rounds_row(results), **{f"{k}_ratio": v for k, v in results["ratios"].items()},
                **{f"{k}_msgs_per_s": v for k, v in results["medians"].items()}}
    harness.save_run(args.out_dir, "archive_throughput", results, headline, render, args.label)
    print(json.dumps({"medians": results["medians"], "ratios": results["ratios"]}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
