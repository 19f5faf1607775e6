"""Echo 2.0 benchmark: RTT against raw aeron_py, handshake rate, duologue capacity.

    python benchmarks/echo_bench.py [--quick] [--out-dir DIR] [--log-level LEVEL]

Writes ``results/echo.json`` (every number, settings, machine info, load averages)
and ``results/echo.png`` (RTT bars; server memory against duologues).  Loopback only;
every media driver is SHARED with the ``backoff`` idle strategy and every Python loop
idles with ``BackoffIdleStrategy(max_park_ns=1 ms)`` (what ``EchoServer`` and
``EchoClient`` use); nothing busy-spins.  ``--quick`` takes 1.5-2.5 minutes, the
full run 5-8 (more on a busy machine).  Not part of pytest.  Exit status 1 if a part
failed (its error is in the JSON; the other parts still run).

Process layout: this process only orchestrates.  Every server and every client runs
in a child process (``--role``) with its own embedded driver in a directory under
/dev/shm named after this process and removed at the end.  Children talk JSON lines
over stdin/stdout, exit when stdin closes (and get SIGTERM via ``PR_SET_PDEATHSIG`` if
this process dies), and are stopped with bounded waits, then SIGTERM, then SIGKILL.

1. RTT.  Echo: ``EchoServer`` in one process, one ``EchoClient`` (one echo in
   flight, ``ECHO`` + 32 B payload = 37 B messages, warm-up, then samples) in
   another.  Raw: a pong process and a ping process with the *same* channel shapes
   (client publication to ``endpoint=``, server publication ``control-mode=dynamic``
   MDC, explicit ``session-id``, 64 KiB terms), the same messages, the same driver
   options on each side (server side: reserved session ids, 0.2 s linger, 100 ms
   timer; client side: 0.1 s linger), conductor-invoker clients and the loop shape
   and RTT clock of ``EchoClient``'s step (``now`` taken at the top of an iteration).
   Rounds alternate echo and raw with fresh processes; the headline pools all rounds'
   samples (median-of-rounds is reported too); ratio = echo / raw.  Each round also
   records CPU per round trip of each side (driver vs Python threads).
2. Handshakes.  One server; one client process runs N sequential clients (open ->
   HELLO -> CONNECT -> duologue -> first ECHO back -> close), then K concurrent ones
   (all opened, then stepped together).  Rate = completions / wall time from the
   first open to the last first echo; per-phase times are reported.  Sources rotate
   over 127.0.0.x and the per-IP limit is raised so it is not what is measured.
   ``duplicate_connects`` = CONNECTs beyond one per client.
3. Capacity.  A fresh server (64 KiB term, client images capped at 64 KiB) and two
   client processes (one driver each, 64 KiB client terms) that open clients from 64
   source addresses, 25 at a time per process, keep them connected and grow the
   total in steps until a step does not hold or the time budget is used.  Capacity
   clients re-send HELLO every 5 s (not 1 s) so a loaded server is not flooded with
   duplicates.  After each step: the server driver's ``Bytes currently mapped``
   counter, the log files in its directory, the server RSS, and (after a 3 s window)
   idle CPU of the server and client processes, split into driver and Python threads;
   "settled" = once the clients' lingering initial images are gone (~11 s).

Findings (Aeron 1.54 C driver; read from its source, confirmed by measurement):
- ``Bytes currently mapped`` never goes down: ``aeron_raw_log_free`` zeroes
  ``mapped_file.length`` before the native resource agent subtracts it, so it is a
  "bytes ever mapped" counter (each part uses a fresh server).  Images are also
  counted twice (``aeron_publication_image_create`` adds the log length on top of the
  resource agent's mapping).  A duologue thus adds 5 log lengths (~980 KiB) to the
  counter while the driver keeps 2 log files (2 x 196 KiB); both are reported and
  the 1 GiB target is judged on each.  Logs are sparse: tmpfs holds only the pages
  touched (``log_blocks_bytes``, ~8 KiB per log here).
- Joining a ``control-mode=dynamic`` channel takes ~100 ms (the publication answers
  the receiver's setup-eliciting status message on its 100 ms setup/heartbeat
  timer), and a handshake joins two (all-clients, then duologue): ~200 ms per client,
  so sequential handshakes run at ~5/s; concurrency hides it.
- A client re-sends HELLO every second until answered and the server opens a new
  duologue for every HELLO; when CONNECTs take > 1 s (300 at once here) most clients
  get 2 duologues, the extras expire after 10 s.  Suggest: answer a repeated HELLO
  from the same initial image with its pending CONNECT.
- Capacity here is CPU-bound, not memory-bound: at 1000 duologues the processes
  holding them idle at ~0.5 core (server: driver and Python loop about equal; the
  server loop polls every image and scans every outbox each iteration) plus ~0.3-0.4
  core per client driver; connects slow down from ~100/s to a few per second.
- RTT is very sensitive to other load on 2 cores: on a quiet machine echo/raw p50
  was 97/90 us (1.07x), while another job used ~1.5 cores it was 286/150 us (1.9x):
  the Echo loops use more CPU per iteration (see ``cpu_us_per_round_trip``) and lose
  more wake-ups.  Check the load averages in the JSON before reading the ratio.

Last full run (quiet machine for part 1; results/echo.json): RTT p50 97.1 vs 90.5 us,
p99 254 vs 251 us (1.07x / 1.01x).  Handshakes: 200 sequential in 41.0 s (4.9/s,
~205 ms each); 100 concurrent in 0.37 s (270/s); 300 concurrent in 1.87 s (160/s, 89
duplicate CONNECTs).  Capacity: 1500 duologues held, 1750 not (43 clients got no
CONNECT); at 1000 the counter read 0.981 GiB (1 003 520 B per duologue) and the log
files 0.42 GiB (401 408 B per duologue): the 1 GiB target holds on both.
"""
from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import logging
import math
import os
import platform
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from aeron_py.echo_load import percentile  # nearest-rank, as the load tool reports

log = logging.getLogger("benchmarks.echo_bench")
child_log = logging.getLogger("benchmarks.echo_bench.child")

