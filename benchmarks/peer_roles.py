"""The child processes of the peer benchmark (``peers.py``), one per role and library.

Each role is written twice, once per library, each through that library's *natural user
API* as its documentation shows it: ``pub.offer(bytes)`` and ``sub.poll(handler, limit)``
with a Python handler called per message, each call looking the method up on its object as
a user's loop does (no ``poll = sub.poll`` hoisted out of the loop). Idle modes: ``spin`` is the bare loop a user
writes (``while not sub.poll(handler, 10): pass``, no idle call); ``yield`` calls the
library's own yielding idle strategy object after each empty poll (both wrap Aeron's C
idle function; pyaeron's releases and re-takes the GIL on every call, aeron_py's does not).

- aeron_py: ``aeron_py.Aeron(dir=...)``, ``offer`` returns the new position (> 0) or a
  negative retryable code and raises on terminal ones; the handler gets ``(bytes, Header)``.
- pyaeron: ``pyaeron.Aeron(dir=...)``, ``offer`` returns ``True`` or a falsy ``OfferCode``
  and raises on terminal ones; the handler gets ``(BufferView, Header)``, the view valid
  only during the call (so the ping copies it with ``bytes(view)`` to keep it).

Roles:
- ``pong``: echo every message of the ping stream on the pong stream, from inside the
  fragment handler (as cpong does), until SIGINT or ``--max-seconds``.
- ``ping``: one message in flight: offer 32 B, poll until the echo arrives, check it is
  ours, record the round trip (``perf_counter_ns``); print a JSON summary. ``--shape
  first`` (the default) loops until ``poll`` returns a count; ``--shape counted`` hoists
  ``offer = pub.offer`` and loops until the handler has counted the pong, and pyaeron's
  pong copies its view with ``view.tobytes()`` before offering it (a user's loop as often
  written; both shapes run in ``peers.py``).
- ``paths``: nanoseconds per call of every path of the natural API (``peer_paths.py``).
- ``paths-both``: the same for both libraries in one process, in turn.
- ``drain``: subscriber handler throughput.  One exclusive IPC publication and one
  subscription in this process: offer ``--batch`` messages (untimed; the log holds them,
  the batch is below the publication window), then time ``sub.poll(handler, limit)`` until the
  handler has seen all of them.  No publisher competes for the CPU while the drain is timed,
  so the rate is the cost of poll + one Python handler call per message.

Only the library under test is imported, except by ``paths-both``, which measures both in
one process in turn (the same interpreter, heap and CPU for both).
Usage: ``python peer_roles.py {aeron_py|pyaeron} {ping|pong|drain} --help``.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any, Callable

if __package__ in (None, ""):  # run as a file (python benchmarks/<name>.py): make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks import harness  # noqa: E402  (stdlib only: no Aeron client imported by it)

LIBRARIES = ("aeron_py", "pyaeron")
MSG_LEN = 32
SETUP_TIMEOUT_S = 15.0
SAMPLE_TIMEOUT_S = 10.0
SHAPES = ("first", "counted")  # the ping/pong loop shapes (see ping_main)


def _wait(predicate: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    while not predicate():
        if time.monotonic() >= deadline:
            raise harness.BenchError(f"{what} within {SETUP_TIMEOUT_S}s")
        time.sleep(0.001)


# --------------------------------------------------------------------------------------------
# One small adapter per library: connect, add streams, idle.  The measured loops below are
# written out per library so each uses its own offer/poll contract directly.


class AeronPy:
    """aeron_py's Pythonic API (``aeron_py.Aeron``)."""

    def __init__(self, aeron_dir: str, idle: str) -> None:
        import aeron_py

        self.lib = aeron_py
        self.client = aeron_py.Aeron(dir=aeron_dir, timeout=SETUP_TIMEOUT_S, resource_timeout=SETUP_TIMEOUT_S)
        self.idle = aeron_py.YieldingIdleStrategy() if idle == "yield" else None

    def subscription(self, channel: str, stream: int) -> Any:
        return self.client.add_subscription(channel, stream)

    def publication(self, channel: str, stream: int, connected: bool = True) -> Any:
        pub = self.client.add_exclusive_publication(channel, stream)
        if connected:
            _wait(lambda: pub.is_connected, f"aeron_py publication {channel} {stream} not connected")
        return pub

    def version(self) -> dict[str, str]:
        return {"library": "aeron_py", "version": self.lib.__version__, "aeron": self.lib._aeron.version_full()}

    def close(self) -> None:
        self.client.close()


