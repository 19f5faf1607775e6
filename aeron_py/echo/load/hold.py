"""Hold mode of the Echo 2.0 load generator: thousands of duologues kept open by one thread.

:class:`ClientScheduler` steps :class:`~aeron_py.echo.client.EchoClient` objects only
when they need it (:meth:`~aeron_py.echo.client.EchoClient.next_step_at`): clients
that are handshaking or awaiting an echo every pass, the others from a deadline heap
(their next echo, or a connection check once a second).  A pass therefore costs one
``aeron.do_work()`` plus work proportional to activity, not to the number of clients.

:func:`run_hold` grows the number of held duologues through ``steps`` (at most
``batch`` handshakes in flight; a client that fails is replaced, up to
``retry_share`` of the step's new clients), holds each step idle for ``hold_s`` seconds, then
(with ``echo_s``) while every client echoes ``rate`` times a second, and reports
each stage through ``on_event`` (the CLI prints them as ``EVENT <json>`` lines, so a
benchmark can measure the server while a stage lasts), and while a step grows, every
``progress_s`` seconds, a ``growing`` event: the clients held (and still alive), in flight
and failed so far.  A step that holds fewer
than ``min_held`` of its target ends the growth.  :func:`run_handshakes` times
``count`` complete handshakes (open, CONNECT, first echo, close) with at most
``concurrency`` in flight.
"""
from __future__ import annotations

import heapq
import itertools
import math
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...client import Aeron
from ...driver import MediaDriver
from ...duologue.core.capacity import counters_buffer_length
from ...duologue.client_security import ClientSecurity
from ..client.sync import EchoClient
from ...errors import AeronError, error_summary
from ...idle import BackoffIdleStrategy
from ...traffic import QuietIdle

#: Media driver settings of the load process: small sparse logs, short linger, SHARED, and
#: a client liveness long enough that a starved process (2 busy cores) keeps its clients.
LOAD_DRIVER_OPTIONS: dict[str, Any] = {
    "publication_linger_timeout_ns": 100_000_000, "term_buffer_sparse_file": True,
    "term_buffer_length": 64 * 1024, "client_liveness_timeout_ns": 30_000_000_000,
    "publication_unblock_timeout_ns": 45_000_000_000,  # Aeron requires unblock > client liveness
    # the clients' broadcast subscriptions share one image: tethered, the slowest one held
    # its position for all, the server's broadcast became back-pressured and CONNECTs were lost
    "tether_subscriptions": False}
#: Seconds the load's Aeron client waits for its driver's keepalive (see LOAD_DRIVER_OPTIONS).
LOAD_DRIVER_TIMEOUT = 30.0

Event = Callable[[dict[str, Any]], None]


def _summary_us(values: Sequence[float]) -> dict[str, Any]:
    ordered = sorted(v * 1e6 for v in values)
    out: dict[str, Any] = {"count": len(ordered)}
    if ordered:
        for q in (50, 90, 99):
            out[f"p{q}_us"] = round(ordered[min(len(ordered), max(1, math.ceil(q / 100 * len(ordered)))) - 1], 1)
        out["max_us"] = round(ordered[-1], 1)
    return out


@dataclass
class HoldPlan:
    """What :func:`run_hold` does; see the module docstring."""

    steps: Sequence[int]
    hold_s: float
    echo_s: float = 0.0
    rate: float = 1.0
    batch: int = 100
    timeout: float = 10.0
    hello_interval: float = 5.0
    min_held: float = 0.99
    retry_share: float = 0.1
    #: seconds between two ``growing`` events while a step grows (held, in flight, failed)
    progress_s: float = 2.0
    #: the held clients' driver thins idle heartbeats and status messages to one per this
    #: many seconds (None: Aeron's 0.1 s and 0.2 s, as clients on Aeron's defaults, e.g.
    #: the Java reference, send them)
    keepalive_interval: float | None = 1.0

    @property
    def counters_buffer_length(self) -> int:
        """The load driver's counters buffer (:mod:`.echo.capacity`): room for every client
        of the last step and the batch handshaking on top."""
        return counters_buffer_length(max(self.steps) + self.batch)

    def __post_init__(self) -> None:
        if not self.steps or any(b <= a for a, b in zip(self.steps, self.steps[1:])) or self.steps[0] < 1:
            raise ValueError(f"steps must be increasing counts >= 1, got {list(self.steps)}")
        if not (self.hold_s >= 0 and self.echo_s >= 0 and self.rate > 0 and self.batch >= 1 and self.timeout > 0
                and self.progress_s > 0):
            raise ValueError("hold_s and echo_s must be >= 0, rate, timeout and progress_s > 0, batch >= 1")
        if self.keepalive_interval is not None and not 0.1 <= self.keepalive_interval <= 2:
            raise ValueError(f"keepalive_interval must be None or in [0.1, 2] seconds, got {self.keepalive_interval!r}")


