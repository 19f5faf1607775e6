"""Quiet mode: an idle server sleeps on its driver's traffic bell instead of
polling, and wakes for the next message.

Loop passes are counted by wrapping the server's ``_iterate`` (as test_echo_idle_cost
does): polling with backoff makes hundreds of passes a second, sleeping on the bell
about one per 100 ms housekeeping tick.
"""
from __future__ import annotations

import threading
import time

import pytest

from aeron_py.echo.client import EchoClient
from aeron_py.duologue.server import DuologueServer
from aeron_py.traffic import QuietIdle
from echo_harness import PortBlocks, make_server, raw_peer, wait_until

pytestmark = [pytest.mark.integration]

BLOCKS = PortBlocks(20800, 21000)
WINDOW = 1.0


def passes_in(server: DuologueServer, seconds: float) -> int:
    """Loop passes during ``seconds`` of wall time."""
    count = [0]
    iterate = server._iterate

    def counted(now: float) -> int:
        count[0] += 1
        return iterate(now)

    server._iterate = counted  # type: ignore[method-assign]
    try:
        done = threading.Event()
        done.wait(seconds)  # the window being measured, not a synchronisation
    finally:
        del server._iterate  # type: ignore[attr-defined]
    return count[0]


@pytest.mark.timeout(60)
def test_an_idle_server_sleeps_until_the_next_message_and_answers_it() -> None:
    ports = BLOCKS.take()
    options = {"quiet_after": 0.3, "quiet_period": 0.02}
    with make_server(ports, options=options) as server, raw_peer(ports) as peer:
        pub, sub = peer.open_duologue(peer.handshake())
        peer.send(pub, b"ECHO before")
        assert peer.receive(sub, lambda m: True) == b"ECHO before"
        assert server._driver is not None
        bell = server._driver.traffic
        wait_until(lambda: bell.quiet_for() > 0.5, 10, "a quiet spell", step=0.01)
        quiet_passes = passes_in(server, WINDOW)
        start = time.monotonic()
        peer.send(pub, b"ECHO after")
        assert peer.receive(sub, lambda m: True, timeout=10) == b"ECHO after"
        answered_in = time.monotonic() - start
        assert server.stats.duologues == 1
    # about two passes per 100 ms tick (the tick's own work, then the wait)
    assert quiet_passes <= 60, (quiet_passes, answered_in)


@pytest.mark.timeout(60)
def test_without_quiet_mode_an_idle_server_keeps_polling() -> None:
    ports = BLOCKS.take()
    with make_server(ports, options={"quiet_after": None}) as server, raw_peer(ports) as peer:
        pub, sub = peer.open_duologue(peer.handshake())
        peer.send(pub, b"ECHO x")
        assert peer.receive(sub, lambda m: True) == b"ECHO x"
        assert server._driver is not None and server._driver.quiet_idle is None
        assert passes_in(server, WINDOW) > 100  # backoff parks at most 1 ms


@pytest.mark.timeout(120)
def test_a_busy_duologue_across_many_term_ends_is_never_left_unread() -> None:
    # One echo in flight, back to back, on the default (quiet) server: with 64 KiB terms
    # and 96-byte frames the client's publication pads the end of a term every 682 echoes.
    # A poll pass that consumed only such padding found no message while the next term
    # already held the client's next echo; the loop took it as settled, never polled
    # again (no more rings: the client waited), and the client gave up with "no echo
    # reply" after 2,046-12,958 echoes in each of four runs before the fix.
    ports = BLOCKS.take()
    with make_server(ports) as server:
        assert server._driver is not None and server._driver.quiet_idle is not None
        client = EchoClient("127.0.0.1", ports.port, ports.control, count=15_000, interval=0.0,
                            message=b"x" * 32, timeout=10.0, term_length=64 * 1024)
        result = client.run()
    assert result.ok and result.echoes == 15_000, (result.echoes, result.reason)


