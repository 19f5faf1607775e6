"""The analytics job end to end on generated telemetry, its outputs, and the CLI errors."""

from __future__ import annotations

import ipaddress
import json
import math
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark import Accumulator
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from aeron_py.analytics import job
from aeron_py.analytics.generate import GeneratorConfig, generate
from aeron_py.analytics.job import JobConfig, run_job, update_blocklist
from aeron_py.analytics.report import PLOTS
from aeron_py.analytics.rtt import RTT_BUCKET_RATIO
from aeron_py.analytics.session import build_session
from aeron_py.duologue.blocklist import Blocklist, Entry
from aeron_py.telemetry.reader import ReadStats, read_events

pytestmark = [pytest.mark.spark, pytest.mark.timeout(180)]

REPO = Path(__file__).resolve().parents[2]
NOW = 1_800_000_000.0
TTL = 600.0
EVENTS = 10_000
BROKEN_LINES = [
    "not json at all",
    '{"schema_version":2,"ts":1767225601.0,"kind":"hello","source":"server","server_id":"echo-1"}',
    '{"schema_version":1,"ts":1767225601.0,"kind":"teleport","source":"server","server_id":"echo-1"}',
    '{"schema_version":1,"ts":1767225601.0,"kind":"hello","source":"server","server_id":"echo-1","port":1}',
]
TORN = '{"schema_version":1,"ts":1767225601.0,"kind":"hel'


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    session = build_session("local[1]", log_level="ERROR", driver_memory="1g")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    directory = tmp_path_factory.mktemp("events")
    manifest = generate(GeneratorConfig(out=directory, events=EVENTS, seed=11))
    (directory / "events-9999999999999-000000.jsonl").write_text("\n".join(BROKEN_LINES) + "\n" + TORN)
    return directory, manifest