class ClientScheduler:
    """Steps many clients of one shared Aeron client, each only when it needs it."""

    def __init__(self, aeron: Aeron, max_park_ns: int = 1_000_000,
                 should_stop: Callable[[], bool] = lambda: False) -> None:
        self.aeron = aeron
        self.should_stop = should_stop
        self.active: list[EchoClient] = []
        self.finished: list[EchoClient] = []
        self._sleeping: list[tuple[float, int, EchoClient]] = []
        self._seq = itertools.count()
        self._idle = BackoffIdleStrategy(max_park_ns=max_park_ns)
        self.passes = 0
        self.steps = 0

    def add(self, client: EchoClient) -> None:
        self.active.append(client)

    def wake_all(self) -> None:
        """Step every sleeping client on the next pass (after changing their plans)."""
        self.active.extend(entry[2] for entry in self._sleeping)
        self._sleeping.clear()

    def run_once(self) -> int:
        """One pass: the client conductor, due clients, then idle if nothing happened."""
        now = time.monotonic()
        work = self.aeron.do_work()
        sleeping = self._sleeping
        while sleeping and sleeping[0][0] <= now:
            self.active.append(heapq.heappop(sleeping)[2])
        still: list[EchoClient] = []
        for client in self.active:
            work += client.step(now)
            due = client.next_step_at(now)
            if due <= now:
                still.append(client)
            elif due == math.inf:
                self.finished.append(client)
            else:
                heapq.heappush(sleeping, (due, next(self._seq), client))
        self.steps += len(self.active)
        self.active = still
        self.passes += 1
        self._idle.idle(work)
        return work

    def run_until(self, done: Callable[[], bool], deadline: float) -> bool:
        """Pass until ``done()`` or the monotonic ``deadline``; returns ``done()``."""
        while not done():
            if time.monotonic() >= deadline or self.should_stop():
                return done()
            self.run_once()
        return True

    def pump(self, seconds: float) -> None:
        """Keep passing for ``seconds`` (less if told to stop)."""
        end = time.monotonic() + seconds
        while time.monotonic() < end and not self.should_stop():
            self.run_once()


def _failure(client: EchoClient) -> str:
    r = client.result
    return "deadline" if r is None else (r.server_reason or r.reason or "?")


@dataclass
class _Connector:
    """Opens clients until a target is reached, at most ``batch`` handshaking at once."""

    sched: ClientScheduler
    make: Callable[[int], EchoClient]
    batch: int
    #: called every ``progress_s`` while growing with (held and alive, in flight, failed so far)
    on_progress: Callable[[int, int, int], None] = lambda held, inflight, failed: None
    progress_s: float = 2.0
    opened: int = 0
    open_errors: Counter[str] = field(default_factory=Counter)

    def grow(self, held: list[EchoClient], target: int, deadline: float,
             retries: int = 0) -> tuple[list[EchoClient], list[float]]:
        """Open clients until ``target`` hold, replacing up to ``retries`` that fail;
        returns the clients that failed and the open -> holding times of the others."""
        inflight: dict[EchoClient, float] = {}
        failed: list[EchoClient] = []
        times: list[float] = []
        budget = target - len(held)
        next_report = time.monotonic() + self.progress_s
        while (budget > 0 or inflight) and time.monotonic() < deadline and not self.sched.should_stop():
            while budget > 0 and len(inflight) < self.batch:
                client = self.make(self.opened)
                self.opened += 1
                budget -= 1
                try:
                    client.open()
                except AeronError as exc:  # e.g. a starved driver did not answer an add in time
                    self.open_errors[error_summary(exc)[:100]] += 1
                    client.close()
                    if len(failed) + sum(self.open_errors.values()) > retries + 10:
                        budget = 0  # the driver is not keeping up: stop opening
                    continue
                inflight[client] = time.monotonic()
                self.sched.add(client)
            self.sched.run_once()
            now = time.monotonic()
            for client, opened_at in list(inflight.items()):
                if client.holding:
                    held.append(client)
                    times.append(now - opened_at)
                elif client.finished:
                    failed.append(client)
                    if len(failed) <= retries:
                        budget += 1
                else:
                    continue
                del inflight[client]
            if now >= next_report:
                self.on_progress(len(_held_alive(held)), len(inflight), len(failed))
                next_report = now + self.progress_s
        failed.extend(inflight)  # still handshaking at the deadline
        return failed, times