class PyAeron:
    """pyaeron's API (``pyaeron.Aeron``)."""

    def __init__(self, aeron_dir: str, idle: str) -> None:
        import pyaeron

        self.lib = pyaeron
        self.client = pyaeron.Aeron(dir=aeron_dir)
        self.idle = pyaeron.IdleStrategy.yielding() if idle == "yield" else None

    def subscription(self, channel: str, stream: int) -> Any:
        return self.client.add_subscription(channel, stream)

    def publication(self, channel: str, stream: int, connected: bool = True) -> Any:
        pub = self.client.add_exclusive_publication(channel, stream)
        if connected:
            pub.await_connected(timeout=SETUP_TIMEOUT_S)
        return pub

    def version(self) -> dict[str, str]:
        return {"library": "pyaeron", "version": self.lib.__version__, "aeron": self.lib.aeron_version}

    def close(self) -> None:
        self.client.close()


def connect(library: str, aeron_dir: str, idle: str) -> AeronPy | PyAeron:
    """The adapter for ``library`` ("aeron_py" or "pyaeron")."""
    if library == "aeron_py":
        return AeronPy(aeron_dir, idle)
    if library == "pyaeron":
        return PyAeron(aeron_dir, idle)
    raise ValueError(f"unknown library {library!r}; expected one of {LIBRARIES}")


# --------------------------------------------------------------------------------------------
# pong


def pong_main(args: argparse.Namespace) -> int:
    stop = harness.StopFlag()
    peer = connect(args.library, args.dir, args.idle)
    sub = peer.subscription(args.channel, args.ping_stream)
    pub = peer.publication(args.channel, args.pong_stream, connected=False)  # the ping subscribes later
    print("READY", flush=True)
    idle = None if peer.idle is None else peer.idle.idle
    echoed = 0

    if args.library == "aeron_py":
        def handler(data: bytes, header: Any) -> None:
            nonlocal echoed
            while pub.offer(data) < 0 and not stop.stopped:
                pass
            echoed += 1
    elif args.shape == "counted":
        def handler(data: Any, header: Any) -> None:
            nonlocal echoed
            copy = data.tobytes()
            while not pub.offer(copy) and not stop.stopped:
                pass
            echoed += 1
    else:
        def handler(data: Any, header: Any) -> None:
            nonlocal echoed
            while not pub.offer(data) and not stop.stopped:
                pass
            echoed += 1

    deadline = time.monotonic() + args.max_seconds
    loops = 0
    limit = args.fragment_limit
    while not stop.stopped:
        if idle is None:
            sub.poll(handler, limit)
        else:
            idle(sub.poll(handler, limit))
        loops += 1
        if loops & 0xFFFF == 0 and time.monotonic() > deadline:
            break
    print(json.dumps({"echoed": echoed}), flush=True)
    peer.close()
    return 0


# --------------------------------------------------------------------------------------------
# ping


def _ping_aeron_py(pub: Any, sub: Any, idle: Callable[[int], None] | None, count: int, seq0: int,
                   limit: int) -> list[int]:
    clock = time.perf_counter_ns
    pad = bytes(MSG_LEN - 8)
    timeout_ns = int(SAMPLE_TIMEOUT_S * 1e9)
    rtts = [0] * count
    got: bytes | None = None

    def handler(data: bytes, header: Any) -> None:
        nonlocal got
        got = data

    for i in range(count):
        msg = (seq0 + i).to_bytes(8, "little") + pad
        got = None
        start = clock()
        while pub.offer(msg) < 0:
            if clock() - start > timeout_ns:
                raise harness.BenchError(f"ping {i}: offer not accepted for {SAMPLE_TIMEOUT_S}s")
        spins = 0
        while not sub.poll(handler, limit):
            if idle is not None:
                idle(0)
            spins += 1
            if spins & 0xFFF == 0 and clock() - start > timeout_ns:
                raise harness.BenchError(f"ping {i}: no pong within {SAMPLE_TIMEOUT_S}s")
        rtts[i] = clock() - start
        if got != msg:
            raise harness.BenchError(f"ping {i}: the echo is not our message")
    return rtts


