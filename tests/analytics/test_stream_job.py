"""The streaming defence (``python -m aeron_py.analytics EVENTS --follow``) on real Spark.

The scenario runs the CLI as a child process over files an EventWriter publishes: a HELLO
flood from one key gets it blocklisted, legitimate keys stay off the list; the job is then
killed with SIGKILL (Python and JVM together) while new files arrive, restarted from its
checkpoint, and its per-batch counts add up to exactly the events written. The blocklist
merge's idempotence per batch id is checked directly (no Spark needed).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from aeron_py.analytics.stream_cli import duration, main
from aeron_py.analytics.stream_sinks import BlocklistSink, read_batch_counts
from aeron_py.duologue.blocklist import Blocklist
from aeron_py.telemetry.writer import EventWriter
from conftest import wait_until

FLOOD, LEGIT = "127.0.0.9", ("127.0.0.2", "127.0.0.3", "2001:db8:1::5")


def write_traffic(directory: Path, flood_hellos: int, legit_rounds: int, start_session: int) -> int:
    """Publish a flood from FLOOD and HELLO+connect duologues from LEGIT; return events written."""
    written, session, now = 0, start_session, time.time()
    with EventWriter(directory, source="server", server_id="echo-1", max_bytes=3000) as writer:
        for _ in range(flood_hellos):
            writer.emit("hello", ts=now, initial_session=session, ip=FLOOD, port=40000, key_valid=True)
            session, written = session + 1, written + 1
        for _ in range(legit_rounds):
            for ip in LEGIT:
                writer.emit("hello", ts=now, initial_session=session, ip=ip, port=40001, key_valid=True)
                writer.emit("duologue_created", ts=now, session=session, owner_ip=ip, data_port=1, control_port=2)
                writer.emit("client_connected", ts=now, session=session, ip=ip, wrong_ip=False)
                session, written = session + 1, written + 3
    return written


class StreamProcess:
    """The CLI in its own process group (so SIGKILL takes Python and its JVM together)."""

    def __init__(self, args: list[str], log: Path) -> None:
        self.log = log
        with open(log, "ab") as out:
            self.proc = subprocess.Popen([sys.executable, "-m", "aeron_py.analytics", *args], stdin=subprocess.DEVNULL,
                                         stdout=out, stderr=subprocess.STDOUT, start_new_session=True)

    def tail(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill_group(self) -> None:
        """SIGKILL the whole process group; return once it is gone."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        wait_until(lambda: not _group_alive(self.proc.pid), 30, "the killed job's JVM to exit", step=0.2)

    def stop(self, timeout: float = 90) -> int:
        """SIGTERM and wait; SIGKILL the group if it does not stop in time."""
        if self.alive():
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill_group()
            raise


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


@dataclass
class Scenario:
    events: Path
    blocklist: Path
    counts: Path
    written: int
    exit_code: int
    log: str
    replayed: dict[str, int | None]
    blocklist_unchanged_by_restart: bool
    full_log: str


def _commits(query_checkpoint: Path) -> list[Path]:
    """The query's batch commit records (none before Spark committed its first batch)."""
    directory = query_checkpoint / "commits"
    return [p for p in directory.iterdir() if p.name.isdigit()] if directory.is_dir() else []


def _forget_last_commit(query_checkpoint: Path) -> int | None:
    """Delete the commit record of the query's last batch; return that batch id."""
    commits = _commits(query_checkpoint)
    if not commits:
        return None
    last = max(commits, key=lambda p: int(p.name))
    last.unlink()
    last.with_name(f".{last.name}.crc").unlink(missing_ok=True)  # Hadoop's checksum of it
    return int(last.name)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Scenario]:
    tmp = tmp_path_factory.mktemp("stream")
    events, blocklist, checkpoint = tmp / "events", tmp / "blocklist.txt", tmp / "checkpoint"
    counts, log = checkpoint / "batch_counts", tmp / "stream.log"
    args = [str(events), "--follow", "--blocklist", str(blocklist), "--checkpoint", str(checkpoint),
            "--master", "local[2]", "--trigger", "1s", "--driver-memory", "768m"]
    written = write_traffic(events, flood_hellos=60, legit_rounds=4, start_session=0)
    job = StreamProcess(args, log)
    try:
        wait_until(lambda: read_batch_counts(counts).ok >= written or not job.alive(), 240,
                   "the first run to read the first files", step=0.5)
        assert job.alive(), job.tail()
        wait_until(lambda: blocklist.exists() or not job.alive(), 60, "the first verdicts", step=0.5)
        # A sink's output comes before Spark commits its batch: wait for both commits, so
        # the kill below cannot land before any batch was committed (nothing to replay).
        wait_until(lambda: all(_commits(checkpoint / q) for q in ("verdicts", "counts")) or not job.alive(),
                   60, "both queries to commit a batch", step=0.5)
        # New files arrive; the job dies hard (Python and JVM) while it may be reading them.
        written += write_traffic(events, flood_hellos=5, legit_rounds=10, start_session=1000)
        job.kill_group()
        written += write_traffic(events, flood_hellos=0, legit_rounds=10, start_session=2000)
        # Make the restart replay each query's last completed batch for sure, as if the
        # kill had come between the sink and Spark's commit of the batch.
        replayed = {name: _forget_last_commit(checkpoint / name) for name in ("verdicts", "counts")}
        listed_before = _state(blocklist)
        job = StreamProcess(args, log)
        wait_until(lambda: read_batch_counts(counts).ok >= written or not job.alive(), 240,
                   "the restarted job to catch up", step=0.5)
        code = job.stop()
        yield Scenario(events, blocklist, counts, written, code, job.tail(), replayed,
                       listed_before == _state(blocklist), log.read_text(errors="replace"))
    finally:
        if job.alive():
            job.kill_group()




