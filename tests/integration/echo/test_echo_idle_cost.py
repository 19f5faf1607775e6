"""Idle duologues cost the loop nothing per pass: its Python calls do not grow with their number.

The loop's Python-level calls (``sys.setprofile``: Python functions and C functions
called from Python) are counted per function over K passes on the server's own thread,
with 10 idle duologues and again with 500.  A per-duologue call in a pass (a poll per
subscription) or in a 100 ms tick (a snapshot per duologue) makes some function's
calls per pass grow with the count; polling all of them is one call into C.
"""
from __future__ import annotations

import sys
import threading
from collections import Counter
from types import FrameType
from typing import Any

import pytest

from aeron_py.echo import STREAM_ID
from aeron_py.duologue.client_channels import publication_channel
from aeron_py.duologue.server import DuologueServer
from echo_harness import HOST, PortBlocks, RawPeer, make_server, raw_peer, wait_until

pytestmark = [pytest.mark.integration]

BLOCKS = PortBlocks(25600, 27000, size=1100)  # 500 duologues: 1000 ports
PASSES = 400
SECONDS = 1.0


class LoopProfile:
    """Counts the server loop's Python-level calls per function over at least ``passes``
    passes and ``seconds`` of loop time (several 100 ms ticks)."""

    def __init__(self, server: DuologueServer, passes: int = PASSES, seconds: float = SECONDS) -> None:
        self.calls: Counter[str] = Counter()
        self.passes = 0
        self.seconds = 0.0
        done = threading.Event()
        iterate = server._iterate

        def profiled_iterate(now: float) -> int:  # runs on the loop thread
            if self.passes == 0:
                self._start = now
                sys.setprofile(self._count)
            elif self.passes >= passes and now - self._start >= seconds:
                sys.setprofile(None)
                del server._iterate  # type: ignore[attr-defined]  # back to the class's method
                self.seconds = now - self._start
                done.set()
                return iterate(now)
            self.passes += 1
            return iterate(now)

        server._iterate = profiled_iterate  # type: ignore[method-assign]
        wait_until(done.is_set, 60, f"{passes} profiled loop passes")

    def _count(self, frame: FrameType, event: str, arg: Any) -> None:
        if event == "call":
            self.calls[frame.f_code.co_qualname] += 1
        elif event == "c_call":
            self.calls[getattr(arg, "__qualname__", repr(arg))] += 1

    def per_second(self) -> dict[str, float]:
        return {name: count / self.seconds for name, count in self.calls.items()}

    def per_pass(self) -> float:
        return sum(self.calls.values()) / self.passes


def open_idle_duologues(peer: RawPeer, initials: list[tuple[Any, Any]], keys: range) -> None:
    """HELLO -> CONNECT for each key, one HELLO in flight per initial publication (a reply
    names its initial session), then a duologue publication each, added asynchronously
    (silent: the server keeps a duologue while its client image lives)."""
    adds = []
    for start in range(keys.start, keys.stop, len(initials)):
        batch = list(zip(range(start, min(start + len(initials), keys.stop)), initials))
        for key, (pub, _) in batch:
            peer.send(pub, f"HELLO {key:X}".encode())
        for key, (pub, sub) in batch:
            _, _, data_port, _, crypt = peer.reply_to(sub, pub).split(b" ")
            uri, _ = publication_channel(HOST, int(data_port), session_id=key ^ int(crypt, 16))
            adds.append(peer.aeron.async_add_exclusive_publication(uri, STREAM_ID))
    pubs = []

    def answered() -> bool:
        pending = []
        for add in adds:
            made = add.poll()
            (pending if made is None else pubs).append(add if made is None else made)
        adds[:] = pending
        return not adds

    try:
        wait_until(answered, 30, "the duologue publications")
    finally:
        for made in pubs:
            peer.keep(made)


def connected(server: DuologueServer) -> int:
    return sum(d.connected for d in server.duologues)


@pytest.mark.timeout(150)
def test_five_hundred_idle_duologues_cost_no_python_call_per_pass() -> None:
    ports = BLOCKS.take(500)
    options = {"endpoint_filter": False, "max_creating": 16}
    # expiry: no never-joined deadline of the duologues just opened falls due while measuring
    # (each would be one heap pop: work for a duologue created `expiry` s before, not idle work)
    with make_server(ports, clients=500, max_per_ip=500, expiry=600.0, options=options) as server, \
            raw_peer(ports) as peer:
        initial = [peer.initial() for _ in range(16)]
        open_idle_duologues(peer, initial, range(1, 11))
        wait_until(lambda: connected(server) == 10, 20, "10 connected duologues")
        few = LoopProfile(server)
        open_idle_duologues(peer, initial, range(11, 501))
        wait_until(lambda: connected(server) == 500, 60, "500 connected duologues")
        many = LoopProfile(server)
    # Per second, so that what a tick does counts the same however fast the passes went.
    before, after = few.per_second(), many.per_second()
    grown = {name: (round(before.get(name, 0.0)), round(rate)) for name, rate in after.items()
             if rate > 2 * before.get(name, 0.0) + 20}
    assert not grown, f"calls per second that grew with the duologue count (10 -> 500): {grown}"
    assert many.per_pass() <= 1.5 * few.per_pass() + 5, (few.per_pass(), many.per_pass())
    assert not any(name.endswith("Subscription.poll") for name in after)  # one PollSet.poll for all