def _ping_pyaeron(pub: Any, sub: Any, idle: Callable[[int], None] | None, count: int, seq0: int,
                  limit: int) -> list[int]:
    clock = time.perf_counter_ns
    pad = bytes(MSG_LEN - 8)
    timeout_ns = int(SAMPLE_TIMEOUT_S * 1e9)
    rtts = [0] * count
    got: bytes | None = None

    def handler(view: Any, header: Any) -> None:
        nonlocal got
        got = bytes(view)  # the view is only valid during the call

    for i in range(count):
        msg = (seq0 + i).to_bytes(8, "little") + pad
        got = None
        start = clock()
        while not pub.offer(msg):
            if clock() - start > timeout_ns:
                raise harness.BenchError(f"ping {i}: offer not accepted for {SAMPLE_TIMEOUT_S}s")
        spins = 0
        while not sub.poll(handler, limit):
            if idle is not None:
                idle(0)
            spins += 1
            if spins & 0xFFF == 0 and clock() - start > timeout_ns:
                raise harness.BenchError(f"ping {i}: no pong within {SAMPLE_TIMEOUT_S}s")
        rtts[i] = clock() - start
        if got != msg:
            raise harness.BenchError(f"ping {i}: the echo is not our message")
    return rtts


# The ``counted`` shape: ``offer = pub.offer`` hoisted out of the loop, then spin on
# ``sub.poll(handler, limit)`` until the handler has counted the pong (the loop tests the
# handler's count, not poll's result); pyaeron's pong copies its view with ``tobytes()``.


def _ping_counted_aeron_py(pub: Any, sub: Any, idle: Callable[[int], None] | None, count: int, seq0: int,
                           limit: int) -> list[int]:
    clock = time.perf_counter_ns
    pad = bytes(MSG_LEN - 8)
    timeout_ns = int(SAMPLE_TIMEOUT_S * 1e9)
    rtts = [0] * count
    got: bytes | None = None
    received = 0

    def handler(data: bytes, header: Any) -> None:
        nonlocal got, received
        got = data
        received += 1

    offer = pub.offer
    for i in range(count):
        msg = (seq0 + i).to_bytes(8, "little") + pad
        start = clock()
        while offer(msg) < 0:
            if clock() - start > timeout_ns:
                raise harness.BenchError(f"ping {i}: offer not accepted for {SAMPLE_TIMEOUT_S}s")
        spins = 0
        while received == i:
            if not sub.poll(handler, limit) and idle is not None:
                idle(0)
            spins += 1
            if spins & 0xFFF == 0 and clock() - start > timeout_ns:
                raise harness.BenchError(f"ping {i}: no pong within {SAMPLE_TIMEOUT_S}s")
        rtts[i] = clock() - start
        if got != msg:
            raise harness.BenchError(f"ping {i}: the echo is not our message")
    return rtts


def _ping_counted_pyaeron(pub: Any, sub: Any, idle: Callable[[int], None] | None, count: int, seq0: int,
                          limit: int) -> list[int]:
    clock = time.perf_counter_ns
    pad = bytes(MSG_LEN - 8)
    timeout_ns = int(SAMPLE_TIMEOUT_S * 1e9)
    rtts = [0] * count
    got: bytes | None = None
    received = 0

    def handler(view: Any, header: Any) -> None:
        nonlocal got, received
        got = view.tobytes()  # the view is only valid during the call
        received += 1

    offer = pub.offer
    for i in range(count):
        msg = (seq0 + i).to_bytes(8, "little") + pad
        start = clock()
        while not offer(msg):
            if clock() - start > timeout_ns:
                raise harness.BenchError(f"ping {i}: offer not accepted for {SAMPLE_TIMEOUT_S}s")
        spins = 0
        while received == i:
            if not sub.poll(handler, limit) and idle is not None:
                idle(0)
            spins += 1
            if spins & 0xFFF == 0 and clock() - start > timeout_ns:
                raise harness.BenchError(f"ping {i}: no pong within {SAMPLE_TIMEOUT_S}s")
        rtts[i] = clock() - start
        if got != msg:
            raise harness.BenchError(f"ping {i}: the echo is not our message")
    return rtts


