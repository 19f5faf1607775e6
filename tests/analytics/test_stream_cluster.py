"""The streaming job on a real Spark standalone cluster (one master, one worker, loopback):
``--available-now`` over published telemetry blocklists the flood key only and counts
every event once (the cluster is the one tests/analytics/test_analytics_cluster.py starts)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from aeron_py.analytics.stream_sinks import read_batch_counts
from aeron_py.duologue.blocklist import Blocklist
from test_analytics_cluster import cluster  # noqa: F401 - the module-scoped fixture
from test_stream_job import FLOOD, LEGIT, write_traffic

pytestmark = [pytest.mark.spark, pytest.mark.timeout(400)]


def test_stream_on_a_standalone_cluster(cluster: str, tmp_path: Path) -> None:  # noqa: F811
    events, blocklist, checkpoint = tmp_path / "events", tmp_path / "blocklist.txt", tmp_path / "checkpoint"
    written = write_traffic(events, flood_hellos=40, legit_rounds=5, start_session=0)
    written += write_traffic(events, flood_hellos=0, legit_rounds=5, start_session=500)
    job = subprocess.run(
        [sys.executable, "-m", "aeron_py.analytics", str(events), "--follow", "--blocklist", str(blocklist),
         "--checkpoint", str(checkpoint), "--master", cluster, "--available-now", "--max-files-per-trigger", "2",
         "--executor-timeout", "120"],
        capture_output=True, text=True, timeout=360, cwd=tmp_path,
    )
    assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
    totals = read_batch_counts(checkpoint / "batch_counts")
    assert totals.ok == totals.lines == written and totals.batches > 1  # several bounded batches
    listed = Blocklist.load(blocklist)
    assert [e.target for e in listed] == [FLOOD]
    assert all(listed.match(ip, time.time()) is None for ip in LEGIT)
