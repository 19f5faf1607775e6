"""The Echo server loop never blocks on the driver while it creates a duologue.

Duologue channels are added asynchronously and polled by the loop; an attempt
whose duologue is given up or shut down before the driver answers is cancelled
cleanly.  "The driver has not answered" is simulated by gating the loop's view of
its pending publication adds (the real add still completes underneath).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from aeron_py.client import Aeron
from aeron_py.echo.client import EchoClient
from echo_harness import HOST, PortBlocks, make_server, raw_peer, wait_idle, wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

BLOCKS = PortBlocks(30000, 31500)
LOOP_THREAD = "echo-server"


class _GatedAdd:
    """A pending add that looks unanswered until ``gate`` is set."""

    def __init__(self, add: Any, gate: threading.Event) -> None:
        self._add, self._gate = add, gate

    def poll(self) -> Any:
        return self._add.poll() if self._gate.is_set() else None


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[threading.Event]:
    """While the returned event is clear, the loop's duologue publication adds stay unanswered."""
    event = threading.Event()
    original = Aeron.async_add_exclusive_publication

    def gated(self: Aeron, channel: object, stream_id: int) -> Any:
        add = original(self, channel, stream_id)
        return _GatedAdd(add, event) if threading.current_thread().name == LOOP_THREAD else add

    monkeypatch.setattr(Aeron, "async_add_exclusive_publication", gated)
    yield event
    event.set()


def test_loop_never_calls_a_blocking_add(monkeypatch: pytest.MonkeyPatch) -> None:
    ports = BLOCKS.take(4)
    with make_server(ports) as server:
        blocking_calls: list[str] = []
        for name in ("add_subscription", "add_exclusive_publication", "add_publication"):
            original = getattr(Aeron, name)

            def spy(self: Aeron, *args: Any, _name: str = name, _original: Any = original, **kwargs: Any) -> Any:
                if threading.current_thread().name == LOOP_THREAD:
                    blocking_calls.append(_name)
                return _original(self, *args, **kwargs)
            monkeypatch.setattr(Aeron, name, spy)
        for _ in range(2):
            result = EchoClient(HOST, ports.port, ports.control, count=3, timeout=5).run()
            assert result.ok, result.reason
        wait_idle(server)
        assert blocking_calls == []
        assert server.stats.connects == 2


def test_duologue_given_up_while_unanswered_is_cancelled(gate: threading.Event) -> None:
    ports = BLOCKS.take(1)
    with make_server(ports, clients=1, options={"create_timeout": 1.5}) as server, raw_peer(ports) as peer:
        pub, sub = peer.initial()
        peer.send(pub, b"HELLO ABC")
        # the held CONNECT is dropped: the first reply is the refusal
        assert peer.reply_to(sub, pub).split(b" ", 1)[1] == b"ERROR server full"
        wait_until(lambda: server.stats.duologues == 0, 5, "the core to free the duologue")
        assert server.channel_count == 1  # the orphaned attempt still holds its ports
        gate.set()
        wait_idle(server)  # whatever the driver made is closed once it is seen
        # the same ports serve a new duologue (once the closed publication's linger ends)
        result = EchoClient(HOST, ports.port, ports.control, count=2, timeout=5).run()
        assert result.ok, result.reason


def test_shutdown_with_an_unanswered_duologue(gate: threading.Event) -> None:
    ports = BLOCKS.take(1)
    server = make_server(ports, clients=1)
    try:
        with raw_peer(ports) as peer:
            pub, sub = peer.initial()
            peer.send(pub, b"HELLO ABC")
            wait_until(lambda: server.stats.duologues == 1 and server.channel_count == 1, 5,
                       "a pending duologue")
            assert peer.silent(sub, 0.3) == []  # its CONNECT waits for channels that never come
            started = time.monotonic()
            server.close(timeout=10)
            assert time.monotonic() - started < 5
            assert server.channel_count == 0 and server.stats.duologues == 0
    finally:
        server.close()