@pytest.fixture(scope="module")
def result(spark: SparkSession, dataset: tuple[Path, dict[str, Any]],
           tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    events_dir, manifest = dataset
    out = tmp_path_factory.mktemp("report")
    first_hostile = manifest["hostile"][0]["key"]
    Blocklist.write(out / "blocklist.txt", [
        Entry.create("192.0.2.0/24", None, "manual entry"),
        Entry.create("198.18.0.1", NOW - 1, "expired entry"),
        Entry.create(first_hostile, NOW + 10, "about to expire"),
    ])
    report = run_job(spark, JobConfig(events_dir=events_dir, out_dir=out, blocklist_ttl=TTL, now=NOW))
    return out, report


def test_report_counts_lines_by_status(result: tuple[Path, dict[str, Any]], dataset: tuple[Path, dict]) -> None:
    _, report = result
    assert report["lines"] == {
        "total": EVENTS + len(BROKEN_LINES) + 1, "ok": EVENTS, "malformed": 2, "unsupported_version": 1,
        "unknown_kind": 1, "incomplete": 1,
    }
    assert report["malformed_lines"] == 2
    assert sum(report["events_by_kind"].values()) == EVENTS
    # The Python reader agrees on what is an event (it does not check versions/kinds).
    stats = ReadStats()
    assert sum(1 for _ in read_events(dataset[0], stats)) == EVENTS + 3
    assert (stats.torn_last_lines, stats.malformed_lines) == (1, 1)
    assert report["time_range"]["first_ts"] >= dataset[1]["start_ts"]
    assert report["time_range"]["last_ts"] == pytest.approx(dataset[1]["end_ts"], abs=1e-3)


def test_summary_keeps_the_rows_of_one_role_together(spark: SparkSession, dataset: tuple[Path, dict]) -> None:
    # Each cached partition is ordered by role, so the steps that filter on a role skip the
    # cached batches of the others (Spark's per-batch min/max); the rows themselves are the
    # same, so the job's results are unchanged.
    summary = job.summarise_events(spark, dataset[0])
    try:
        partitions = summary.select("role").rdd.glom().map(lambda rows: [row[0] for row in rows]).collect()
    finally:
        summary.unpersist()
    assert {role for roles in partitions for role in roles} == {"driver", "event", "rtt"}
    assert all(roles == sorted(roles) for roles in partitions)


def test_hostile_sources_and_only_they_are_flagged(result: tuple[Path, dict[str, Any]],
                                                  dataset: tuple[Path, dict]) -> None:
    _, report = result
    expected = {h["key"] for h in dataset[1]["hostile"]}
    assert {v["key"] for v in report["verdicts"]} == expected
    by_key = {v["key"]: v for v in report["verdicts"]}
    behaviour = {h["key"]: h["behaviour"] for h in dataset[1]["hostile"]}
    rule_for = {
        "hello_flood": "min_hellos_without_connect", "garbage": "max_bad_messages",
        "session_guesser": "max_wrong_ip_connects", "duologue_abuser": "max_bad_messages",
        "ipv6_rotator": "min_hellos_without_connect",
    }
    for key, kind in behaviour.items():
        assert rule_for[kind] in by_key[key]["rules_fired"], (key, by_key[key])
    rotator = next(k for k, b in behaviour.items() if b == "ipv6_rotator")
    assert by_key[rotator]["addresses"] > 10 and by_key[rotator]["family"] == "ipv6"


def test_blocklist_is_merged(result: tuple[Path, dict[str, Any]], dataset: tuple[Path, dict]) -> None:
    out, report = result
    flagged = len(report["verdicts"])
    stats = report["blocklist"]
    assert (stats["added"], stats["extended"], stats["expired_dropped"], stats["entries"]) == (
        flagged - 1, 1, 1, flagged + 1,
    )
    blocklist = Blocklist.load(out / "blocklist.txt")
    assert blocklist.match("192.0.2.77", NOW).reason == "manual entry"
    assert blocklist.match("198.18.0.1", NOW) is None
    for hostile in dataset[1]["hostile"]:
        network = ipaddress.ip_network(hostile["source"])
        probe = str(network.network_address + (0x1234 if network.num_addresses > 1 else 0))
        entry = blocklist.match(probe, NOW)
        assert entry is not None and entry.expires == NOW + TTL, hostile
        assert entry.reason.startswith("analytics ") and "=" in entry.reason
        assert blocklist.match(probe, NOW + TTL) is None
    assert blocklist.match("10.0.0.1", NOW) is None


def test_parquet_tables_agree_with_the_report(spark: SparkSession, result: tuple[Path, dict[str, Any]]) -> None:
    out, report = result
    kinds = report["events_by_kind"]
    per_ip = spark.read.parquet(str(out / "per_ip"))
    totals = per_ip.groupBy().sum("hellos", "rejects", "rtt_samples", "addresses").first()
    assert list(totals) == [kinds["hello"], kinds["reject"], kinds["rtt_sample"], report["clients"]["addresses"]]
    assert per_ip.count() == report["clients"]["keys"]
    verdicts = spark.read.parquet(str(out / "verdicts"))
    assert sorted(r["key"] for r in verdicts.collect()) == sorted(v["key"] for v in report["verdicts"])

    series = spark.read.parquet(str(out / "timeseries")).orderBy("minute").collect()
    assert len(series) == report["time_range"]["minutes"] > 0
    assert sum(r["hellos"] for r in series) == kinds["hello"]
    assert sum(r["rejects"] for r in series) == kinds["reject"]
    assert all(r["active_duologues"] >= 0 for r in series)
    assert all(b["minute"] - a["minute"] == 60 for a, b in zip(series, series[1:]))

    rtt = spark.read.parquet(str(out / "rtt")).collect()
    assert sum(r["samples"] for r in rtt) == kinds["rtt_sample"] == report["rtt"]["samples"]
    assert all(r["min_us"] <= r["p50_us"] <= r["p90_us"] <= r["p99_us"] <= r["max_us"] for r in rtt)

    counters = spark.read.parquet(str(out / "driver_counters"))
    assert {r["name"] for r in counters.select("name").distinct().collect()} >= {"Bytes sent", "NAKs sent"}
    loss = spark.read.parquet(str(out / "driver_loss"))
    assert loss.count() == report["driver"]["loss_records"]
    assert set(loss.columns) >= {"ts", "server_id", "total_bytes_lost", "channel"}


def test_overall_rtt_percentiles_are_within_one_percent(result: tuple[Path, dict[str, Any]],
                                                       dataset: tuple[Path, dict]) -> None:
    _, report = result
    samples = sorted(float(e["rtt_us"]) for e in read_events(dataset[0])
                     if e.get("kind") == "rtt_sample" and e.get("schema_version") == 1)
    assert report["rtt"]["samples"] == len(samples) > 0
    for name, p in (("p50_us", 0.5), ("p90_us", 0.9), ("p99_us", 0.99)):
        exact = samples[max(1, math.ceil(p * len(samples))) - 1]
        assert abs(report["rtt"][name] - exact) <= 0.01 * exact, (name, report["rtt"][name], exact)
    assert "relative" in report["rtt"]["overall_percentile_error"]


def test_client_rtt_percentiles_are_within_the_documented_bound(
        spark: SparkSession, result: tuple[Path, dict[str, Any]], dataset: tuple[Path, dict]) -> None:
    out, report = result
    samples: dict[str, list[float]] = {}
    for e in read_events(dataset[0]):
        if e.get("kind") == "rtt_sample" and e.get("schema_version") == 1:
            samples.setdefault(e["client_ip"], []).append(float(e["rtt_us"]))
    rtt = {r["client_ip"]: r for r in spark.read.parquet(str(out / "rtt")).collect()}
    assert set(rtt) == set(samples) and report["rtt"]["clients"] == len(samples)
    bound = math.sqrt(RTT_BUCKET_RATIO) - 1  # the report states it
    assert report["rtt"]["percentile_error"].startswith(f"<= {bound:.3%} relative")
    for ip, values in samples.items():
        values.sort()
        row = rtt[ip]
        assert (row["samples"], row["min_us"], row["max_us"]) == (len(values), values[0], values[-1])
        for name, p in (("p50_us", 0.5), ("p90_us", 0.9), ("p99_us", 0.99)):
            exact = values[max(1, math.ceil(p * len(values))) - 1]
            assert abs(row[name] - exact) <= bound * exact, (ip, name, row[name], exact)


def _count_lines_read(spark: SparkSession, monkeypatch: pytest.MonkeyPatch) -> Accumulator[int]:
    """Make the job's JSON reader count every line Spark reads (a pass-through filter)."""
    read = spark.sparkContext.accumulator(0)

    def seen(_: object) -> bool:
        read.add(1)
        return True

    counted = F.udf(seen, "boolean", useArrow=False)
    load = job.load_events
    monkeypatch.setattr(job, "load_events", lambda *args: load(*args).filter(counted(F.col("ts"))))
    return read


def test_verdicts_are_capped_and_say_so(spark: SparkSession, result: tuple[Path, dict[str, Any]],
                                        dataset: tuple[Path, dict], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _, full = result
    assert (full["clients"]["verdicts_truncated"], full["clients"]["verdicts_listed"]) == (False, 5)
    read = _count_lines_read(spark, monkeypatch)
    report = run_job(spark, JobConfig(events_dir=dataset[0], out_dir=tmp_path, now=NOW, max_verdicts=2))
    # The whole run read the JSON exactly once: every line once, none twice.
    assert read.value == report["lines"]["total"] == EVENTS + len(BROKEN_LINES) + 1
    assert report["clients"]["flagged"] == 5
    assert (report["clients"]["verdicts_listed"], report["clients"]["verdicts_truncated"]) == (2, True)
    # The listed (and blocked) ones are those with the most HELLOs; verdicts/ keeps all of them.
    by_hellos = sorted(full["verdicts"], key=lambda v: (-v["hellos"], v["key"]))
    assert [v["key"] for v in report["verdicts"]] == [v["key"] for v in by_hellos[:2]]
    assert report["blocklist"]["added"] == 2 and len(Blocklist.load(tmp_path / "blocklist.txt")) == 2
    assert spark.read.parquet(str(tmp_path / "verdicts")).count() == 5


def test_html_report_is_self_contained(result: tuple[Path, dict[str, Any]]) -> None:
    out, report = result
    page = (out / "report.html").read_text()
    assert page.count("data:image/png;base64,") == len(PLOTS)
    assert "src='plot_" not in page and "http" not in page
    for verdict in report["verdicts"]:
        assert verdict["key"] in page
    for name in PLOTS:
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    saved = json.loads((out / "report.json").read_text())
    assert saved["lines"] == report["lines"] and saved["elapsed_s"] > 0


def test_update_blocklist_keeps_the_longer_expiry(tmp_path: Path) -> None:
    path = tmp_path / "b.txt"
    Blocklist.write(path, [Entry.create("203.0.113.1", None, "forever")])
    flagged = [{"key": "203.0.113.1", "evidence": ["x"]}, {"key": "not-an-ip", "evidence": ["y"]}]
    stats = update_blocklist(path, flagged, NOW, TTL)
    assert (stats["added"], stats["extended"], len(stats["skipped"])) == (0, 0, 1)
    assert Blocklist.load(path).match("203.0.113.1", NOW).reason == "forever"
    stats = update_blocklist(path, [{"key": "2001:db8::/64", "evidence": ["z"]}], NOW, 0)
    assert stats["added"] == 1 and Blocklist.load(path).match("2001:db8::5", NOW + 10**9) is not None


# -- CLI ------------------------------------------------------------------------------

def _cli(*args: str, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-m", "aeron_py.analytics", *args],
        capture_output=True, text=True, timeout=timeout, env=env, cwd=REPO,
    )
    return proc, time.monotonic() - started


def test_cli_help_explains_usage() -> None:
    proc, _ = _cli("--help")
    assert proc.returncode == 0
    for text in ("EVENTS_DIR", "--out", "--master", "spark://HOST:PORT", "--rules", "--blocklist-ttl",
                 "--ipv6-prefix", "exit codes", "report.html", "generate"):
        assert text in proc.stdout, text


def test_cli_missing_directory(tmp_path: Path) -> None:
    proc, _ = _cli(str(tmp_path / "nope"), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2
    assert f"events directory does not exist: {tmp_path / 'nope'}" in proc.stderr


def test_cli_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "in").mkdir()
    proc, _ = _cli(str(tmp_path / "in"), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "no events" in proc.stderr
    (tmp_path / "in" / "events-1-000000.jsonl").write_text("")
    proc, _ = _cli(str(tmp_path / "in"), "--out", str(tmp_path / "out"))
    assert proc.returncode == 2 and "no non-empty *.jsonl files" in proc.stderr


def test_cli_bad_rules_and_blocklist_files(tmp_path: Path, dataset: tuple[Path, dict]) -> None:
    rules = tmp_path / "rules.json"
    rules.write_text('{"max_bad_mesages": 1}')
    proc, _ = _cli(str(dataset[0]), "--out", str(tmp_path / "out"), "--rules", str(rules))
    assert proc.returncode == 2 and "unknown rule(s) max_bad_mesages" in proc.stderr
    blocklist = tmp_path / "blocklist.txt"
    blocklist.write_text("# ok\n1.2.3.4 soon flood\n")
    proc, _ = _cli(str(dataset[0]), "--out", str(tmp_path / "out"), "--blocklist", str(blocklist))
    assert proc.returncode == 2 and f"{blocklist}:2: EXPIRES 'soon'" in proc.stderr


def test_cli_unreachable_master_fails_fast(tmp_path: Path, dataset: tuple[Path, dict]) -> None:
    with socket.socket() as sock:  # a port nobody listens on (closed again before use)
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc, elapsed = _cli(str(dataset[0]), "--out", str(tmp_path / "out"), "--master", f"spark://127.0.0.1:{port}")
    assert proc.returncode == 3
    assert f"cannot reach Spark master spark://127.0.0.1:{port}" in proc.stderr
    assert elapsed < 30
    proc, _ = _cli(str(dataset[0]), "--out", str(tmp_path / "out"), "--master", "spark://nohostport")
    assert proc.returncode == 3 and "expected HOST:PORT" in proc.stderr



def test_cli_reports_a_spark_jvm_that_cannot_start(tmp_path: Path, dataset: tuple[Path, dict]) -> None:
    # A heap no machine has: Java refuses to start; the CLI says so (exit 3), no traceback.
    proc, _ = _cli(str(dataset[0]), "--out", str(tmp_path / "out"), "--master", "local[1]",
                   "--driver-memory", "99999g")
    assert proc.returncode == 3
    assert "the Spark JVM exited while starting" in proc.stderr
    assert "--driver-memory 99999g" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "out").exists()

def test_generator_cli_is_deterministic(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    outputs = []
    for name in ("a", "b"):
        subprocess.run(
            [sys.executable, "-m", "aeron_py.analytics.generate", "--out", str(tmp_path / name),
             "--events", "500", "--seed", "3"],
            check=True, capture_output=True, timeout=60, env=env, cwd=REPO,
        )
        outputs.append(sorted(json.dumps(e, sort_keys=True) for e in read_events(tmp_path / name)))
    assert len(outputs[0]) == 500 and outputs[0] == outputs[1]
    manifest = json.loads((tmp_path / "a" / "generator.json").read_text())
    assert manifest["events"] == 500 and len(manifest["hostile"]) == 5
    proc = subprocess.run(
        [sys.executable, "-m", "aeron_py.analytics.generate", "--out", str(tmp_path / "c"), "--events", "5",
         "--hostile-ips", "not-an-ip"],
        capture_output=True, text=True, timeout=60, env=env, cwd=REPO,
    )
    assert proc.returncode == 2 and "not-an-ip" in proc.stderr


def test_output_steps_run_at_once_and_the_first_failure_is_raised(spark: SparkSession) -> None:
    # The job's four output steps run in threads: "waits" can only finish because
    # "signals" runs at the same time, and a failing step does not cut the others short.
    import threading

    signalled = threading.Event()
    finished: list[str] = []

    def waits() -> dict[str, Any]:
        seen = signalled.wait(30.0)
        finished.append("waits")
        return {"saw_signal": seen}

    def fails() -> dict[str, Any]:
        raise ValueError("step failed")

    def signals() -> dict[str, Any]:
        signalled.set()
        finished.append("signals")
        return {"rows": spark.range(5).count()}

    with pytest.raises(ValueError, match="step failed"):
        job._run_concurrently({"waits": waits, "fails": fails, "signals": signals})
    assert sorted(finished) == ["signals", "waits"]
    results = job._run_concurrently({"waits": waits, "signals": signals})
    assert results == {"waits": {"saw_signal": True}, "signals": {"rows": 5}}


def _child_command_lines() -> list[list[str]]:
    """The command lines of this process's children (Linux /proc)."""
    lines = []
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            if int(fields.get("PPid", "0")) == os.getpid():
                lines.append((status.parent / "cmdline").read_bytes().decode().split("\0"))
        except (OSError, ValueError):
            continue  # the process ended meanwhile
    return lines


def test_an_embedded_session_runs_with_the_local_tuning(spark: SparkSession) -> None:
    # The JVM this test process started (build_session, local master) really got the
    # parallel collector, and the session has adaptive execution off (session.LOCAL_TUNING).
    java = [line for line in _child_command_lines() if line and line[0].endswith("java")]
    assert java, "no Spark JVM among this process's children"
    assert all("-XX:+UseParallelGC" in line for line in java)
    assert spark.conf.get("spark.sql.adaptive.enabled") == "false"
