"""Stock Aeron clients (16 MiB terms, Aeron's default) against a default Echo server, on
real UDP loopback: served out of the box, within the large-term budget, and a client
beyond the budget is named in one log line with the option that admits it."""
from __future__ import annotations

import logging
from pathlib import Path

import pytest

from aeron_py.echo import STREAM_ID
from aeron_py.echo.client import EchoClient
from aeron_py.duologue.core.contract import DEFAULT_MAX_IMAGE_TERM_LENGTH, ServerConfig
from echo_harness import HOST, PortBlocks, make_server, raw_peer, wait_until
from forged import raw_socket, setup_frame

pytestmark = [pytest.mark.timeout(90), pytest.mark.integration]

BLOCKS = PortBlocks(32700, 32768, size=20)
MANY = PortBlocks(23000, 23600, size=150)  # 64 duologues: 10 + 128 ports
STOCK_TERM = 16 * 1024 * 1024
GUARD_LOG = "aeron_py.duologue.server.endpoint_guard"


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


def large_logs(driver_dir: str) -> list[tuple[int, int]]:
    """(apparent size, bytes allocated) of the image logs in the server's driver directory
    over 3 MiB (large terms): the logs are sparse, so only what was written is allocated."""
    images = Path(driver_dir) / "images"
    stats = [f.stat() for f in images.iterdir()] if images.is_dir() else []
    return [(st.st_size, st.st_blocks * 512) for st in stats if st.st_size > 3 << 20]


def test_floods_of_large_terms_stay_within_the_budget_and_a_client_is_served() -> None:
    """Forged 1 GiB-term SETUPs and real 16 MiB-term publications from 30 addresses at once:
    at most ``--large-term-images`` (2 x 8 clients + 1) large logs exist, each holding only
    what its source wrote, and a client is served meanwhile."""
    ports = BLOCKS.take(4)
    budget, _ = ServerConfig(max_clients=8, clients_base_port=ports.base).large_term_limits()
    with make_server(ports, clients=8) as server, raw_peer(ports) as peer, raw_socket("127.0.0.50") as forger:
        for i in range(30):
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
        assert server.stats.large_term_images <= budget
        assert server.driver_dir is not None
        logs = large_logs(server.driver_dir)
        assert len(logs) <= budget and all(size <= 3 * STOCK_TERM + (1 << 20) for size, _ in logs), logs
        # the flood's publications wrote nothing: each 48 MiB log holds its metadata pages only
        assert all(allocated <= 256 << 10 for _, allocated in logs), logs


@pytest.mark.soak
def test_as_many_stock_clients_as_duologues_are_held_at_once_and_cost_what_they_wrote() -> None:
    """64 stock-term clients (the CLI's default --clients) from 22 addresses, three each (the
    default --max-per-ip), each keeping its initial publication as the reference client
    does: all held at once by a server on the default limits, every HELLO answered, and the
    /dev/shm their 128 large logs use is what they wrote (logged for the operator guide)."""
    clients, sources = 64, [f"127.0.0.{20 + n}" for n in range(22)]
    ports = MANY.take(clients)
    with make_server(ports, clients=clients) as server, raw_peer(ports, STOCK_TERM) as peer:
        for n in range(clients):
            source = sources[n // 3]
            hs = peer.handshake(key=0x1000 + n, interface=source)
            pub, sub = peer.open_duologue(hs, interface=source)
            peer.send(pub, b"ECHO stock")
            assert peer.receive(sub, lambda m: m == b"ECHO stock") == b"ECHO stock"
        assert (server.stats.duologues, server.stats.large_term_images) == (clients, 2 * clients)
        pub, sub = peer.initial(interface="127.0.0.60")  # one more: answered, not dropped
        peer.send(pub, b"HELLO 99")
        assert peer.reply_to(sub, pub) == f"{pub.session_id} ERROR server full".encode()
        assert server.driver_dir is not None
        logs = large_logs(server.driver_dir)
        allocated = sum(a for _, a in logs)
        logging.getLogger(__name__).warning(
            "%d stock clients: %d large logs, %.1f GiB apparent, %.1f MiB allocated in /dev/shm",
            clients, len(logs), sum(s for s, _ in logs) / (1 << 30), allocated / (1 << 20))
        assert len(logs) >= 2 * clients
        assert allocated <= len(logs) * (256 << 10), f"{allocated} bytes in {len(logs)} logs"
