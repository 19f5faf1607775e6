"""End to end: a real echo_server writing telemetry, legit clients and a hostile source
(127.0.0.9: HELLO flood and bad messages) -> the PySpark job -> a blocklist that flags
127.0.0.9 only -> the server, reloaded with SIGHUP, has its driver's endpoint filter drop
127.0.0.9 (counted in telemetry) and serves the rest."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aeron_py import Aeron, MediaDriver
from aeron_py.duologue.blocklist import Blocklist
from aeron_py.duologue.client_channels import publication_channel
from aeron_py.duologue.core.protocol import format_hello
from aeron_py.telemetry import read_events
from conftest import free_udp_port, wait_until
from processes import ChildProcess, run_process

pytestmark = [pytest.mark.timeout(420), pytest.mark.integration, pytest.mark.spark]

HOSTILE, LEGIT = "127.0.0.9", ("127.0.0.2", "127.0.0.3")
STREAM = 0x2044F002


def echo_client(tmp_path: Path, port: str, control: str, interface: str,
                timeout: int = 20) -> subprocess.CompletedProcess[str]:
    return run_process([sys.executable, "-m", "aeron_py.echo_client", "127.0.0.1", port, control,
                        "--count", "2", "--timeout", str(timeout), "--interface", interface],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)


def flood_from_hostile(port: int, hellos: int, bad: int) -> None:
    """HELLOs that never connect plus malformed messages, all from 127.0.0.9."""
    uri, destination = publication_channel("127.0.0.1", port, interface=HOSTILE)
    with MediaDriver(term_buffer_length=65536) as driver, Aeron(driver=driver) as aeron:
        pub = aeron.add_exclusive_publication(uri, STREAM)
        pub.add_destination(destination)
        wait_until(lambda: pub.is_connected, 15, "the hostile publication to reach the server")
        for key in range(1, hellos + 1):
            pub.offer_until(format_hello(key), timeout=5)
        for i in range(bad):
            pub.offer_until(f"hello lowercase {i}".encode(), timeout=5)
        time.sleep(0.2)  # let the driver send what was offered before the publication closes


def hostile_events(events_dir: Path) -> int:
    return sum(1 for e in read_events(events_dir) if e.get("ip") == HOSTILE and e["kind"] in ("hello", "reject"))


def test_telemetry_to_blocklist_to_enforcement(tmp_path: Path) -> None:
    events, report, blocklist = tmp_path / "events", tmp_path / "report", tmp_path / "blocklist.txt"
    blocklist.write_text("# managed by aeron_py.analytics\n")
    port, control, base = (str(free_udp_port()) for _ in range(3))
    server_cmd = [sys.executable, "-m", "aeron_py.echo_server", str(tmp_path / "server"), "127.0.0.1", port,
                  control, base, "16", "--events", str(events), "--blocklist", str(blocklist),
                  "--snapshot-interval", "1", "--expiry", "2"]
    with ChildProcess(server_cmd, stop_timeout=20) as server:
        server.wait_for_line("READY", timeout=60)
        for ip in LEGIT:
            done = echo_client(tmp_path, port, control, ip)
            assert done.returncode == 0, done.stdout + done.stderr
        flood_from_hostile(int(port), hellos=30, bad=10)
        wait_until(lambda: hostile_events(events) >= 40, 30, "the server to log the hostile traffic")

        job = subprocess.run([sys.executable, "-m", "aeron_py.analytics", str(events), "--out", str(report),
                              "--blocklist", str(blocklist), "--master", "local[1]", "--blocklist-ttl", "3600"],
                             capture_output=True, text=True, timeout=300, cwd=tmp_path)
        assert job.returncode == 0, job.stdout[-3000:] + job.stderr[-3000:]
        assert (report / "report.html").is_file() and (report / "report.json").is_file()
        listed = Blocklist.load(blocklist)
        now = time.time()
        assert listed.match(HOSTILE, now) is not None
        assert all(listed.match(ip, now) is None for ip in LEGIT)

        os.kill(server.pid, signal.SIGHUP)
        wait_until(lambda: any("blocklist reloaded" in line for line in server.stderr_lines), 15,
                   "the server to reload its blocklist")
        # The blocklist reaches the driver's endpoint filter: the hostile source's datagrams
        # are dropped before the server sees them, so it hears nothing at all.
        refused = echo_client(tmp_path, port, control, HOSTILE, timeout=5)
        assert refused.returncode == 3 and "no server answering" in refused.stderr, refused.stderr
        for ip in LEGIT:
            served = echo_client(tmp_path, port, control, ip)
            assert served.returncode == 0, served.stdout + served.stderr
        wait_until(lambda: filter_drops(events, "filter: blocklist") > 0, 15,
                   "a driver_snapshot counting the filter's blocklist drops")
    assert server.returncode == 0


def filter_drops(events_dir: Path, counter: str) -> int:
    snapshots = [e for e in read_events(events_dir) if e["kind"] == "driver_snapshot"]
    return int(snapshots[-1]["counters"].get(counter, 0)) if snapshots else 0
