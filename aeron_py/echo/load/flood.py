"""A HELLO flood from many source addresses, for survival tests and the attack benchmark.

:class:`HelloFlood` opens one publication per source address (a manual-MDC
publication sending from that interface, like :class:`~.client.EchoClient` with
``interface=``) on its own embedded media driver, plus ``listeners`` subscriptions
to the server's broadcast (so the server's replies really leave), and offers
``HELLO <random key>`` on every publication, round robin, as fast as the offers are
taken, for a bounded time: :data:`BATCH` HELLOs per publication per call
(``offer_batch``), drawn from a pool of :data:`POOL` HELLOs built before the flood
starts, so the Python loop is not what limits the rate.  It never reads replies and never opens a duologue: the
server is left with duologues that expire.  Loopback only.
"""
from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ...channel import ChannelUri
from ...client import Aeron
from ...driver import MediaDriver
from ...idle import BackoffIdleStrategy
from ...publication import ExclusivePublication
from ...subscription import Subscription
from ...duologue.client_channels import DEFAULT_TERM_LENGTH, publication_channel
from ...duologue.core.protocol import STREAM_ID, format_hello

__all__ = ["BATCH", "POOL", "FloodReport", "HelloFlood"]

#: HELLOs offered per publication per call.
BATCH = 32
#: Distinct HELLOs (random keys) the flood draws its batches from.
POOL = 4096

logger = logging.getLogger(__name__)


@dataclass
class FloodReport:
    """What a flood sent."""

    sources: int
    seconds: float = 0.0
    hellos: int = 0
    refused_offers: int = 0  # offer_batch calls cut short (back pressure or not connected)
    connected_sources: int = 0
    per_source: dict[str, int] = field(default_factory=dict)


class HelloFlood:
    """HELLOs from ``sources`` (e.g. 127.0.0.2 ... 127.0.0.251) to ``address:port``."""

    def __init__(self, address: str, port: int, control_port: int, sources: Sequence[str], *,
                 listeners: int = 1, term_length: int = DEFAULT_TERM_LENGTH, seed: int | None = None) -> None:
        if not sources:
            raise ValueError("HelloFlood needs at least one source address")
        self.address, self.port, self.control_port = address, port, control_port
        self.sources = list(sources)
        self._rng = random.Random(seed)
        self._driver = MediaDriver(publication_linger_timeout_ns=0, term_buffer_length=term_length)
        self._aeron = Aeron(driver=self._driver, use_conductor_agent_invoker=True, client_name="hello-flood")
        self._pubs: list[ExclusivePublication] = []
        self._subs: list[Subscription] = []
        try:
            for source in self.sources:
                uri, destination = publication_channel(address, port, interface=source, term_length=term_length)
                pub = self._aeron.add_exclusive_publication(uri, STREAM_ID)
                if destination is not None:
                    pub.add_destination(destination)
                self._pubs.append(pub)
            for _ in range(listeners):
                self._subs.append(self._aeron.add_subscription(ChannelUri.udp(
                    control=(address, control_port), control_mode="dynamic", reliable=True), STREAM_ID))
        except BaseException:
            self.close()
            raise

    def run(self, seconds: float, connect_timeout: float = 5.0,
            on_start: Callable[[], None] | None = None) -> FloodReport:
        """Flood for ``seconds`` (after up to ``connect_timeout`` s for the publications to
        connect; ``on_start`` is called when the flood itself starts)."""
        report = FloodReport(sources=len(self.sources), per_source=dict.fromkeys(self.sources, 0))
        idle = BackoffIdleStrategy(max_park_ns=1_000_000)
        deadline = time.monotonic() + connect_timeout
        while time.monotonic() < deadline and not all(p.is_connected for p in self._pubs):
            idle.idle(self._aeron.do_work())
        report.connected_sources = sum(1 for p in self._pubs if p.is_connected)
        hellos = [format_hello(self._rng.getrandbits(32)) for _ in range(POOL)]
        batches = [hellos[i:i + BATCH] for i in range(0, POOL, BATCH)]
        turn = 0
        if on_start is not None:
            on_start()
        start = time.monotonic()
        end = start + seconds
        while time.monotonic() < end:
            sent = 0
            for index, (source, pub) in enumerate(zip(self.sources, self._pubs)):
                taken = pub.offer_batch(batches[(turn + index) % len(batches)])
                sent += taken
                report.per_source[source] += taken
                if taken < BATCH:
                    report.refused_offers += 1
            turn += 1
            for sub in self._subs:
                sub.poll_batch(100)  # keep up with the replies; never read
            report.hellos += sent
            idle.idle(sent + self._aeron.do_work())
        report.seconds = time.monotonic() - start
        logger.info("HELLO flood: %d HELLOs from %d sources in %.1f s", report.hellos, len(self.sources),
                    report.seconds)
        return report

    def close(self) -> None:
        for sub in self._subs:
            sub.close()
        for pub in self._pubs:
            pub.close()
        self._subs, self._pubs = [], []
        self._aeron.close()
        self._driver.close()

    def __enter__(self) -> "HelloFlood":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