PING_LOOPS = {("aeron_py", "first"): _ping_aeron_py, ("pyaeron", "first"): _ping_pyaeron,
              ("aeron_py", "counted"): _ping_counted_aeron_py, ("pyaeron", "counted"): _ping_counted_pyaeron}


def ping_main(args: argparse.Namespace) -> int:
    peer = connect(args.library, args.dir, args.idle)
    sub = peer.subscription(args.channel, args.pong_stream)
    pub = peer.publication(args.channel, args.ping_stream)
    _wait(lambda: bool(sub.is_connected), "pong subscription not connected")
    loop = PING_LOOPS[args.library, args.shape]
    idle = None if peer.idle is None else peer.idle.idle
    started = time.monotonic()
    loop(pub, sub, idle, args.warmup, 0, args.fragment_limit)
    rtts = loop(pub, sub, idle, args.samples, args.warmup, args.fragment_limit)
    wall = time.monotonic() - started
    print(json.dumps({"rtt_us": harness.percentiles_us(rtts), "wall_s": round(wall, 3),
                      "client": peer.version()}), flush=True)
    peer.close()
    return 0


# --------------------------------------------------------------------------------------------
# drain (subscriber handler throughput)


def _fill(library: str, pub: Any, idle: Callable[[int], None], count: int) -> None:
    """Offer ``count`` messages (untimed), retrying the retryable outcomes (bounded)."""
    msg = bytes(MSG_LEN)
    offer = pub.offer
    deadline = time.monotonic() + SETUP_TIMEOUT_S
    accepted = (lambda r: r > 0) if library == "aeron_py" else bool
    for i in range(count):
        while not accepted(result := offer(msg)):
            if time.monotonic() > deadline:
                raise harness.BenchError(f"fill: message {i} of {count} not accepted within {SETUP_TIMEOUT_S}s "
                                           f"(last result {result!r}, position {pub.position})")
            idle(0)