def test_quiet_options_are_checked() -> None:
    from aeron_py.duologue.server.options import ServerOptions

    with pytest.raises(ValueError, match="quiet_after"):
        ServerOptions(quiet_after=-1.0)
    with pytest.raises(ValueError, match="quiet_period"):
        ServerOptions(quiet_period=0.0)
    with pytest.raises(ValueError, match="quiet_period"):
        ServerOptions(quiet_period=1.5)
    with pytest.raises(ValueError, match="deep_quiet_period"):
        ServerOptions(deep_quiet_period=0.0)
    with pytest.raises(ValueError, match="deep_quiet_after"):
        ServerOptions(deep_quiet_after=-0.5)
    assert ServerOptions(deep_quiet_after=None).deep_quiet_after is None


@pytest.mark.timeout(60)
def test_a_server_in_deep_quiet_answers_the_next_message() -> None:
    ports = BLOCKS.take()
    options = {"quiet_after": 0.2, "quiet_period": 0.02, "deep_quiet_after": 0.2, "deep_quiet_period": 0.2}
    with make_server(ports, options=options) as server, raw_peer(ports) as peer:
        assert server._driver is not None
        # deep quiet counts from the last traffic: quiet_after + deep_quiet_after
        assert server._driver.quiet_idle == QuietIdle(after=0.2, period=0.02, deep_after=0.4, deep_period=0.2)
        pub, sub = peer.open_duologue(peer.handshake())
        bell = server._driver.traffic
        wait_until(lambda: bell.quiet_for() > 1.0, 10, "a deep quiet spell", step=0.01)
        for i in range(3):
            peer.send(pub, b"ECHO deep %d" % i)
            assert peer.receive(sub, lambda m: True, timeout=10) == b"ECHO deep %d" % i
        assert server.stats.duologues == 1


def calls_in(server: DuologueServer, name: str, seconds: float) -> int:
    """Calls of the server's method ``name`` during ``seconds`` of wall time."""
    count = [0]
    method = getattr(server, name)

    def counted(*args: object) -> int:
        count[0] += 1
        return int(method(*args))

    setattr(server, name, counted)
    try:
        threading.Event().wait(seconds)  # the window being measured, not a synchronisation
    finally:
        delattr(server, name)
    return count[0]


@pytest.mark.timeout(60)
def test_a_quiet_server_reads_no_subscription_until_traffic_rings() -> None:
    # Heartbeats and status messages keep flowing on the idle duologues but never ring
    # the bell: no poll pass runs; the next message rings it and is answered.
    ports = BLOCKS.take()
    with make_server(ports, options={"quiet_after": 0.3, "quiet_period": 0.02}) as server, \
            raw_peer(ports) as peer:
        channels = [peer.open_duologue(peer.handshake()) for _ in range(3)]
        for pub, sub in channels:
            peer.send(pub, b"ECHO before")
            assert peer.receive(sub, lambda m: True) == b"ECHO before"
        assert server._driver is not None
        bell = server._driver.traffic
        wait_until(lambda: bell.quiet_for() > 0.5, 10, "a quiet spell", step=0.01)
        assert calls_in(server, "_poll_images", WINDOW) <= 1
        # nor the end-of-stream walk over every duologue image (an end of stream rings)
        assert calls_in(server, "_ends_of_stream", WINDOW) <= 1
        pub, sub = channels[1]
        peer.send(pub, b"ECHO after")
        assert peer.receive(sub, lambda m: True, timeout=10) == b"ECHO after"
        # a clean close after the quiet spell is still seen at its end of stream
        wait_until(lambda: bell.quiet_for() > 0.5, 10, "another quiet spell", step=0.01)
        assert server.stats.duologues == 3
        channels[0][0].close()
        wait_until(lambda: server.stats.duologues == 2, 10, "the closed duologue freed", step=0.01)


def test_idle_traffic_options_are_checked() -> None:
    from aeron_py.duologue.server.options import ServerOptions

    for bad in (0.05, 2.5):
        with pytest.raises(ValueError, match="keepalive_interval"):
            ServerOptions(keepalive_interval=bad)
    assert ServerOptions(keepalive_interval=None).keepalive_interval is None