def _held_alive(held: list[EchoClient]) -> list[EchoClient]:
    return [c for c in held if not c.finished]


def _stage(sched: ClientScheduler, held: list[EchoClient], seconds: float) -> dict[str, Any]:
    """Pass for ``seconds`` and report what the scheduler did meanwhile."""
    passes, steps, start = sched.passes, sched.steps, time.monotonic()
    sched.pump(seconds)
    alive = _held_alive(held)
    return {"seconds": round(time.monotonic() - start, 3), "held_after": len(alive),
            "dropped": Counter(_failure(c) for c in held if c.finished), "passes": sched.passes - passes,
            "client_steps": sched.steps - steps}


#: The load driver's idle: quiet 1 s after the last traffic, deep quiet (5 duty cycles a
#: second) 16 s after it, as the server's defaults; the echo stage's traffic keeps it hot.
LOAD_QUIET = QuietIdle(after=1.0, period=0.02, deep_after=16.0, deep_period=0.2)


def load_security(driver: MediaDriver, server_key: bytes | None) -> ClientSecurity | None:
    """Secure mode for the load's clients on ``driver`` (made with ``secure_transport=True``), pinned
    to ``server_key``; None (plain) without a key."""
    return None if server_key is None else ClientSecurity(server_key=server_key, transport=driver.secure_transport)


def run_hold(address: str, port: int, control_port: int, plan: HoldPlan, *, sources: Sequence[str] = (),
             on_event: Event = lambda event: None, should_stop: Callable[[], bool] = lambda: False,
             rng: random.Random | None = None, server_key: bytes | None = None) -> dict[str, Any]:
    """Grow through ``plan.steps``, holding each; returns the summary (see module docstring).
    ``server_key``: secure mode against a server with that public key."""
    rng = rng or random.Random()
    srcs: list[str | None] = list(sources) or [None]
    steps_out: list[dict[str, Any]] = []
    summary: dict[str, Any] = {"plan": {k: (list(v) if k == "steps" else v) for k, v in vars(plan).items()},
                               "sources": len(srcs), "steps": steps_out, "max_held": 0}
    # quiet idle: the held clients' driver sleeps between duty cycles while nothing but
    # heartbeats flows, so that the load's own driver does not starve the server on 2 cores
    thinning: dict[str, Any] = {}
    if plan.keepalive_interval is not None:
        thinning["keepalive_interval_ns"] = round(plan.keepalive_interval * 1e9)
    with MediaDriver(**LOAD_DRIVER_OPTIONS, **thinning, counters_buffer_length=plan.counters_buffer_length,
                     quiet_idle=LOAD_QUIET, secure_transport=server_key is not None) as driver, \
            Aeron(driver=driver, use_conductor_agent_invoker=True, client_name="echo-load-hold",
                  timeout=LOAD_DRIVER_TIMEOUT) as aeron:
        sched = ClientScheduler(aeron, should_stop=should_stop)
        security = load_security(driver, server_key)

        def make(i: int) -> EchoClient:
            return EchoClient(address, port, control_port, count=1, timeout=plan.timeout, interface=srcs[i % len(srcs)],
                              hello_interval=plan.hello_interval, aeron=aeron, hold=True, rng=rng, secure=security)

        held: list[EchoClient] = []
        target = 0

        def growing(alive: int, inflight: int, failed: int) -> None:
            on_event({"event": "growing", "target": target, "held": alive, "in_flight": inflight, "failed": failed})

        connector = _Connector(sched, make, plan.batch, growing, plan.progress_s)
        try:
            for target in plan.steps:
                if should_stop():
                    break
                started = time.monotonic()
                failed, times = connector.grow(held, target, started + plan.timeout * (3 + target / plan.batch),
                                               retries=int(plan.retry_share * (target - len(held))))
                held = _held_alive(held)
                step: dict[str, Any] = {
                    "event": "step", "target": target, "held": len(held), "connect_s": round(time.monotonic() - started, 3),
                    "failures": dict(Counter(_failure(c) for c in failed) + connector.open_errors),
                    "open_to_first_echo": _summary_us(times), "load_driver_dir": driver.dir}
                for client in failed:
                    client.close()
                if len(held) >= plan.min_held * target:
                    summary["max_held"] = len(held)
                on_event(step)
                if plan.hold_s > 0 and not should_stop():
                    on_event({"event": "hold", "mode": "idle", "target": target, "held": len(held)})
                    step["idle"] = _stage(sched, held, plan.hold_s)
                    on_event({"event": "held", "mode": "idle", "target": target, **step["idle"]})
                if plan.echo_s > 0 and not should_stop():
                    driver.traffic.touch()  # about to send: leave (deep) quiet now, not a period later
                    step["echo"] = _echo_stage(sched, held, plan, rng, on_event, target)
                held = _held_alive(held)
                steps_out.append(step)
                if len(held) < plan.min_held * target:
                    break
        except AeronError as exc:  # e.g. this process's client lost its driver: report what was held
            summary["error"] = error_summary(exc)
            on_event({"event": "error", "target": target, "held": len(_held_alive(held)), "error": summary["error"]})
        finally:
            for client in held:
                client.release()
                client.close()
            sched.pump(0.2)  # close commands reach the driver; end-of-stream frames leave
        summary["opened"] = connector.opened
    return summary


