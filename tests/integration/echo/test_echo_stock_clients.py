"""Stock Aeron clients (16 MiB terms, Aeron's default) against a default Echo server, on
real UDP loopback: served out of the box, within the large-term budget, and a client
beyond the budget is named in one log line with the option that admits it."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from aeron_py.echo import STREAM_ID
from aeron_py.echo.client import EchoClient
from aeron_py.echo.core.contract import DEFAULT_MAX_IMAGE_TERM_LENGTH
from echo_harness import HOST, PortBlocks, make_server, raw_peer, wait_until
from forged import raw_socket, setup_frame

pytestmark = [pytest.mark.timeout(90), pytest.mark.integration]

BLOCKS = PortBlocks(32700, 32768, size=20)
STOCK_TERM = 16 * 1024 * 1024
GUARD_LOG = "aeron_py.echo.server.endpoint_guard"


def stock_client(ports, interface: str, timeout: float = 10.0) -> EchoClient:
    return EchoClient(HOST, ports.port, ports.control, count=3, timeout=timeout, interface=interface,
                      term_length=STOCK_TERM)


def test_a_stock_client_is_served_by_a_default_server() -> None:
    assert DEFAULT_MAX_IMAGE_TERM_LENGTH == STOCK_TERM
    ports = BLOCKS.take(4)
    with make_server(ports) as server:
        result = stock_client(ports, "127.0.0.2").run()
        assert result.ok, result.reason
        # both of its images (initial and duologue) held a place, and give it back
        wait_until(lambda: server.stats.large_term_images == 0 and server.stats.duologues == 0, 15,
                   f"the stock client's images to leave (stats {server.stats})")
        assert server.filter_counters()["filter: source_large_terms"] == 0


def test_beyond_the_budget_a_stock_client_is_dropped_and_named_in_one_log_line(
        caplog: pytest.LogCaptureFixture) -> None:
    ports = BLOCKS.take(4)
    caplog.set_level(logging.WARNING, GUARD_LOG)
    with make_server(ports, max_large_term_images=1) as server, raw_peer(ports) as peer:
        holder = peer.aeron.add_exclusive_publication(
            f"aeron:udp?endpoint={HOST}:{ports.port}|term-length={STOCK_TERM}", STREAM_ID)
        peer.keep(holder)
        wait_until(lambda: server.stats.large_term_images == 1, 10, "the holder's large-term image")
        refused = stock_client(ports, "127.0.0.3", timeout=3.0).run()
        assert not refused.ok and refused.server_reason is None  # dropped before any image: no answer
        assert server.filter_counters()["filter: total_large_terms"] >= 1
        wait_until(lambda: "127.0.0.3" in caplog.text, 10, "the term-length drop report")
        lines = [r.getMessage() for r in caplog.records if r.name == GUARD_LOG and "SETUP" in r.getMessage()]
        assert len(lines) == 1, lines
        assert str(STOCK_TERM) in lines[0] and "--large-term-images 1" in lines[0]
        small = EchoClient(HOST, ports.port, ports.control, count=1, timeout=10, interface="127.0.0.3").run()
        assert small.ok, small.reason  # small terms need no place
        holder.close()
        wait_until(lambda: server.stats.large_term_images == 0, 15, "the holder's image to leave")
        served = stock_client(ports, "127.0.0.3").run()
        assert served.ok, served.reason


def large_logs(driver_dir: str) -> list[int]:
    """Apparent sizes of the image logs in the server's driver directory over 3 MiB (large terms)."""
    images = Path(driver_dir) / "images"
    return [f.stat().st_size for f in images.iterdir() if f.stat().st_size > 3 << 20] if images.is_dir() else []


def test_floods_of_large_terms_stay_within_the_budget_and_a_client_is_served() -> None:
    """Forged 1 GiB-term SETUPs and real 16 MiB-term publications from 20 addresses at once:
    at most ``--large-term-images`` (4) large logs exist, and a client is served meanwhile."""
    ports = BLOCKS.take(4)
    with make_server(ports) as server, raw_peer(ports) as peer, raw_socket("127.0.0.40") as forger:
        for i in range(20):
            pub = peer.aeron.add_exclusive_publication(
                f"aeron:udp?control=127.0.0.{10 + i}:0|control-mode=manual|term-length={STOCK_TERM}", STREAM_ID)
            pub.add_destination(f"aeron:udp?endpoint={HOST}:{ports.port}")
            peer.keep(pub)
        for session in range(1, 201):
            forger.sendto(setup_frame(session, STREAM_ID, 1 << 30), (HOST, ports.port))
        counters = server.filter_counters
        wait_until(lambda: counters()["filter: total_large_terms"] > 0 and counters()["filter: setup_term_length"] > 0,
                   15, "both floods to reach the filter")
        result = EchoClient(HOST, ports.port, ports.control, count=3, timeout=10, interface="127.0.0.3").run()
        assert result.ok, result.reason
        assert server.stats.large_term_images <= 4
        assert server.driver_dir is not None
        logs = large_logs(server.driver_dir)
        assert len(logs) <= 4 and all(size <= 3 * STOCK_TERM + (1 << 20) for size in logs), logs