@pytest.mark.spark
@pytest.mark.timeout(900)
def test_flood_key_is_blocklisted_and_legit_keys_are_not(scenario: Scenario) -> None:
    listed = Blocklist.load(scenario.blocklist)
    now = time.time()
    assert [e.target for e in listed] == [FLOOD], scenario.log
    assert "hellos_without_connect=60>=20" in listed.entries[0].reason
    assert all(listed.match(ip, now) is None for ip in LEGIT)


@pytest.mark.spark
@pytest.mark.timeout(900)
def test_kill_and_restart_neither_loses_nor_double_counts(scenario: Scenario) -> None:
    totals = read_batch_counts(scenario.counts)
    assert totals.ok == totals.lines == scenario.written, (totals, scenario.log)
    assert totals.by_kind["hello"] == 65 + 24 * len(LEGIT)
    assert scenario.exit_code == 0, scenario.log  # SIGTERM: queries stopped, clean exit


@pytest.mark.spark
@pytest.mark.timeout(900)
def test_a_batch_replayed_by_spark_changes_nothing(scenario: Scenario) -> None:
    """The restart re-ran both queries' last batches: the blocklist merge skipped its
    replay (the file is the same file, byte for byte) and the counts were not doubled."""
    assert scenario.replayed["verdicts"] is not None and scenario.replayed["counts"] is not None
    assert "already merged into the blocklist: skipped" in scenario.full_log, scenario.log
    assert scenario.blocklist_unchanged_by_restart


# -- idempotent blocklist merge (no Spark) --------------------------------------------

FLAGGED = [{"key": FLOOD, "evidence": ["hellos_without_connect=60>=20"]}]


def _state(path: Path) -> tuple[int, bytes]:
    return path.stat().st_ino, path.read_bytes()


def test_a_replayed_batch_id_changes_nothing(tmp_path: Path) -> None:
    blocklist = tmp_path / "blocklist.txt"
    sink = BlocklistSink(blocklist, tmp_path / "ledger.json", ttl=600, clock=lambda: 1_800_000_000.0)
    assert sink.merge(0, []) == {"added": 0, "extended": 0, "flagged": 0}
    assert not blocklist.exists()  # nothing flagged: the server's file is not touched
    assert sink.merge(1, FLAGGED)["added"] == 1  # type: ignore[index]
    before = _state(blocklist)
    later = BlocklistSink(blocklist, tmp_path / "ledger.json", ttl=600, clock=lambda: 1_800_000_100.0)
    assert later.merge(1, FLAGGED) is None and later.merge(0, FLAGGED) is None
    assert _state(blocklist) == before and later.last_applied() == 1
    # A new batch leaves a key alone while it has more than half its lifetime left ...
    assert later.merge(2, FLAGGED)["extended"] == 0  # type: ignore[index]
    assert _state(blocklist) == before
    # ... and extends it after that.
    late = BlocklistSink(blocklist, tmp_path / "ledger.json", ttl=600, clock=lambda: 1_800_000_400.0)
    assert late.merge(3, FLAGGED)["extended"] == 1  # type: ignore[index]
    assert Blocklist.load(blocklist).entries[0].expires == 1_800_001_000.0


def test_a_batch_replayed_after_a_crash_mid_merge_gives_the_same_entries(tmp_path: Path) -> None:
    import json

    blocklist, ledger = tmp_path / "blocklist.txt", tmp_path / "ledger.json"
    first = BlocklistSink(blocklist, ledger, ttl=600, clock=lambda: 1_800_000_000.0)
    first.merge(4, FLAGGED)
    entries = Blocklist.load(blocklist).entries
    # The crash: the blocklist was replaced but the ledger still says "batch 5 pending".
    ledger.write_text(json.dumps({"last_batch": 4, "pending": {"batch": 5, "now": 1_800_000_050.0}}))
    first.merge(5, [*FLAGGED, {"key": "2001:db8:bad::/64", "evidence": ["bad_messages=9>5"]}])
    merged = Blocklist.load(blocklist).entries
    ledger.write_text(json.dumps({"last_batch": 4, "pending": {"batch": 5, "now": 1_800_000_050.0}}))
    replay = BlocklistSink(blocklist, ledger, ttl=600, clock=lambda: 1_800_009_999.0)  # restarted later
    replay.merge(5, [*FLAGGED, {"key": "2001:db8:bad::/64", "evidence": ["bad_messages=9>5"]}])
    assert Blocklist.load(blocklist).entries == merged and len(merged) == len(entries) + 1
    assert replay.last_applied() == 5


# -- command line (no Spark) ----------------------------------------------------------

@pytest.mark.parametrize(("text", "seconds"), [("30s", 30.0), ("500ms", 0.5), ("2m", 120.0), ("1.5", 1.5)])
def test_durations(text: str, seconds: float) -> None:
    assert duration(text) == seconds


def test_bad_input_fails_before_spark_starts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["--follow", "--blocklist", str(tmp_path / "b.txt")]
    assert main([str(tmp_path / "missing"), *base]) == 2
    assert "events directory does not exist" in capsys.readouterr().err
    assert main([str(tmp_path), *base, "--window", "5s", "--slide", "10s"]) == 2
    assert "slide (10 s) must not exceed the window (5 s)" in capsys.readouterr().err
    (tmp_path / "b.txt").write_text("not-an-address never x\n")
    assert main([str(tmp_path), *base]) == 2
    assert "b.txt:1" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(tmp_path), *base, "--trigger", "soon"])
