"""End to end, all real, the loop closed by itself: a real echo_server writing telemetry,
the streaming job (``analytics --follow``, local[2]) following it, legitimate clients from
127.0.0.2 and .3, then a HELLO flood from 127.0.0.9. Without anyone running a batch job
or sending SIGHUP, the job blocklists 127.0.0.9, the server notices the new blocklist
file (auto-reload) and refuses 127.0.0.9 while serving .2 and .3. Then the job is killed
(SIGKILL, Python and JVM) and restarted from its checkpoint: its per-batch counts add up
to exactly the events the server wrote."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aeron_py.duologue.blocklist import Blocklist
from aeron_py.echo.load.flood import HelloFlood
from aeron_py.telemetry import read_events
from conftest import free_udp_port, wait_until
from processes import ChildProcess, run_process

pytestmark = [pytest.mark.timeout(900), pytest.mark.integration, pytest.mark.spark]

HOSTILE, LEGIT = "127.0.0.9", ("127.0.0.2", "127.0.0.3")
REFUSAL_DEADLINE_S = 120.0  # generous: a loaded 2-core CI machine (the benchmark measures the real figure)


def echo_client(cwd: Path, port: str, control: str, interface: str, timeout: int = 20) -> subprocess.CompletedProcess[str]:
    return run_process([sys.executable, "-m", "aeron_py.echo_client", "127.0.0.1", port, control,
                        "--count", "2", "--timeout", str(timeout), "--interface", interface],
                       capture_output=True, text=True, timeout=90, cwd=cwd)


class StreamJob:
    """``analytics --follow`` in its own process group, output to a log file."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.log = log
        with open(log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "aeron_py.analytics", *args],
                                         stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def kill_group(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        wait_until(lambda: not _group_alive(self.proc.pid), 30, "the killed job's JVM to exit", step=0.2)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def _lines_counted(counts: Path) -> tuple[int, int]:
    from aeron_py.analytics.stream_sinks import read_batch_counts

    totals = read_batch_counts(counts)
    return totals.lines, totals.ok


def test_stream_blocks_a_flood_by_itself_and_counts_every_event_once(tmp_path: Path) -> None:
    events, blocklist, checkpoint = tmp_path / "events", tmp_path / "blocklist.txt", tmp_path / "checkpoint"
    counts = checkpoint / "batch_counts"
    blocklist.write_text("# managed by aeron_py.analytics --follow\n")
    port, control, base = (str(free_udp_port()) for _ in range(3))
    server_cmd = [sys.executable, "-m", "aeron_py.echo_server", str(tmp_path / "server"), "127.0.0.1", port,
                  control, base, "16", "--events", str(events), "--blocklist", str(blocklist),
                  "--events-max-files", "10000", "--snapshot-interval", "2", "--expiry", "2"]
    job_args = [str(events), "--follow", "--blocklist", str(blocklist), "--checkpoint", str(checkpoint),
                "--master", "local[2]", "--trigger", "1s", "--driver-memory", "768m"]
    job: StreamJob | None = None
    try:
        with ChildProcess(server_cmd, stop_timeout=30) as server:
            server.wait_for_line("READY", timeout=60)
            job = StreamJob(job_args, tmp_path / "stream.log")  # the server has made the events directory
            for ip in LEGIT:
                done = echo_client(tmp_path, port, control, ip)
                assert done.returncode == 0, done.stdout + done.stderr
            # The job is following: it has counted the legitimate clients' events.
            wait_until(lambda: _lines_counted(counts)[1] > 0 or not job.alive(), 300,
                       "the streaming job to read the first telemetry", step=0.5)
            assert job.alive(), job.tail()
            assert Blocklist.load(blocklist).match(HOSTILE, time.time()) is None

            with HelloFlood("127.0.0.1", int(port), int(control), [HOSTILE], seed=7) as flood:
                sent = flood.run(seconds=3.0)
            assert sent.hellos > 50, sent
            wait_until(lambda: any("blocklist reloaded" in line for line in server.stderr_lines)
                       or not job.alive(), REFUSAL_DEADLINE_S,
                       "the server to apply the blocklist the stream wrote", step=0.5)
            assert job.alive(), job.tail()
            listed = Blocklist.load(blocklist)
            assert [e.target for e in listed] == [HOSTILE], job.tail()
            # The driver's endpoint filter now drops 127.0.0.9: nobody answers it ...
            refused = echo_client(tmp_path, port, control, HOSTILE, timeout=5)
            assert refused.returncode == 3 and "no server answering" in refused.stderr, refused.stderr
            # ... while .2 and .3 are still served.
            for ip in LEGIT:
                served = echo_client(tmp_path, port, control, ip)
                assert served.returncode == 0, served.stdout + served.stderr
        assert server.returncode == 0
        written = sum(1 for _ in read_events(events))  # the server closed: every file is published

        # Kill the job hard (maybe mid-batch) and restart it from its checkpoint.
        job.kill_group()
        job = StreamJob(job_args, tmp_path / "stream.log")
        wait_until(lambda: _lines_counted(counts)[0] >= written or not job.alive(), 300,
                   "the restarted job to read everything", step=0.5)
        assert _lines_counted(counts) == (written, written), job.tail()
        job.proc.send_signal(signal.SIGINT)  # Ctrl-C: queries stopped, clean exit
        assert job.proc.wait(timeout=120) == 0, job.tail()
    finally:
        if job is not None and job.alive():
            job.kill_group()