BENCH_DIR = Path(__file__).resolve().parent
PAYLOAD = "0123456789abcdef0123456789abcdef"  # 32 B; every message is b"ECHO " + this
MESSAGE = b"ECHO " + PAYLOAD.encode("ascii")
TERM_LENGTH = 64 * 1024
LOOPBACK = "127.0.0.1"
LINE_PREFIX = "@@"  # marks protocol lines on a child's stdout
GIB = 1 << 30
# server-side driver options EchoServer uses (echo/server.py), mirrored by the raw pong
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


class BenchError(RuntimeError):
    """A benchmark step failed (a child died, timed out or answered nonsense)."""


# ============================================================ plan


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


# ============================================================ small helpers


def summarize(values: Sequence[float], *, scale: float = 1.0, digits: int = 1,
              quantiles: Sequence[float] = (50, 90, 99, 99.9)) -> dict[str, float]:
    """Nearest-rank percentiles (keys ``p50``, ``p99_9``...), mean, max and count of
    ``values`` times ``scale``; NaNs are left out."""
    ordered = sorted(v * scale for v in values if not math.isnan(v))
    if not ordered:
        return {"count": 0}
    out: dict[str, float] = {f"p{q:g}".replace(".", "_"): round(percentile(ordered, q), digits) for q in quantiles}
    out.update(mean=round(sum(ordered) / len(ordered), digits), max=round(ordered[-1], digits), count=len(ordered))
    return out


def summary_us(samples_us: Sequence[float]) -> dict[str, float]:
    """RTT summary of samples already in microseconds."""
    return summarize(samples_us)


def summary_ms(samples_s: Sequence[float]) -> dict[str, float]:
    """Latency summary in milliseconds of samples in seconds."""
    return summarize(samples_s, scale=1e3, digits=2, quantiles=(50, 90, 99))


def machine_info() -> dict[str, Any]:
    """What the numbers were measured on."""
    import aeron_py

    def first(path: str, prefix: str) -> str:
        with contextlib.suppress(OSError):
            for line in Path(path).read_text().splitlines():
                if line.startswith(prefix):
                    return line.split(":", 1)[1].strip()
        return ""

    return {
        "hostname": platform.node(), "platform": platform.platform(), "cpu_model": first("/proc/cpuinfo", "model name"),
        "cpu_count": os.cpu_count(), "cpu_affinity": len(os.sched_getaffinity(0)),
        "mem_total": first("/proc/meminfo", "MemTotal"), "python": sys.version.split()[0],
        "aeron_version": aeron_py.aeron_version(), "aeron_py_version": aeron_py.__version__,
        "fd_limit": __import__("resource").getrlimit(__import__("resource").RLIMIT_NOFILE)[0],
        "ephemeral_ports": Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split(),
    }


def driver_dir_usage(directory: str) -> dict[str, int]:
    """Log buffers present in a driver directory (what the driver really has mapped)."""
    out = {"publications": 0, "images": 0, "log_bytes": 0, "log_blocks_bytes": 0, "dir_bytes": 0}
    with contextlib.suppress(FileNotFoundError):
        for entry in os.scandir(directory):
            if entry.is_file():
                out["dir_bytes"] += entry.stat().st_size
    for sub in ("publications", "images"):
        with contextlib.suppress(FileNotFoundError):
            for entry in os.scandir(os.path.join(directory, sub)):
                with contextlib.suppress(FileNotFoundError):
                    st = entry.stat()
                    out[sub] += 1
                    out["log_bytes"] += st.st_size
                    out["log_blocks_bytes"] += st.st_blocks * 512
    out["dir_bytes"] += out["log_bytes"]
    return out


def process_memory(pid: int) -> dict[str, int]:
    """VmRSS / RssAnon / RssShmem of a process, in bytes (empty if it is gone)."""
    out: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssShmem"):
                out[key] = int(value.split()[0]) * 1024
    return out


def _ticks(stat_path: str) -> float:
    """utime + stime seconds from a /proc .../stat file."""
    fields = Path(stat_path).read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """CPU seconds of a process split into ``python`` (its live non-driver threads) and
    ``driver`` (everything else: Aeron's agent threads, also ones that already ended)."""
    python = 0.0
    try:
        total = _ticks(f"/proc/{pid}/stat")
        for tid in os.listdir(f"/proc/{pid}/task"):
            with contextlib.suppress(OSError, IndexError, ValueError):
                comm = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
                if not comm.startswith("["):  # Aeron names its agent threads "[conductor, ...]"
                    python += _ticks(f"/proc/{pid}/task/{tid}/stat")
    except OSError:
        return {"driver": math.nan, "python": math.nan}
    return {"driver": total - python, "python": python}


def cpu_percent(pids: Sequence[int], seconds: float) -> list[dict[str, float]]:
    """Each process's CPU use over the next ``seconds``, split into driver and Python
    threads (100 = one core)."""
    before = [thread_cpu_seconds(pid) for pid in pids]
    time.sleep(seconds)
    after = [thread_cpu_seconds(pid) for pid in pids]
    return [{k: round(100 * (a[k] - b[k]) / seconds, 1) for k in a} for a, b in zip(after, before)]


def mapped_counter(directory: str) -> int:
    """The driver's 'Bytes currently mapped' system counter."""
    from aeron_py.stat import DriverStat

    with DriverStat(directory, timeout=2.0) as stat:
        return stat.system_counters()["Bytes currently mapped"]


def _aeron_free_env() -> dict[str, str]:
    """This environment without AERON_* (the C driver context reads them)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("AERON_")}


def _die_with_parent() -> None:
    """preexec_fn: SIGTERM this child when the orchestrator dies (Linux PR_SET_PDEATHSIG)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)


# ============================================================ orchestrator side: children


