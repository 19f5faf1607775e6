"""Many EchoClients on one driver in a ``clients`` child: open, step, report."""
from __future__ import annotations

import logging
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.harness.probes import driver_log_usage, mapped_counter

from .plan import LOOP_MAX_PARK_NS, LOOPBACK, PAYLOAD, PHASES, TERM_LENGTH

child_log = logging.getLogger("benchmarks.echo_bench.child")


@dataclass
class _Tracked:
    client: Any
    opened_at: float
    done_at: float | None = None
    reached: dict[str, float] = field(default_factory=dict)  # phase -> first seen (monotonic s)

    def note_phase(self, now: float) -> None:
        self.reached.setdefault(self.client.phase.value, now)

    def phase_times(self) -> dict[str, float]:
        """Seconds spent in each of :data:`PHASES` (NaN where a phase was never left)."""
        starts = [self.opened_at] + [self.reached.get(name, math.nan) for name in ("hello", "duologue", "echo", "done")]
        return {name: starts[i + 1] - starts[i] for i, name in enumerate(PHASES)}


@dataclass
class ClientPool:
    """Many EchoClients on one shared driver + conductor-invoker Aeron client."""

    aeron: Any
    driver: Any
    port: int
    live: list[Any] = field(default_factory=list)

    def _new(self, source: str, timeout: float, hello_interval: float = 1.0) -> Any:
        from aeron_py.echo.client import EchoClient

        return EchoClient(LOOPBACK, self.port, self.port + 1, count=1, message=PAYLOAD, timeout=timeout,
                          interface=source, term_length=TERM_LENGTH, hello_interval=hello_interval,
                          aeron=self.aeron)

    def _drive(self, group: list[_Tracked], deadline: float) -> None:
        """Step ``group`` until every client finished or ``deadline``."""
        from aeron_py.idle import BackoffIdleStrategy

        idle = BackoffIdleStrategy(max_park_ns=LOOP_MAX_PARK_NS)
        pending = list(group)
        while pending and time.monotonic() < deadline:
            now = time.monotonic()
            work = self.aeron.do_work()
            still = []
            for t in pending:
                work += t.client.step(now)
                t.note_phase(now)
                if t.client.finished:
                    t.done_at = now
                else:
                    still.append(t)
            pending = still
            idle.idle(work)

    def _report(self, tracked: list[_Tracked], started: float, opened: float | None) -> dict[str, Any]:
        ok = [t for t in tracked if t.client.result is not None and t.client.result.ok]
        failures = Counter(
            (t.client.result.server_reason or t.client.result.reason or "?") if t.client.result else "bench deadline"
            for t in tracked if t not in ok)
        last = max((t.done_at for t in ok if t.done_at is not None), default=started)
        return {"n": len(tracked), "ok": len(ok), "failures": dict(failures), "wall_s": round(last - started, 3),
                "open_s": None if opened is None else round(opened - started, 3),
                "total_s": [t.done_at - t.opened_at for t in ok if t.done_at is not None],
                "handshake_s": [t.client.result.handshake for t in ok if t.client.result.handshake is not None],
                "phases_s": {name: [t.phase_times()[name] for t in ok] for name in PHASES}}

    def open(self, n: int, srcs: Sequence[str], timeout: float, batch: int,
             hello_interval: float = 1.0, budget_s: float = math.inf) -> dict[str, Any]:
        """Open ``n`` clients ``batch`` at a time, each to its first echo; keep the good ones.
        No batch starts after ``budget_s``."""
        started = time.monotonic()
        tracked: list[_Tracked] = []
        opened = None
        for first in range(0, n, batch):
            if time.monotonic() - started > budget_s:
                child_log.warning("open: budget of %.0f s used up after %d of %d clients", budget_s, first, n)
                break
            group = []
            for i in range(first, min(n, first + batch)):
                client = self._new(srcs[i % len(srcs)], timeout, hello_interval)
                group.append(_Tracked(client, time.monotonic()))
                client.open()
            opened = opened or time.monotonic()
            self._drive(group, time.monotonic() + 3 * timeout + 10)
            tracked += group
            good = sum(t.client.result is not None and t.client.result.ok for t in group)
            child_log.info("open: %d/%d done, %d ok in this batch, %.1f s", len(tracked), n, good,
                           time.monotonic() - started)
            if 2 * good < len(group):
                child_log.warning("open: stopping after %d of %d clients: only %d of the last %d connected",
                                  len(tracked), n, good, len(group))
                break
        report = self._report(tracked, started, opened)
        for t in tracked:
            if t.client.result is not None and t.client.result.ok:
                self.live.append(t.client)
            else:
                t.client.close()
        return report

    def sequential(self, n: int, srcs: Sequence[str], timeout: float) -> dict[str, Any]:
        """``n`` clients one after another: open, first echo, close."""
        started = time.monotonic()
        tracked: list[_Tracked] = []
        for i in range(n):
            t = _Tracked(self._new(srcs[i % len(srcs)], timeout), time.monotonic())
            t.client.open()
            self._drive([t], time.monotonic() + 3 * timeout + 10)
            t.client.close()
            tracked.append(t)
        return self._report(tracked, started, None)

    def close_all(self) -> int:
        closed, self.live = self.live, []
        for client in closed:
            client.close()
        self.pump(0.3)  # invoker mode: close commands reach the driver in do_work
        return len(closed)

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.aeron.do_work()
            time.sleep(0.005)

    def stats(self) -> dict[str, Any]:
        usage = driver_log_usage(self.driver.dir)
        return {"clients": len(self.live), "counter_bytes": mapped_counter(self.driver.dir),
                "log_bytes": usage["log_bytes"], "publications": usage["publications"], "images": usage["images"]}
