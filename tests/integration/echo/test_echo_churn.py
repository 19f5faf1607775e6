"""Slots come back fast: cleanly closed clients free their duologues at once."""
from __future__ import annotations

from collections import Counter

import pytest

from aeron_py.echo.load.generator import run_load
from echo_harness import HOST, PortBlocks, make_server, wait_idle

pytestmark = [pytest.mark.integration]

BLOCKS = PortBlocks(29000, 29500, size=150)


@pytest.mark.soak
@pytest.mark.timeout(150)
def test_churn_of_cleanly_closing_clients_never_fills_the_server() -> None:
    """50 clients connect, echo twice and close; 20 rounds back to back on 64 slots.

    A duologue holding its slot until image liveness (or a second of draining) made a
    third of these HELLOs ``server full``; the end of stream frees it at once."""
    ports = BLOCKS.take(64)
    sources = [f"127.0.0.{i}" for i in range(2, 22)]
    failures: Counter[str] = Counter()
    succeeded = 0
    with make_server(ports, clients=64, max_per_ip=64) as server:  # slots, not per-IP counts, are the limit
        for _ in range(20):
            report, _ = run_load(HOST, ports.port, ports.control, clients=50, sources=sources, echoes=2,
                                 timeout=10)
            failures.update(report.failures)
            succeeded += report.succeeded
        assert failures["server full"] == 0, dict(failures)
        assert succeeded == 1000, dict(failures)
        assert server.stats.connects == 1000
        wait_idle(server, timeout=10)