class Child:
    """A child process running one ``--role`` of this file, spoken to in JSON lines."""

    def __init__(self, name: str, role: str, config: dict[str, Any], log_dir: Path) -> None:
        self.name = name
        self.log_path = log_dir / f"{name}.log"
        self._log = open(self.log_path, "wb")
        argv = [sys.executable, os.path.abspath(__file__), "--role", role, "--config", json.dumps(config)]
        self.proc = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True, bufsize=1,
            env=_aeron_free_env(), start_new_session=True, preexec_fn=_die_with_parent)
        self._lines: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name=f"read-{name}", daemon=True)
        self._reader.start()
        self.dir: str | None = config.get("dir")

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith(LINE_PREFIX):
                try:
                    self._lines.put(json.loads(line[len(LINE_PREFIX):]))
                except json.JSONDecodeError:
                    log.warning("%s: unreadable line %r", self.name, line[:200])
        self._lines.put(None)

    def log_tail(self, lines: int = 12) -> str:
        self._log.flush()
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def send(self, message: dict[str, Any]) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write(json.dumps(message) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:
            raise BenchError(f"{self.name}: cannot send {message.get('op')}: {exc}; log: {self.log_tail()}") from None

    def recv(self, timeout: float, what: str) -> dict[str, Any]:
        """The next message; BenchError when the child ends or the deadline passes."""
        try:
            message = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise BenchError(f"{self.name}: no {what} within {timeout:.0f} s; log: {self.log_tail()}") from None
        if message is None:
            self.proc.wait(timeout=KILL_TIMEOUT_S)
            raise BenchError(f"{self.name} exited ({self.proc.returncode}) before {what}; log: {self.log_tail()}")
        if "error" in message:
            raise BenchError(f"{self.name}: {message['error']}")
        return message

    def request(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        self.send(message)
        return self.recv(timeout, f"answer to {message.get('op')}")

    def stop(self, timeout: float = STOP_TIMEOUT_S) -> None:
        """Ask it to exit (close stdin), then SIGTERM, then SIGKILL; remove its driver dir."""
        if self.proc.poll() is None:
            with contextlib.suppress(BenchError):
                self.send({"op": "exit"})
            with contextlib.suppress(OSError):
                assert self.proc.stdin is not None
                self.proc.stdin.close()
            for sig, wait in ((None, timeout), (signal.SIGTERM, KILL_TIMEOUT_S), (signal.SIGKILL, KILL_TIMEOUT_S)):
                if sig is not None:
                    log.warning("%s (pid %d) still running: sending %s", self.name, self.proc.pid, sig.name)
                    with contextlib.suppress(ProcessLookupError):
                        self.proc.send_signal(sig)
                try:
                    self.proc.wait(timeout=wait)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self._reader.join(timeout=2.0)
        self._log.close()
        if self.dir is not None and os.path.isdir(self.dir):
            log.info("%s left %s behind: removing it", self.name, self.dir)
            shutil.rmtree(self.dir, ignore_errors=True)


class Children:
    """Every child of a run, stopped in reverse order on exit; unique driver dirs."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.prefix = f"/dev/shm/echo-bench-{os.getpid()}"
        self._all: list[Child] = []
        self._n = 0

    def start(self, name: str, role: str, config: dict[str, Any], ready_timeout: float = 30.0) -> tuple[Child, dict]:
        self._n += 1
        config = dict(config, dir=f"{self.prefix}-{self._n}-{name}")
        child = Child(f"{self._n:02d}-{name}", role, config, self.log_dir)
        self._all.append(child)
        try:
            return child, child.recv(ready_timeout, "ready")
        except BenchError:
            self.stop(child)
            raise

    def stop(self, child: Child, timeout: float = STOP_TIMEOUT_S) -> None:
        child.stop(timeout)
        if child in self._all:
            self._all.remove(child)

    @contextlib.contextmanager
    def scope(self) -> Iterator[None]:
        """Stop every child started inside the block when it ends (however it ends)."""
        before = len(self._all)
        try:
            yield
        finally:
            for child in reversed(self._all[before:]):
                self.stop(child)

    def stop_all(self) -> None:
        for child in reversed(list(self._all)):
            self.stop(child)
        shm = Path(self.prefix).parent
        for leftover in shm.glob(Path(self.prefix).name + "-*"):
            shutil.rmtree(leftover, ignore_errors=True)


# ============================================================ part 1: RTT


def _server_config(port: int, base: int, max_clients: int, max_per_ip: int, *,
                   max_image_term: int | None = None) -> dict[str, Any]:
    return {"port": port, "control_port": port + 1, "base_port": base, "max_clients": max_clients,
            "max_per_ip": max_per_ip, "term_length": TERM_LENGTH, "max_image_term_length": max_image_term}


def _rtt_round(children: Children, kind: str, server_role: str, server_cfg: dict[str, Any], client_role: str,
               client_cfg: dict[str, Any], timeout: float) -> dict[str, Any]:
    """One round: a fresh server-side and client-side process; samples plus CPU per round trip."""
    with children.scope():
        _, ready = children.start(f"rtt-{kind}-server", server_role, server_cfg)
        server_cpu = thread_cpu_seconds(ready["pid"])
        client, _ = children.start(f"rtt-{kind}-client", client_role, client_cfg)
        reply = client.recv(timeout, f"{kind} RTT result")
        server_used = {k: v - server_cpu[k] for k, v in thread_cpu_seconds(ready["pid"]).items()}
    trips = client_cfg["count"]
    per_trip = {side: {k: round(v * 1e6 / trips, 1) for k, v in used.items()}
                for side, used in (("server", server_used), ("client", reply["cpu_s"]))}
    return {"samples_us": reply["samples_us"], "cpu_us_per_round_trip": per_trip}


def bench_rtt(plan: Plan, children: Children) -> dict[str, Any]:
    """Echo duologue RTT vs raw aeron_py ping-pong, alternating rounds.

    Each round starts fresh processes.  The headline pools every round's samples
    (rounds on this 2-core VM are bimodal: ~150 or ~300 us depending on where the
    scheduler puts the four active threads); the per-round summaries are kept too.
    CPU per round trip (driver and Python threads of each side) includes idle polling
    between messages (so it grows with the RTT), each client's start-up and handshake,
    and the server's idling while its client starts: an upper bound, for comparison.
    """
    samples: dict[str, list[float]] = {"echo": [], "raw": []}
    rounds: dict[str, list[dict[str, Any]]] = {"echo": [], "raw": []}
    total = plan.rtt_warmup + plan.rtt_samples
    timeout = 60.0 + total * 0.01
    for r in range(plan.rtt_rounds):
        port = 18000 + 20 * r
        raw_ports = {"data_port": port + 2, "control_port": port + 3}
        for kind, server_role, server_cfg, client_role, client_cfg in (
                ("echo", "serve", _server_config(port, port + 10, 4, 3), "echo_rtt", {"port": port}),
                ("raw", "pong", raw_ports, "ping", dict(raw_ports))):
            log.info("RTT round %d/%d: %s", r + 1, plan.rtt_rounds, kind)
            result = _rtt_round(children, kind, server_role, server_cfg, client_role,
                                dict(client_cfg, count=total, warmup=plan.rtt_warmup), timeout)
            samples[kind] += result["samples_us"]
            rounds[kind].append({**summary_us(result["samples_us"]),
                                 "cpu_us_per_round_trip": result["cpu_us_per_round_trip"]})
    pooled = {kind: summary_us(values) for kind, values in samples.items()}
    median = {kind: {k: statistics.median(r[k] for r in rs) for k in ("p50", "p99")} for kind, rs in rounds.items()}
    ratio = {q: round(pooled["echo"][q] / pooled["raw"][q], 3) for q in ("p50", "p99")}
    cpu = {kind: {side: {k: statistics.median(r["cpu_us_per_round_trip"][side][k] for r in rs)
                         for k in ("python", "driver")} for side in ("server", "client")}
           for kind, rs in rounds.items()}
    return {
        "settings": {"message_bytes": len(MESSAGE), "payload_bytes": len(PAYLOAD), "in_flight": 1,
                     "warmup_per_round": plan.rtt_warmup, "samples_per_round": plan.rtt_samples,
                     "rounds": plan.rtt_rounds, "term_length": TERM_LENGTH,
                     "summary": "echo_us/raw_us/ratio pool every round's samples; median_of_rounds per round"},
        "echo_us": pooled["echo"], "raw_us": pooled["raw"], "ratio": ratio,
        "median_of_rounds_us": median,
        "median_of_rounds_ratio": {q: round(median["echo"][q] / median["raw"][q], 3) for q in ("p50", "p99")},
        "cpu_us_per_round_trip_median": cpu,
        "rounds": rounds,
        "target": {"max_ratio": 1.5, "p50_holds": ratio["p50"] <= 1.5, "p99_holds": ratio["p99"] <= 1.5},
    }


# ============================================================ part 2: handshakes


def _wait_for_server(server: Child, predicate: Callable[[dict[str, Any]], bool], timeout: float,
                     step: float = 0.25) -> tuple[dict[str, Any], float]:
    """Poll the server's stats until ``predicate`` holds or ``timeout``; (stats, seconds waited)."""
    start = time.monotonic()
    while True:
        stats = server.request({"op": "stats"}, 15.0)
        waited = time.monotonic() - start
        if predicate(stats) or waited >= timeout:
            return stats, waited
        time.sleep(step)


def _handshake_summary(reply: dict[str, Any], connects: int) -> dict[str, Any]:
    ok = reply["ok"]
    return {
        "clients": reply["n"], "completed": ok, "failures": reply["failures"], "wall_s": reply["wall_s"],
        "rate_per_s": round(ok / reply["wall_s"], 1) if reply["wall_s"] > 0 else None,
        "open_phase_s": reply.get("open_s"), "server_connects": connects,
        "duplicate_connects": max(0, connects - ok),
        "per_client_open_to_first_echo_ms": summary_ms(reply["total_s"]),
        "hello_to_connect_ms": summary_ms(reply["handshake_s"]),
        "phase_ms": {name: summary_ms(values) for name, values in reply["phases_s"].items()},
        "phase_meaning": "join: initial channels connected; hello: first HELLO until CONNECT; "
                         "duologue: duologue channels connected; echo: first ECHO answered",
    }


def bench_handshakes(plan: Plan, children: Children) -> dict[str, Any]:
    """Sequential then concurrent HELLO -> CONNECT -> first ECHO completions on one server."""
    max_clients = 2 * max(plan.sequential, *plan.concurrent)
    srcs = sources(plan.handshake_sources)
    out: dict[str, Any] = {"settings": {"sources": len(srcs), "max_clients": max_clients,
                                        "max_per_ip": max_clients, "client_timeout_s": CLIENT_TIMEOUT_S}}
    with children.scope():
        server, _ = children.start("hs-server", "serve", _server_config(18200, 18300, max_clients, max_clients))
        worker, _ = children.start("hs-clients", "clients", {"port": 18200})
        before = server.request({"op": "stats"}, 15.0)["connects"]
        log.info("handshakes: %d sequential", plan.sequential)
        reply = worker.request({"op": "sequential", "n": plan.sequential, "sources": srcs, "timeout": CLIENT_TIMEOUT_S},
                               60.0 + plan.sequential * 2.0)
        stats, _ = _wait_for_server(server, lambda s: s["duologues"] == 0, 15.0)
        out["sequential"] = _handshake_summary(reply, stats["connects"] - before)
        out["concurrent"] = []
        for k in plan.concurrent:
            log.info("handshakes: %d concurrent", k)
            before = stats["connects"]
            reply = worker.request({"op": "open", "n": k, "sources": srcs, "timeout": CLIENT_TIMEOUT_S, "batch": k},
                                   120.0 + k * 0.5)
            after = server.request({"op": "stats"}, 15.0)
            worker.request({"op": "close_all"}, 60.0)
            summary = _handshake_summary(reply, after["connects"] - before)
            # extras expire unused after the server's expiry; wait so runs stay independent
            stats, waited = _wait_for_server(server, lambda s: s["duologues"] == 0, 20.0)
            summary["server_idle_again_after_s"] = round(waited, 2)
            out["concurrent"].append(summary)
        out["server_stats"] = stats
    return out


# ============================================================ part 3: capacity


def _server_snapshot(server: Child, server_pid: int, directory: str) -> dict[str, Any]:
    stats = server.request({"op": "stats"}, 15.0)
    return {"duologues": stats["duologues"], "connected": stats["connected"], "connects": stats["connects"],
            "counter_bytes": mapped_counter(directory), **driver_dir_usage(directory),
            "process": process_memory(server_pid)}


def _settled(snap: dict[str, Any]) -> bool:
    """One image per duologue and one publication per duologue plus the broadcast."""
    n = snap["duologues"]
    return snap["images"] == n and snap["publications"] == n + 1 and snap["connected"] == n


def _capacity_step(plan: Plan, target: int, server: Child, pid: int, directory: str, workers: list[Child],
                   srcs: list[str], base: dict[str, Any], steps: list[dict[str, Any]], budget: float) -> dict[str, Any]:
    """Grow to ``target`` connected duologues, let the server settle, measure."""
    total = steps[-1]["total_connected"] if steps else 0
    need = target - total
    shares = [need // len(workers) + (w < need % len(workers)) for w in range(len(workers))]
    connects_before = steps[-1]["server_settled"]["connects"] if steps else base["connects"]
    t0 = time.monotonic()
    offset = total
    for w, share in zip(workers, shares):
        rotated = srcs[offset % len(srcs):] + srcs[:offset % len(srcs)]
        offset += share
        w.send({"op": "open", "n": share, "sources": rotated, "timeout": CLIENT_TIMEOUT_S,
                "batch": plan.capacity_batch, "hello_interval": CAPACITY_HELLO_INTERVAL_S, "budget_s": budget})
    replies = [w.recv(budget + 3 * CLIENT_TIMEOUT_S + 40, "open result") for w in workers]
    wall = time.monotonic() - t0
    ok = sum(r["ok"] for r in replies)
    total += ok
    failures = Counter[str]()
    for r in replies:
        failures.update(r["failures"])
    transient = _server_snapshot(server, pid, directory)
    settle_start = time.monotonic()
    settled = transient
    settle_for = plan.settle_timeout_s if plan.settle_every_step or target == plan.capacity_steps[-1] else 0.0
    while not _settled(settled) and time.monotonic() - settle_start < settle_for:
        time.sleep(0.5)
        settled = _server_snapshot(server, pid, directory)
    settle_s = time.monotonic() - settle_start
    clients_side = [w.request({"op": "stats"}, 30.0) for w in workers]
    idle_cpu = cpu_percent([pid, *(w.proc.pid for w in workers)], IDLE_CPU_WINDOW_S)
    n = max(settled["duologues"], 1)
    return {
        "target": target, "opened": need, "connected_now": ok, "total_connected": total,
        "duplicate_connects": max(0, transient["connects"] - connects_before - ok),
        "failures": dict(failures), "connect_wall_s": round(wall, 2),
        "connect_rate_per_s": round(ok / wall, 1) if wall > 0 else None,
        "phase_p50_ms": {name: summary_ms([v for r in replies for v in r["phases_s"][name]]).get("p50")
                         for name in PHASES},
        "settled": _settled(settled), "settle_s": round(settle_s, 2),
        "server_transient": transient, "server_settled": settled,
        "counter_per_duologue_bytes": round((settled["counter_bytes"] - base["counter_bytes"]) / n),
        "logs_per_duologue_bytes": round((settled["log_bytes"] - base["log_bytes"]) / n),
        "counter_total_gib": round(settled["counter_bytes"] / GIB, 3),
        "logs_total_gib": round(settled["dir_bytes"] / GIB, 3),
        "client_side": [{k: c[k] for k in ("clients", "counter_bytes", "log_bytes")} for c in clients_side],
        "idle_cpu_percent": {"server": idle_cpu[0], "client_processes": idle_cpu[1:]},
    }


def bench_capacity(plan: Plan, children: Children) -> dict[str, Any]:
    """Ramp concurrent connected duologues while reading the server driver's memory."""
    srcs = sources(plan.capacity_sources)
    max_clients = plan.capacity_max_clients
    per_ip = math.ceil(max_clients / len(srcs)) + 8
    out: dict[str, Any] = {"settings": {
        "steps": list(plan.capacity_steps), "sources": len(srcs), "client_processes": plan.capacity_workers,
        "open_batch_per_process": plan.capacity_batch, "server_max_clients": max_clients,
        "server_max_per_ip": per_ip, "server_term_length": TERM_LENGTH, "client_term_length": TERM_LENGTH,
        "server_max_image_term_length": TERM_LENGTH, "budget_s": plan.capacity_budget_s,
        "client_hello_interval_s": CAPACITY_HELLO_INTERVAL_S, "client_timeout_s": CLIENT_TIMEOUT_S}}
    steps: list[dict[str, Any]] = []
    out["steps"] = steps
    started = time.monotonic()
    with children.scope():
        server, ready = children.start("cap-server", "serve", _server_config(
            23000, 23010, max_clients, per_ip, max_image_term=TERM_LENGTH))
        directory, pid = ready["dir"], ready["pid"]
        workers = [children.start(f"cap-clients-{w}", "clients", {"port": 23000})[0]
                   for w in range(plan.capacity_workers)]
        base = _server_snapshot(server, pid, directory)
        out["baseline"] = base
        for target in plan.capacity_steps:
            left = plan.capacity_budget_s - (time.monotonic() - started)
            if left <= 0:
                out["stopped"] = f"time budget {plan.capacity_budget_s:.0f} s used up before step {target}"
                break
            log.info("capacity: growing to %d duologues", target)
            try:
                step = _capacity_step(plan, target, server, pid, directory, workers, srcs, base, steps, left)
            except BenchError as exc:
                out["stopped"] = f"step {target} failed: {exc}"
                log.error("capacity: %s", out["stopped"])
                break
            steps.append(step)
            log.info("capacity %d: %d connected (%d failed, %d duplicate CONNECTs) in %.1f s; server duologues %d, "
                     "counter %.3f GiB, log files %.3f GiB; idle CPU %s", target, step["total_connected"],
                     sum(step["failures"].values()), step["duplicate_connects"], step["connect_wall_s"],
                     step["server_settled"]["duologues"], step["counter_total_gib"], step["logs_total_gib"],
                     step["idle_cpu_percent"])
            if step["total_connected"] < target or step["server_settled"]["duologues"] < target:
                out["stopped"] = f"step {target} did not hold: {step['total_connected']} clients connected, " \
                                 f"{step['server_settled']['duologues']} server duologues"
                break
        for w in workers:  # clients first: the server then sees every image go
            children.stop(w, timeout=60.0)
        children.stop(server, timeout=60.0)
    held = [s for s in steps if s["total_connected"] >= s["target"] and s["server_settled"]["duologues"] >= s["target"]]
    at_1000 = next((s for s in held if s["target"] >= 1000), None)
    out["max_duologues_held"] = max((s["target"] for s in held), default=0)
    settled = [s for s in held if s["settled"]]
    out["per_duologue_bytes"] = {
        "counter": settled[-1]["counter_per_duologue_bytes"] if settled else None,
        "log_files": settled[-1]["logs_per_duologue_bytes"] if settled else None,
        "at_duologues": settled[-1]["target"] if settled else None,
        "log_file_bytes_each": 3 * TERM_LENGTH + 4096,
        "note": "counter: 'Bytes currently mapped' growth / duologues (it never shrinks and counts images "
                "twice); log_files: growth of the log files present in the server driver's directory"}
    out["target"] = {
        "duologues": 1000, "max_bytes": GIB, "reached_1000": at_1000 is not None,
        "counter_holds": at_1000 is not None and at_1000["server_settled"]["counter_bytes"] <= GIB,
        "log_files_hold": at_1000 is not None and at_1000["server_settled"]["dir_bytes"] <= GIB}
    return out


# ============================================================ plot


def _plot_rtt(ax: Any, rtt: dict[str, Any]) -> None:
    import matplotlib.ticker
    qs = ("p50", "p90", "p99")
    width = 0.38
    labels = {"raw": "raw aeron_py ping-pong", "echo": "Echo 2.0 duologue"}
    for offset, kind, color in ((-width / 2, "raw", "tab:gray"), (width / 2, "echo", "tab:blue")):
        bars = ax.bar([i + offset for i in range(len(qs))], [rtt[f"{kind}_us"][q] for q in qs], width,
                      label=labels[kind], color=color)
        ax.bar_label(bars, fmt="%.0f", fontsize=8)
    ax.set_xticks(range(len(qs)), qs)
    ax.set_yscale("log")
    plain = matplotlib.ticker.FuncFormatter(lambda value, _pos: f"{value:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)
    ax.tick_params(axis="y", which="minor", labelsize=7)
    ax.set_ylabel("round trip (µs, log scale)")
    s = rtt["settings"]
    ax.set_title(f"RTT, {s['message_bytes']} B, 1 in flight, {s['rounds']} x {s['samples_per_round']} samples\n"
                 f"echo/raw: p50 {rtt['ratio']['p50']}x, p99 {rtt['ratio']['p99']}x (target <= 1.5x)", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)


def _plot_capacity(ax: Any, cap: dict[str, Any]) -> None:
    steps = cap["steps"]
    mib = 1 << 20
    n = [s["server_settled"]["duologues"] for s in steps]
    ax.plot(n, [s["server_settled"]["counter_bytes"] / mib for s in steps], "o-",
            label="'Bytes currently mapped' counter")
    ax.plot(n, [s["server_transient"]["dir_bytes"] / mib for s in steps], "s:",
            label="driver files present, right after connecting")
    done = [s for s in steps if s["settled"]]
    ax.plot([s["server_settled"]["duologues"] for s in done], [s["server_settled"]["dir_bytes"] / mib for s in done],
            "s-", label="driver files present, settled")
    ax.axhline(GIB / mib, color="tab:red", linestyle="--", label="1 GiB")
    ax.axvline(1000, color="tab:green", linestyle=":", label="1000 duologues")
    ax.set_xlabel("concurrent connected duologues (server side)")
    ax.set_ylabel("server driver memory (MiB)")
    ax.set_title(f"server memory vs duologues; max held {cap.get('max_duologues_held')}", fontsize=10)
    ax.legend(loc="upper left", fontsize=8)


def write_png(path: Path, results: dict[str, Any]) -> None:
    """RTT bars (echo vs raw) and server memory against duologues (matplotlib Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5.5))
    for ax, name, plot, ready in ((left, "rtt", _plot_rtt, "echo_us"), (right, "capacity", _plot_capacity, "steps")):
        part = results.get(name, {})
        if part.get(ready):
            plot(ax, part)
        else:
            ax.axis("off")
            ax.text(0.5, 0.5, f"{name} part failed:\n" + textwrap.fill(str(part.get("error", "n/a"))[:600], 70),
                    ha="center", va="center", fontsize=8)
    m = results.get("machine", {})
    fig.suptitle(f"aeron_py Echo 2.0 on {m.get('cpu_count')} cores ({m.get('cpu_model')}), loopback, SHARED drivers, "
                 f"backoff idle; 1-min load average {results.get('load_average_before', ['?'])[0]:.1f} before, "
                 f"{results.get('load_average_after', ['?'])[0]:.1f} after", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# ============================================================ orchestrator main


def run(plan: Plan, out_dir: Path) -> dict[str, Any]:
    log_dir = Path(tempfile.mkdtemp(prefix="echo-bench-logs-"))
    children = Children(log_dir)
    results: dict[str, Any] = {
        "benchmark": "echo_bench", "quick": plan.quick, "machine": machine_info(),
        "load_average_before": os.getloadavg(), "plan": asdict(plan),
        "settings": {"threading_mode": "SHARED", "driver_idle_strategy": "backoff",
                     "loop_idle": f"BackoffIdleStrategy(max_park_ns={LOOP_MAX_PARK_NS})",
                     "server_driver_options": SERVER_DRIVER_OPTIONS, "client_driver_options": CLIENT_DRIVER_OPTIONS,
                     "term_length": TERM_LENGTH, "message": MESSAGE.decode(), "address": LOOPBACK},
    }
    started = time.monotonic()
    failed = False
    try:
        for name, part in (("rtt", bench_rtt), ("handshakes", bench_handshakes), ("capacity", bench_capacity)):
            t0 = time.monotonic()
            load_before = os.getloadavg()
            try:
                results[name] = part(plan, children)
            except BenchError as exc:
                log.error("%s failed: %s", name, exc)
                results[name] = {"error": str(exc)}
                failed = True
            results[name]["elapsed_s"] = round(time.monotonic() - t0, 1)
            results[name]["load_average_before_after"] = [load_before, os.getloadavg()]
    finally:
        children.stop_all()
    results["elapsed_s"] = round(time.monotonic() - started, 1)
    results["load_average_after"] = os.getloadavg()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "echo.json").write_text(json.dumps(results, indent=1, default=str) + "\n", encoding="utf-8")
    write_png(out_dir / "echo.png", results)
    if failed:
        log.error("child logs kept in %s", log_dir)
    else:
        shutil.rmtree(log_dir, ignore_errors=True)
    return results


def headline(results: dict[str, Any]) -> dict[str, Any]:
    """The numbers worth printing."""
    out: dict[str, Any] = {"elapsed_s": results.get("elapsed_s")}
    rtt = results.get("rtt", {})
    if "echo_us" in rtt:
        out["rtt"] = {"echo_p50_us": rtt["echo_us"]["p50"], "echo_p99_us": rtt["echo_us"]["p99"],
                      "raw_p50_us": rtt["raw_us"]["p50"], "raw_p99_us": rtt["raw_us"]["p99"], "ratio": rtt["ratio"]}
    hs = results.get("handshakes", {})
    if "sequential" in hs:
        out["handshakes"] = {"sequential": {k: hs["sequential"][k] for k in ("completed", "wall_s", "rate_per_s")},
                             "concurrent": [{k: c[k] for k in ("clients", "completed", "wall_s", "rate_per_s",
                                                                "duplicate_connects")} for c in hs["concurrent"]]}
    cap = results.get("capacity", {})
    if "steps" in cap:
        out["capacity"] = {"max_duologues_held": cap["max_duologues_held"],
                           "per_duologue_bytes": cap["per_duologue_bytes"], "target": cap["target"],
                           "stopped": cap.get("stopped")}
    for part in ("rtt", "handshakes", "capacity"):
        if "error" in results.get(part, {}):
            out[f"{part}_error"] = results[part]["error"]
    return out


# ============================================================ child side


def _emit(message: dict[str, Any]) -> None:
    sys.stdout.write(LINE_PREFIX + json.dumps(message, default=str) + "\n")
    sys.stdout.flush()


def _commands() -> "queue.Queue[dict[str, Any] | None]":
    """stdin commands on a queue; None once stdin closes (the orchestrator is gone or done)."""
    commands: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read(stream: TextIO) -> None:
        for line in stream:
            with contextlib.suppress(json.JSONDecodeError):
                commands.put(json.loads(line))
        commands.put(None)

    threading.Thread(target=read, args=(sys.stdin,), name="stdin", daemon=True).start()
    return commands


def _is_exit(command: dict[str, Any] | None) -> bool:
    return command is None or command.get("op") == "exit"


def role_serve(cfg: dict[str, Any]) -> None:
    """An EchoServer on a thread; answers ``stats``."""
    from aeron_py.echo.server import EchoServer, ServerOptions
    from aeron_py.echo.server_core import DEFAULT_MAX_IMAGE_TERM_LENGTH, ServerConfig

    config = ServerConfig(max_clients=cfg["max_clients"], clients_base_port=cfg["base_port"],
                          max_per_ip=cfg["max_per_ip"],
                          max_image_term_length=cfg["max_image_term_length"] or DEFAULT_MAX_IMAGE_TERM_LENGTH)
    options = ServerOptions(address=LOOPBACK, port=cfg["port"], control_port=cfg["control_port"], dir=cfg["dir"],
                            term_length=cfg["term_length"])
    commands = _commands()
    server = EchoServer(config, options).start(timeout=30.0)
    try:
        _emit({"ready": True, "dir": server.driver_dir, "pid": os.getpid()})
        while True:
            try:
                command = commands.get(timeout=0.5)
            except queue.Empty:
                if not server.is_serving:
                    raise BenchError("echo server stopped serving")
                continue
            if _is_exit(command):
                break
            if command.get("op") == "stats":
                s = server.stats
                _emit({"duologues": s.duologues, "initial_images": s.initial_images, "hellos": s.hellos,
                       "connects": s.connects, "rejects": dict(s.rejects), "closes": dict(s.closes),
                       "channels": server.channel_count, "connected": sum(d.connected for d in server.duologues)})
            else:
                _emit({"error": f"serve: unknown op {command.get('op')!r}"})
    finally:
        server.close(timeout=STOP_TIMEOUT_S)


def _raw_driver(cfg: dict[str, Any], options: dict[str, int]) -> tuple[Any, Any]:
    from aeron_py import Aeron, MediaDriver

    driver = MediaDriver(cfg["dir"], threading_mode="SHARED", idle_strategy="backoff",
                         dir_delete_on_start=True, dir_delete_on_shutdown=True, **options)
    return driver, Aeron(driver=driver, use_conductor_agent_invoker=True)


def _raw_channels(aeron: Any, cfg: dict[str, Any], server: bool) -> tuple[Any, Any]:
    """The duologue's channel shapes: data to ``endpoint=``, replies over dynamic MDC."""
    from aeron_py import ChannelUri

    session = 424242
    data = ChannelUri.udp(endpoint=(LOOPBACK, cfg["data_port"]), reliable=True, session_id=session,
                          term_length=None if server else TERM_LENGTH)
    control = ChannelUri.udp(control=(LOOPBACK, cfg["control_port"]), control_mode="dynamic", reliable=True,
                             session_id=session, term_length=TERM_LENGTH if server else None)
    if server:
        return aeron.add_exclusive_publication(control, 541388802), aeron.add_subscription(data, 541388802)
    return aeron.add_exclusive_publication(data, 541388802), aeron.add_subscription(control, 541388802)


def role_pong(cfg: dict[str, Any]) -> None:
    """Raw pong: echo every message back, with EchoServer's loop shape and idling."""
    from aeron_py.idle import BackoffIdleStrategy

    commands = _commands()
    driver, aeron = _raw_driver(cfg, SERVER_DRIVER_OPTIONS)
    try:
        pub, sub = _raw_channels(aeron, cfg, server=True)
        _emit({"ready": True, "dir": driver.dir, "pid": os.getpid()})
        idle = BackoffIdleStrategy(max_park_ns=LOOP_MAX_PARK_NS)
        outbox: deque[bytes] = deque()
        while commands.empty():
            work = aeron.do_work()
            for data in sub.poll_batch(10):
                outbox.append(data)
                work += 1
            while outbox and pub.offer(outbox[0]) > 0:
                outbox.popleft()
                work += 1
            idle.idle(work)
    finally:
        aeron.close()
        driver.close()


def role_ping(cfg: dict[str, Any]) -> None:
    """Raw ping: one message in flight, timed like EchoClient's echo step."""
    from aeron_py.idle import BackoffIdleStrategy

    cpu = thread_cpu_seconds(os.getpid())
    driver, aeron = _raw_driver(cfg, CLIENT_DRIVER_OPTIONS)
    try:
        pub, sub = _raw_channels(aeron, cfg, server=False)
        _emit({"ready": True, "dir": driver.dir, "pid": os.getpid()})
        idle = BackoffIdleStrategy(max_park_ns=LOOP_MAX_PARK_NS)
        deadline = time.monotonic() + 10.0
        while not (pub.is_connected and sub.is_connected):
            if time.monotonic() > deadline:
                raise BenchError("raw ping: channels not connected within 10 s")
            idle.idle(aeron.do_work())
        rtts: list[float] = []
        sent_at: float | None = None
        deadline = time.monotonic() + 30.0 + cfg["count"] * 0.01
        while len(rtts) < cfg["count"]:
            now = time.monotonic()
            if now > deadline:
                raise BenchError(f"raw ping: only {len(rtts)} of {cfg['count']} round trips before the deadline")
            work = aeron.do_work()
            if sent_at is None and pub.offer(MESSAGE) > 0:
                sent_at = now
                work += 1
            for data in sub.poll_batch(10):
                work += 1
                if data != MESSAGE or sent_at is None:
                    raise BenchError(f"raw ping: unexpected reply {data[:60]!r}")
                rtts.append(now - sent_at)
                sent_at = None
            idle.idle(work)
        used = {k: v - cpu[k] for k, v in thread_cpu_seconds(os.getpid()).items()}
        _emit({"samples_us": [round(r * 1e6, 1) for r in rtts[cfg["warmup"]:]], "cpu_s": used})
    finally:
        aeron.close()
        driver.close()


def role_echo_rtt(cfg: dict[str, Any]) -> None:
    """One EchoClient with its own driver: ``count`` echoes, one in flight."""
    from aeron_py.echo.client import EchoClient

    _emit({"ready": True, "dir": cfg["dir"], "pid": os.getpid()})
    client = EchoClient(LOOPBACK, cfg["port"], cfg["port"] + 1, count=cfg["count"], interval=0.0,
                        message=PAYLOAD, timeout=10.0, term_length=TERM_LENGTH, dir=cfg["dir"])
    cpu = thread_cpu_seconds(os.getpid())
    result = client.run()
    used = {k: v - cpu[k] for k, v in thread_cpu_seconds(os.getpid()).items()}
    if not result.ok:
        raise BenchError(f"echo client failed after {result.echoes} echoes: {result.server_reason or result.reason}")
    _emit({"samples_us": [round(r * 1e6, 1) for r in result.rtts[cfg["warmup"]:]], "cpu_s": used})


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
        usage = driver_dir_usage(self.driver.dir)
        return {"clients": len(self.live), "counter_bytes": mapped_counter(self.driver.dir),
                "log_bytes": usage["log_bytes"], "publications": usage["publications"], "images": usage["images"]}


def role_clients(cfg: dict[str, Any]) -> None:
    """A client process: one driver, many EchoClients, driven by commands."""
    from aeron_py import Aeron, MediaDriver

    commands = _commands()
    driver = MediaDriver(cfg["dir"], dir_delete_on_start=True, dir_delete_on_shutdown=True, **CLIENT_DRIVER_OPTIONS)
    aeron = Aeron(driver=driver, use_conductor_agent_invoker=True, client_name="echo-bench")
    pool = ClientPool(aeron, driver, cfg["port"])
    try:
        _emit({"ready": True, "dir": driver.dir, "pid": os.getpid()})
        while True:
            try:
                command = commands.get(timeout=0.005)
            except queue.Empty:
                aeron.do_work()  # keep the client conductor alive between commands
                continue
            if _is_exit(command):
                break
            op = command.get("op")
            if op == "open":
                _emit(pool.open(command["n"], command["sources"], command["timeout"], command["batch"],
                                command.get("hello_interval", 1.0), command.get("budget_s", math.inf)))
            elif op == "sequential":
                _emit(pool.sequential(command["n"], command["sources"], command["timeout"]))
            elif op == "close_all":
                _emit({"closed": pool.close_all()})
            elif op == "stats":
                _emit(pool.stats())
            else:
                _emit({"error": f"clients: unknown op {op!r}"})
    finally:
        for client in pool.live:
            client.close()
        pool.live.clear()
        pool.pump(0.2)
        aeron.close()
        driver.close()


ROLES: dict[str, Callable[[dict[str, Any]], None]] = {
    "serve": role_serve, "pong": role_pong, "ping": role_ping, "echo_rtt": role_echo_rtt, "clients": role_clients}


def child_main(role: str, cfg: dict[str, Any]) -> int:
    """Entry point of a child: SIGTERM/SIGINT unwind (so drivers close and dirs go)."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format=f"%(asctime)s {role} %(levelname)s %(name)s: %(message)s")
    child_log.setLevel(logging.INFO)

    def unwind(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, unwind)
    signal.signal(signal.SIGINT, unwind)
    try:
        ROLES[role](cfg)
    except BenchError as exc:
        _emit({"error": str(exc)})
        return 1
    except Exception as exc:  # noqa: BLE001 - report anything to the orchestrator, then fail
        logging.getLogger(role).exception("child failed")
        _emit({"error": f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"})
        return 1
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Echo 2.0 benchmark (RTT, handshakes, capacity).")
    p.add_argument("--quick", action="store_true", help="smaller run (about 2-3 minutes)")
    p.add_argument("--out-dir", type=Path, default=BENCH_DIR / "results", help="where echo.json/echo.png go")
    p.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    p.add_argument("--role", choices=sorted(ROLES), help=argparse.SUPPRESS)
    p.add_argument("--config", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.role is not None:
        return child_main(args.role, json.loads(args.config or "{}"))
    logging.basicConfig(level=args.log_level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(message)s")

    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupted)
    results = run(Plan.make(args.quick), args.out_dir)
    print(json.dumps(headline(results), indent=1, default=str))
    return 0 if not any("error" in results.get(p, {}) for p in ("rtt", "handshakes", "capacity")) else 1


if __name__ == "__main__":
    sys.exit(main())
