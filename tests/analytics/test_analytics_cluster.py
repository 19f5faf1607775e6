"""The analytics job on a real Spark standalone cluster (one master, one worker, loopback)
gives the same outputs as the embedded local run."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyspark
import pytest
from pyspark.sql import SparkSession

from aeron_py.analytics.generate import GeneratorConfig, generate
from aeron_py.analytics.job import JobConfig, run_job
from aeron_py.analytics.session import build_session
from aeron_py.duologue.blocklist import Blocklist

pytestmark = [pytest.mark.spark, pytest.mark.timeout(280)]

REPO = Path(__file__).resolve().parents[2]
SPARK_HOME = Path(pyspark.__file__).resolve().parent
SPARK_CLASS = SPARK_HOME / "bin" / "spark-class"
EVENTS = 5_000  # few RTT samples per key: percentiles are exact on any partitioning


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start(args: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with open(log, "wb") as out:
        return subprocess.Popen(
            [str(SPARK_CLASS), *args], stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True
        )


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the process group this test started (the JVM and any executor it forked)."""
    for sig, grace in ((signal.SIGTERM, 15), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _wait_for(condition: Callable[[], bool], timeout: float, what: str, procs: list[Any], logs: list[Path]) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        dead = [p for p in procs if p.poll() is not None]
        if dead or time.monotonic() > deadline:
            tails = "\n".join(f"--- {log}\n{log.read_text(errors='replace')[-2000:]}" for log in logs)
            pytest.fail(f"{'process exited' if dead else 'timed out'} waiting for {what}\n{tails}")
        time.sleep(0.5)


def _alive_workers(ui_port: int) -> int:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as response:
            state = json.load(response)
    except (OSError, ValueError):
        return 0
    return sum(1 for w in state.get("workers", []) if w.get("state") == "ALIVE")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    work = tmp_path_factory.mktemp("spark-cluster")
    port, ui_port, worker_ui = _free_port(), _free_port(), _free_port()
    env = {
        **os.environ,
        "SPARK_HOME": str(SPARK_HOME),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(work / "logs"),
        "SPARK_LOCAL_DIRS": str(work / "local"),
        "SPARK_WORKER_DIR": str(work / "worker"),
        "PYSPARK_PYTHON": sys.executable,
    }
    logs = [work / "master.log", work / "worker.log"]
    procs: list[subprocess.Popen[bytes]] = []
    try:
        procs.append(_start(["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                             "--webui-port", str(ui_port)], logs[0], env))
        _wait_for(lambda: _alive_workers(ui_port) == 0 and _listening(port), 90, "the master", procs, logs)
        procs.append(_start(["org.apache.spark.deploy.worker.Worker", f"spark://127.0.0.1:{port}",
                             "--cores", "1", "--memory", "1g", "--host", "127.0.0.1",
                             "--webui-port", str(worker_ui), "--work-dir", str(work / "worker")], logs[1], env))
        _wait_for(lambda: _alive_workers(ui_port) >= 1, 90, "the worker to register", procs, logs)
        yield f"spark://127.0.0.1:{port}"
    finally:
        for proc in reversed(procs):
            _stop(proc)


def _listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    session = build_session("local[1]", log_level="ERROR", driver_memory="1g")
    yield session
    session.stop()


def _table(spark: SparkSession, path: Path, key: list[str]) -> list[dict[str, Any]]:
    return [r.asDict(recursive=True) for r in spark.read.parquet(str(path)).orderBy(*key).collect()]


def _blocklist(path: Path) -> list[tuple[str, str]]:
    # Reasons start with the run's wall-clock time; compare what follows it.
    return sorted((e.target, e.reason.split(": ", 1)[1]) for e in Blocklist.load(path))


def test_cluster_run_matches_local_run(cluster: str, spark: SparkSession, tmp_path: Path) -> None:
    events = tmp_path / "events"
    generate(GeneratorConfig(out=events, events=EVENTS, seed=21))
    cluster_out, local_out = tmp_path / "cluster", tmp_path / "local"

    # The cluster run (its own process) and the local run (this process) overlap.
    with open(tmp_path / "cluster-run.log", "w+") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "aeron_py.analytics", str(events), "--out", str(cluster_out),
             "--master", cluster, "--log-level", "WARNING", "--executor-timeout", "90"],
            stdout=log, stderr=subprocess.STDOUT, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO,
        )
        try:
            local = run_job(spark, JobConfig(events_dir=events, out_dir=local_out))
            returncode = proc.wait(timeout=200)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
        log.seek(0)
        assert returncode == 0, log.read()[-4000:]
    remote = json.loads((cluster_out / "report.json").read_text())

    assert remote["spark_master"] == cluster and local["spark_master"].startswith("local")
    for section in ("lines", "events_by_kind", "time_range", "clients", "verdicts", "driver", "rtt"):
        assert remote[section] == local[section], section
    assert remote["clients"]["flagged"] == 5 and remote["lines"]["ok"] == EVENTS

    for name, key in (("per_ip", ["key"]), ("verdicts", ["key"]), ("timeseries", ["minute"]),
                      ("driver_counters", ["server_id", "name", "minute"]), ("driver_loss", ["ts"])):
        assert _table(spark, cluster_out / name, key) == _table(spark, local_out / name, key), name
    remote_rtt, local_rtt = (_table(spark, d / "rtt", ["client_ip"]) for d in (cluster_out, local_out))
    assert [{k: v for k, v in r.items() if k != "mean_us"} for r in remote_rtt] == [
        {k: v for k, v in r.items() if k != "mean_us"} for r in local_rtt
    ]
    assert [r["mean_us"] for r in remote_rtt] == pytest.approx([r["mean_us"] for r in local_rtt])
    assert _blocklist(cluster_out / "blocklist.txt") == _blocklist(local_out / "blocklist.txt")
    assert (cluster_out / "report.html").stat().st_size > 10_000