def _echo_stage(sched: ClientScheduler, held: list[EchoClient], plan: HoldPlan, rng: random.Random,
                on_event: Event, target: int) -> dict[str, Any]:
    """Every held client echoes ``rate``/s for ``echo_s`` s, first echoes spread over one interval."""
    interval = 1.0 / plan.rate
    count = max(1, round(plan.echo_s * plan.rate))
    now = time.monotonic()
    marks = {}
    for client in held:
        if client.holding:
            marks[client] = len(client.rtts)
            client.echo_more(count, interval, now + rng.uniform(0.0, interval))
    sched.wake_all()
    on_event({"event": "hold", "mode": "echo", "target": target, "held": len(marks), "rate": plan.rate})
    stage = _stage(sched, held, plan.echo_s + interval)
    sched.run_until(lambda: all(c.holding or c.finished for c in marks), time.monotonic() + plan.timeout)
    rtts = [rtt for c, mark in marks.items() for rtt in c.rtts[mark:]]
    stage.update(expected=count * len(marks), rtt=_summary_us(rtts),
                 dropped=dict(Counter(_failure(c) for c in marks if c.finished)))
    on_event({"event": "held", "mode": "echo", "target": target, **stage})
    return stage


def run_handshakes(address: str, port: int, control_port: int, *, count: int, concurrency: int,
                   sources: Sequence[str] = (), timeout: float = 10.0, hello_interval: float = 1.0,
                   server_key: bytes | None = None) -> dict[str, Any]:
    """``count`` complete handshakes (open -> CONNECT -> first echo -> close), at most
    ``concurrency`` in flight; rate = completed / wall time.  ``server_key``: secure mode."""
    srcs: list[str | None] = list(sources) or [None]
    with MediaDriver(**LOAD_DRIVER_OPTIONS, secure_transport=server_key is not None) as driver, \
            Aeron(driver=driver, use_conductor_agent_invoker=True, client_name="echo-load-handshakes",
                  timeout=LOAD_DRIVER_TIMEOUT) as aeron:
        sched = ClientScheduler(aeron)
        security = load_security(driver, server_key)
        connector = _Connector(sched, lambda i: EchoClient(
            address, port, control_port, count=1, timeout=timeout, interface=srcs[i % len(srcs)],
            hello_interval=hello_interval, aeron=aeron, hold=True, secure=security), concurrency)
        done: list[EchoClient] = []
        handshakes: list[float] = []
        failures: Counter[str] = Counter()
        started = time.monotonic()
        deadline = started + timeout * (3 + count / concurrency)
        while connector.opened < count and time.monotonic() < deadline:
            held: list[EchoClient] = []
            failed, _ = connector.grow(held, min(concurrency, count - connector.opened), deadline)
            failures.update(_failure(c) for c in failed)
            for client in (*held, *failed):
                if client.handshake is not None and client in held:
                    handshakes.append(client.handshake)
                client.release()
                client.close()
            done += held
        wall = time.monotonic() - started
        sched.pump(0.2)
    return {"count": count, "concurrency": concurrency, "ok": len(done), "failures": dict(failures),
            "wall_s": round(wall, 3), "rate_per_s": round(len(done) / wall, 2) if wall > 0 else None,
            "hello_to_connect": {k.replace("_us", "_ms"): (round(v / 1000, 3) if k != "count" else v)
                                 for k, v in _summary_us(handshakes).items()}}