def drain_main(args: argparse.Namespace) -> int:
    peer = connect(args.library, args.dir, args.idle)
    sub = peer.subscription(args.channel, args.stream)
    pub = peer.publication(args.channel, args.stream)
    limit, clock = args.fragment_limit, time.perf_counter_ns
    idle = (lambda work: None) if peer.idle is None else peer.idle.idle
    seen = 0

    def handler(data: Any, header: Any) -> None:  # the same body for both libraries
        nonlocal seen
        seen += 1

    rates = []
    for _ in range(args.batches):
        _fill(args.library, pub, idle, args.batch)
        target = seen + args.batch
        deadline_ns = clock() + int(SAMPLE_TIMEOUT_S * 1e9)
        start = clock()
        polls = 0
        while seen < target:
            sub.poll(handler, limit)
            polls += 1
            if polls & 0xFFF == 0 and clock() > deadline_ns:
                raise harness.BenchError(f"drain: {target - seen} messages missing after {SAMPLE_TIMEOUT_S}s")
        elapsed = clock() - start
        if seen != target:
            raise harness.BenchError(f"drain: handler saw {seen - target} more messages than were offered")
        rates.append(args.batch / (elapsed / 1e9))
    print(json.dumps({"msgs_per_s": sorted(rates)[len(rates) // 2], "batch_rates": rates,
                      "batch": args.batch, "client": peer.version()}), flush=True)
    peer.close()
    return 0


# --------------------------------------------------------------------------------------------
# paths (ns per call of each path of the natural API: peer_paths.py)


def paths_main(args: argparse.Namespace) -> int:
    from benchmarks import peer_paths

    peer = connect(args.library, args.dir, "spin")
    sub = peer.subscription(args.channel, args.stream)
    pub = peer.publication(args.channel, args.stream)
    result = peer_paths.measure(args.library, pub, sub, args.repeats)
    print(json.dumps({"ns_per_op": result, "client": peer.version()}), flush=True)
    peer.close()
    return 0


def paths_both_main(args: argparse.Namespace) -> int:
    """Both libraries in ONE process, measured in turn: the same interpreter, heap and CPU for
    both, so what differs is only the libraries' code. The one role that imports both (each
    links its own Aeron; CPython loads extensions with RTLD_LOCAL, so neither sees the other's
    symbols). Each library runs its own copy of peer_paths' code: CPython specialises a call
    site for the type it sees, so one shared call site would favour whichever library ran first."""
    import importlib.util

    from benchmarks import peer_paths

    def own_copy(library: str) -> Any:
        spec = importlib.util.spec_from_file_location(f"peer_paths_{library}", peer_paths.__file__)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    rigs = []
    for offset, library in enumerate(LIBRARIES):
        peer = connect(library, args.dir, "spin")
        sub = peer.subscription(args.channel, args.stream + offset)
        pub = peer.publication(args.channel, args.stream + offset)
        rigs.append((library, peer, pub, sub, own_copy(library)))
    runs: dict[str, list[dict[str, float]]] = {library: [] for library in LIBRARIES}
    for _ in range(args.rounds):
        for library, _peer, pub, sub, code in rigs:
            runs[library].append(code.measure(library, pub, sub, args.repeats))
    median = {library: {path: sorted(r[path] for r in out)[len(out) // 2] for path in peer_paths.PATHS}
              for library, out in runs.items()}
    print(json.dumps({"ns_per_op": median, "rounds": runs,
                      "clients": {library: peer.version() for library, peer, _pub, _sub, _code in rigs}}),
          flush=True)
    for _library, peer, _pub, _sub, _code in rigs:
        peer.close()
    return 0


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="peer benchmark child process (started by peers.py)")
    parser.add_argument("library", choices=(*LIBRARIES, "both"), help="'both' only with the paths-both role")
    roles = parser.add_subparsers(dest="role", required=True)
    for role in ("ping", "pong", "drain", "paths", "paths-both"):
        p = roles.add_parser(role)
        p.add_argument("--dir", required=True, help="the shared driver's AERON_DIR")
        p.add_argument("--channel", default="aeron:ipc")
        p.add_argument("--idle", choices=harness.IDLE_MODES, default="spin")
        p.add_argument("--fragment-limit", type=int, default=10)
        if role in ("ping", "pong"):
            p.add_argument("--shape", choices=SHAPES, default="first",
                           help="first: loop until poll returns > 0; counted: offer hoisted, loop until "
                                "the handler counted the pong, pyaeron's pong copies its view")
            p.add_argument("--ping-stream", type=int, required=True)
            p.add_argument("--pong-stream", type=int, required=True)
        if role == "ping":
            p.add_argument("--warmup", type=int, required=True)
            p.add_argument("--samples", type=int, required=True)
        if role == "pong":
            p.add_argument("--max-seconds", type=float, default=600.0)
        if role in ("paths", "paths-both"):
            p.add_argument("--stream", type=int, required=True, help="paths-both also uses the next stream id")
            p.add_argument("--repeats", type=int, default=3, help="timed runs per path; the best is reported")
        if role == "paths-both":
            p.add_argument("--rounds", type=int, default=5, help="turns of aeron_py then pyaeron; the median is reported")
        if role == "drain":
            p.add_argument("--stream", type=int, required=True)
            p.add_argument("--batch", type=int, required=True, help="messages per timed drain")
            p.add_argument("--batches", type=int, required=True)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    if (args.library == "both") != (args.role == "paths-both"):
        raise SystemExit("peer_roles.py: 'both' goes with the paths-both role, and only with it")
    return {"ping": ping_main, "pong": pong_main, "drain": drain_main, "paths": paths_main,
            "paths-both": paths_both_main}[args.role](args)


if __name__ == "__main__":
    sys.exit(main())
