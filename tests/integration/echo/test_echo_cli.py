"""The echo_server / echo_client / echo_load command lines, as subprocesses."""
from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from aeron_py.duologue.blocklist import Blocklist, Entry
from aeron_py.telemetry import read_events
from processes import ChildProcess, run_process
from echo_harness import HOST, PortBlocks, udp_port_free, make_server, raw_peer, wait_idle, wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

BLOCKS = PortBlocks(27000, 29000)


def spawn(tmp_path: Path, module: str, *args: str) -> ChildProcess:
    """A started ``python -m module`` child running in ``tmp_path``."""
    return ChildProcess([sys.executable, "-m", module, *args], stop_timeout=15.0, cwd=tmp_path).start()


def wait_line(child: ChildProcess, pattern: str, timeout: float = 15.0) -> re.Match[str]:
    """The child's first READY line, which must match ``pattern`` in full."""
    line = child.wait_for_line("READY", timeout)
    match = re.fullmatch(pattern, line)
    assert match, f"{line!r} does not match {pattern!r}"
    return match


def stderr_of(child: ChildProcess) -> str:
    return "\n".join(child.stderr_lines)


def run_cli(tmp_path: Path, module: str, *args: str, timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return run_process([sys.executable, "-m", module, *args], cwd=tmp_path, capture_output=True, text=True,
                       timeout=timeout)


def driver_dir(stderr: str) -> str:
    match = re.search(r"driver dir (\S+)", stderr)
    assert match, f"server did not say where its driver lives: {stderr[-1000:]}"
    return match.group(1)


def test_server_without_arguments_serves_on_defaults(tmp_path: Path) -> None:
    if not (udp_port_free(9000) and udp_port_free(9001)):
        pytest.skip("default ports 9000/9001 are in use on this machine")
    server = spawn(tmp_path, "aeron_py.echo_server")
    try:
        wait_line(server, r"READY 127\.0\.0\.1 9000 9001")
        client = run_cli(tmp_path, "aeron_py.echo_client", HOST, "9000", "9001", "--count", "2", "--timeout", "10")
        assert client.returncode == 0, client.stderr
        assert client.stdout.startswith("OK 2 echoes")
        assert server.stop(signal.SIGTERM) == 0
    finally:
        server.stop()
    directory = driver_dir(stderr_of(server))
    assert directory.startswith("/") and not os.path.exists(directory)


def test_server_positional_form_and_sigint(tmp_path: Path) -> None:
    ports = BLOCKS.take(4)
    aeron_dir = tmp_path / "server-aeron"
    server = spawn(tmp_path, "aeron_py.echo_server", str(aeron_dir), HOST, str(ports.port), str(ports.control),
                   str(ports.base), "4")
    try:
        wait_line(server, rf"READY 127\.0\.0\.1 {ports.port} {ports.control}")
        assert (aeron_dir / "cnc.dat").exists()
        client = run_cli(tmp_path, "aeron_py.echo_client", str(tmp_path / "client-aeron"), HOST, str(ports.port),
                         str(ports.control), "--count", "3", "--message", "héllo")
        assert client.returncode == 0, client.stderr
        assert not (tmp_path / "client-aeron").exists()
        assert server.stop(signal.SIGINT) == 0
    finally:
        server.stop()
    assert not aeron_dir.exists()


def test_client_exit_codes(tmp_path: Path) -> None:
    ports = BLOCKS.take(1)
    unused = BLOCKS.take(1)
    with make_server(ports, clients=1) as server, raw_peer(ports) as peer:
        ok = run_cli(tmp_path, "aeron_py.echo_client", HOST, str(ports.port), str(ports.control), "--count", "1")
        assert ok.returncode == 0, ok.stderr
        wait_idle(server)
        peer.handshake()  # takes the only slot
        full = run_cli(tmp_path, "aeron_py.echo_client", HOST, str(ports.port), str(ports.control))
        assert full.returncode == 1 and "server error: server full" in full.stderr
    nobody = run_cli(tmp_path, "aeron_py.echo_client", HOST, str(unused.port), str(unused.control), "--timeout", "1")
    assert nobody.returncode == 3 and "no server answering" in nobody.stderr
    usage = run_cli(tmp_path, "aeron_py.echo_client", HOST, str(unused.port))
    assert usage.returncode == 2 and "expected ADDRESS PORT CONTROL_PORT" in usage.stderr


def test_sighup_reloads_the_blocklist(tmp_path: Path) -> None:
    ports = BLOCKS.take(8)
    path = tmp_path / "blocklist.txt"
    Blocklist.write(path, [Entry.create("10.9.9.9", None, "someone else")])
    server = spawn(tmp_path, "aeron_py.echo_server", "--port", str(ports.port), "--control-port",
                   str(ports.control), "--base-port", str(ports.base), "--clients", "8", "--blocklist", str(path),
                   "--no-endpoint-filter")  # answered, not silently dropped by the filter
    client_args = (HOST, str(ports.port), str(ports.control), "--count", "1", "--interface", "127.0.0.2")
    try:
        wait_line(server, rf"READY 127\.0\.0\.1 {ports.port} {ports.control}")
        assert run_cli(tmp_path, "aeron_py.echo_client", *client_args).returncode == 0
        Blocklist.write(path, [Entry.create("127.0.0.2", None, "caught")])
        os.kill(server.pid, signal.SIGHUP)
        wait_until(lambda: "blocklist reloaded" in stderr_of(server), 10, "the server to reload its blocklist")
        refused = run_cli(tmp_path, "aeron_py.echo_client", *client_args)
        assert refused.returncode == 1 and "too many connections for IP address" in refused.stderr
        assert server.stop() == 0
    finally:
        server.stop()


def test_server_reports_startup_errors(tmp_path: Path) -> None:
    ports = BLOCKS.take(4)
    bad = run_cli(tmp_path, "aeron_py.echo_server", "a", "b", "c")
    assert bad.returncode == 2 and "expected no positional arguments or 6" in bad.stderr
    too_many = run_cli(tmp_path, "aeron_py.echo_server", "--base-port", "65000", "--clients", "1000")
    assert too_many.returncode == 2 and "outside [1, 65535]" in too_many.stderr
    with make_server(ports):
        clash = run_cli(tmp_path, "aeron_py.echo_server", "--port", str(ports.port), "--control-port",
                        str(ports.control + 2), "--base-port", str(ports.base + 20), "--clients", "2")
    assert clash.returncode == 1 and "Address already in use" in clash.stderr


# matplotlib (the load extra) draws the PNG; it does not build for the free-threaded 3.13t here.
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def test_load_cli_writes_json_png_and_events(tmp_path: Path) -> None:
    ports = BLOCKS.take(12)
    out, png, events = tmp_path / "load.json", tmp_path / "rtt.png", tmp_path / "events"
    plot = ["--png", str(png)] if HAS_MATPLOTLIB else []
    with make_server(ports, clients=12) as server:
        load = run_cli(tmp_path, "aeron_py.echo_load", HOST, str(ports.port), str(ports.control), "--clients", "6",
                       "--sources", "127.0.0.2,127.0.0.3", "--echoes", "3", "--json", str(out), *plot,
                       "--events", str(events), "--no-progress", timeout=45)
        assert load.returncode == 0, load.stderr
        assert server.stats.connects == 6
    summary = json.loads(out.read_text())
    assert summary["succeeded"] == 6 and summary["failures"] == {}
    assert summary["rtt"]["count"] == 18 and summary["rtt"]["p50_us"] > 0
    assert summary["handshake_rate_per_s"] > 0
    if HAS_MATPLOTLIB:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    samples = [e for e in read_events(events) if e["kind"] == "rtt_sample"]
    assert len(samples) == 18 and {e["client_ip"] for e in samples} == {"127.0.0.2", "127.0.0.3"}
    assert all(e["source"] == "load" and e["rtt_us"] > 0 for e in samples)
