"""What an Echo benchmark run measures (:class:`Plan`), its constants and summaries."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from aeron_py.echo.load.generator import percentile  # nearest-rank, as the load tool reports

from benchmarks.harness import summarize

PAYLOAD = "0123456789abcdef0123456789abcdef"  # 32 B; every message is b"ECHO " + this
MESSAGE = b"ECHO " + PAYLOAD.encode("ascii")
TERM_LENGTH = 64 * 1024
LOOPBACK = "127.0.0.1"
LINE_PREFIX = "@@"  # marks protocol lines on a child's stdout
GIB = 1 << 30
# server-side driver options the Echo server uses (echo/server.py), mirrored by the raw pong
SERVER_DRIVER_OPTIONS: dict[str, int] = {
    "publication_reserved_session_id_low": 1, "publication_reserved_session_id_high": 2**31 - 1,
    "publication_linger_timeout_ns": 200_000_000, "timer_interval_ns": 100_000_000}
# client-side driver options EchoClient uses (echo/client.py), mirrored by the raw ping
CLIENT_DRIVER_OPTIONS: dict[str, int] = {"publication_linger_timeout_ns": 100_000_000}
LOOP_MAX_PARK_NS = 1_000_000
IDLE_CPU_WINDOW_S = 3.0  # CPU use of the processes holding the duologues, measured after each step
CLIENT_TIMEOUT_S = 30.0  # EchoClient's no-progress timeout in parts 2 and 3
CAPACITY_HELLO_INTERVAL_S = 5.0  # fewer duplicate HELLOs while the ramp loads the server
PHASES = ("join", "hello", "duologue", "echo")  # EchoClient phases, in order
STOP_TIMEOUT_S = 30.0
KILL_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Plan:
    """What a run measures; ``quick`` shrinks every part."""

    quick: bool
    rtt_rounds: int
    rtt_warmup: int
    rtt_samples: int
    sequential: int
    concurrent: tuple[int, ...]
    handshake_sources: int
    capacity_steps: tuple[int, ...]
    capacity_sources: int
    capacity_workers: int
    capacity_batch: int
    capacity_budget_s: float
    settle_timeout_s: float
    settle_every_step: bool  # else only the last step waits for lingering images to go

    @staticmethod
    def make(quick: bool) -> "Plan":
        if quick:
            return Plan(quick=True, rtt_rounds=3, rtt_warmup=1000, rtt_samples=3000, sequential=60,
                        concurrent=(100,), handshake_sources=16, capacity_steps=(100, 250, 500, 1000),
                        capacity_sources=64, capacity_workers=2, capacity_batch=25, capacity_budget_s=120.0,
                        settle_timeout_s=20.0, settle_every_step=False)
        return Plan(quick=False, rtt_rounds=6, rtt_warmup=2000, rtt_samples=5000, sequential=200,
                    concurrent=(100, 300), handshake_sources=16,
                    capacity_steps=(100, 250, 500, 750, 1000, 1250, 1500, 1750, 2000, 2500, 3000, 4000),
                    capacity_sources=64, capacity_workers=2, capacity_batch=25, capacity_budget_s=330.0,
                    settle_timeout_s=20.0, settle_every_step=True)

    @property
    def capacity_max_clients(self) -> int:
        """Server limit: the largest step plus room for duplicate (expiring) duologues."""
        return int(self.capacity_steps[-1] * 1.2)


def sources(count: int, first: int = 2) -> list[str]:
    """``count`` loopback source addresses 127.0.0.<first>..."""
    if not 1 <= count <= 250:
        raise ValueError(f"sources: count must be in [1, 250], got {count}")
    return [f"127.0.0.{first + i}" for i in range(count)]



def summary_us(samples_us: Sequence[float]) -> dict[str, float]:
    """RTT summary of samples already in microseconds."""
    return summarize(samples_us, percentile=percentile)


def summary_ms(samples_s: Sequence[float]) -> dict[str, float]:
    """Latency summary in milliseconds of samples in seconds."""
    return summarize(samples_s, scale=1e3, digits=2, quantiles=(50, 90, 99), percentile=percentile)


def server_config(port: int, base: int, max_clients: int, max_per_ip: int, *,
                   max_image_term: int | None = None) -> dict[str, Any]:
    return {"port": port, "control_port": port + 1, "base_port": base, "max_clients": max_clients,
            "max_per_ip": max_per_ip, "term_length": TERM_LENGTH, "max_image_term_length": max_image_term}
