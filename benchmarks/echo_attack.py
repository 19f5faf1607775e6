"""Echo 2.0 server under attack: full-scale versions of the survival tests (issue 7).

    python -m benchmarks.echo_attack [--flood-sources 250] [--flood-seconds 20] [--flood-rounds 2]
        [--flood-kind forged|publications]
        [--churn-clients 50] [--churn-rounds 20] [--cycles 1000] [--big-terms 50]
        [--only flood,flood_reclaim_only,churn,cycles,big_terms] [--out PATH]

Each scenario starts a fresh server process (``python -m aeron_py.echo_server``,
default limits unless stated), measures it from outside (``/proc/PID``: fds,
VmSize, RSS, image log mappings; its driver's CnC: sender/receiver channels) and
writes every figure to ``benchmarks/results/echo_attack.json`` (and a row of
``results/history/echo_attack.csv``).  Loopback only.

* ``flood``: ``--flood-sources`` addresses (127.10.0.2 ...; new ones each round) send
  ``HELLO <random>`` for ``--flood-seconds``, ``--flood-rounds`` times: by default as raw
  forged frames at the highest rate this process reaches (``--flood-kind forged``, no flow
  control), or offered on real Aeron publications (``--flood-kind publications``, as fast
  as the server's flow control and flood penalty let them), while a new legitimate client tries once a second (each from its own
  address); after each: how long until a legitimate client is served, and how long
  until fds, driver channels, image mappings and image log files are back at rest
  (their baseline), sampled every second; bytes of log and telemetry written.
* ``flood_reclaim_only``: the same against a server that never penalises a flooding
  source (``--flood-penalty 0``): the flood runs at full rate for its whole length and
  only the reclaim rule makes room for legitimate clients.
* ``churn``: ``--churn-rounds`` back-to-back rounds of ``--churn-clients`` concurrent
  connect/echo/close clients (from 20 addresses) on 64 slots: how many were served,
  why the others were not, and how long until the driver's image log files are at rest.
* ``cycles``: ``--cycles`` sequential connect/echo/close clients; VmSize and RSS
  after a warm-up and at the end (growth per cycle).
* ``big_terms``: ``--big-terms`` publications with 16 MiB terms from one address,
  each offering 20 MiB of 1 KiB messages: refused (ERROR, image rejected) and what
  the server maps meanwhile and keeps afterwards.
Not part of pytest; exit 1 if a scenario failed (its error is in the JSON).
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import re
import signal
from collections import Counter
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from aeron_py import Aeron, MediaDriver
from aeron_py.duologue.client_channels import publication_channel
from aeron_py.echo.client import EchoClient
from aeron_py.echo.load.flood import HelloFlood
from aeron_py.echo.load.forged import ForgedHelloFlood
from aeron_py.echo.load.generator import run_load
from aeron_py.duologue.core.protocol import STREAM_ID, format_hello
from aeron_py.idle import BackoffIdleStrategy
from aeron_py.stat import DriverStat

if __package__ in (None, ""):  # run as a file (python benchmarks/<name>.py): make the package importable
    sys.path.append(str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import RESULTS_DIR, Child, pick, save_results  # noqa: E402

HOST = "127.0.0.1"
RESULTS = RESULTS_DIR / "echo_attack.json"
#: The legitimate client of the flood scenario: an address outside the floods (127.10.x.y, 127.11.x.y, ...).
LEGIT_SOURCE = "127.0.3.1"
ALL_SCENARIOS = "flood,flood_reclaim_only,churn,cycles,big_terms"
#: Legitimate clients during a flood: one new client a second, each from its own address 127.0.4.N.
DURING_SOURCES = "127.0.4.{}"
logger = logging.getLogger("echo_attack")


def wait_until(predicate: Callable[[], object], timeout: float, step: float = 0.05) -> float | None:
    """Seconds until ``predicate`` held, or None after ``timeout``."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if predicate():
            return round(time.monotonic() - start, 3)
        time.sleep(step)
    return None


def image_files(images_dir: Path) -> dict[str, int]:
    """Blocks used by each image log file (files the driver deletes meanwhile are skipped)."""
    found: dict[str, int] = {}
    for path in images_dir.glob("*") if images_dir.exists() else ():
        with contextlib.suppress(FileNotFoundError):
            found[path.name] = path.stat().st_blocks
    return found


class Server:
    """An echo_server child process (a :class:`benchmarks.harness.Child`); its stderr, the
    server's log, goes to a file whose size is the log's bytes."""

    def __init__(self, port: int, args: list[str]) -> None:
        self.port, self.control = port, port + 1
        command = [sys.executable, "-m", "aeron_py.echo_server", "--port", str(port), "--control-port",
                   str(port + 1), "--base-port", str(port + 10), *args]
        self.child = Child(f"attack-server-{port}", command, dict(os.environ))
        self.proc = self.child.proc
        self._driver_dir: str | None = None
        try:
            line = self.child.wait_for_line(lambda _text: True, 60, "its first line").text
            if not line.startswith("READY"):
                raise RuntimeError(f"server did not start: {line!r} {self.child.stderr_tail(5)}")
            if wait_until(lambda: self.driver_dir is not None, 10) is None:
                raise RuntimeError("server did not name its driver dir")
        except BaseException:
            self.child.stop(grace_s=0.0, first_signal=signal.SIGKILL)
            raise

    @property
    def driver_dir(self) -> str | None:
        if self._driver_dir is None:
            with contextlib.suppress(OSError):
                for line in self.child.stderr_path.read_text(errors="replace").splitlines()[:20]:
                    match = re.search(r"driver dir (\S+)", line)
                    if match:
                        self._driver_dir = match.group(1)
                        break
        return self._driver_dir

    def resources(self) -> dict[str, int]:
        pid = self.proc.pid
        with DriverStat(str(self.driver_dir)) as stat:
            counters = stat.counters()
        status = Path(f"/proc/{pid}/status").read_text()
        maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
        files = image_files(Path(str(self.driver_dir)) / "images")
        return {
            "fds": len(os.listdir(f"/proc/{pid}/fd")),
            "snd_channels": sum(c.type_id == 6 for c in counters),
            "rcv_channels": sum(c.type_id == 7 for c in counters),
            "image_maps": sum("/images/" in line for line in maps),
            "image_files": len(files),
            "image_files_bytes": sum(blocks * 512 for blocks in files.values()),
            "vm_kib": int(re.search(r"VmSize:\s+(\d+)", status).group(1)),  # type: ignore[union-attr]
            "rss_kib": int(re.search(r"VmRSS:\s+(\d+)", status).group(1)),  # type: ignore[union-attr]
        }

    def log_bytes(self) -> int:
        with contextlib.suppress(OSError):
            return self.child.stderr_path.stat().st_size
        return 0

    def stop(self) -> int:
        """SIGTERM, then SIGKILL after 20 s; the exit code."""
        return self.child.stop(grace_s=20.0, first_signal=signal.SIGTERM)


@contextmanager
def server(port: int, *args: str) -> Iterator[Server]:
    s = Server(port, list(args))
    try:
        yield s
    finally:
        s.stop()  # also when it has exited: closes its log, and it is no longer tracked


def serve_once(s: Server, interface: str | None = None, aeron: Aeron | None = None) -> bool:
    return EchoClient(HOST, s.port, s.control, count=1, timeout=10, interface=interface, aeron=aeron).run().ok


REST_KEYS = ("fds", "snd_channels", "rcv_channels", "image_maps", "image_files")


def at_baseline(now: dict[str, int], base: dict[str, int]) -> bool:
    return all(now[k] <= base[k] for k in REST_KEYS)


def until_rest(s: Server, base: dict[str, int], ended: float, limit_s: float = 180.0) -> dict[str, Any]:
    """Samples every second from ``ended`` until the server is back at ``base`` (or ``limit_s``)."""
    samples: list[dict[str, Any]] = []
    while True:
        now = s.resources()
        t = round(time.monotonic() - ended, 1)
        samples.append({"t": t, **{k: now[k] for k in REST_KEYS}})
        if at_baseline(now, base):
            return {"seconds_to_rest": t, "samples": samples}
        if t >= limit_s:
            return {"seconds_to_rest": None, "samples": samples}
        time.sleep(1.0 - (time.monotonic() - ended) % 1.0)  # the next whole second after the flood


class DuringProbe:
    """While a flood runs: a new legitimate client every second, each from its own address
    with its own driver and a 10 s timeout, in a child process (not competing with the
    flood for this process's GIL); when each was served."""

    def __init__(self, s: Server) -> None:
        code = f"import benchmarks.echo_attack as m; m.probe_child({s.port}, {s.control})"
        self._child = Child("during-probe", [sys.executable, "-c", code], dict(os.environ), stdin=True)

    def start(self) -> None:
        """The flood has started: the first client now."""
        self._child.send("start")

    def stop(self) -> dict[str, Any]:
        self._child.stop(grace_s=15.0)
        attempts = [json.loads(line.text) for line in self._child.lines if line.text.startswith("{")]
        served = [a["at_s"] for a in attempts if a["served"]]
        return {"attempts": len(attempts), "served": len(served),
                "first_served_at_s": served[0] if served else None, "clients": attempts}


def probe_child(port: int, control: int) -> None:
    """(the probe's child process) After a line on stdin, one new client a second until stdin closes."""
    stop = threading.Event()
    sys.stdin.readline()

    def watch_stdin() -> None:
        sys.stdin.read()
        stop.set()

    threading.Thread(target=watch_stdin, daemon=True).start()
    start, n = time.monotonic(), 0
    while not stop.is_set() and n < 250:
        n += 1
        began = time.monotonic()
        ok = EchoClient(HOST, port, control, count=1, timeout=10, interface=DURING_SOURCES.format(n)).run().ok
        print(json.dumps({"at_s": round(began - start, 2), "served": ok,
                          "took_s": round(time.monotonic() - began, 2)}), flush=True)
        stop.wait(max(0.0, 1.0 - (time.monotonic() - began)))


def flood_round(s: Server, args: argparse.Namespace, base: dict[str, int], sources: list[str]) -> dict[str, Any]:
    """One flood with legitimate clients arriving during it, then how long until a
    legitimate client is served and the server is at rest."""
    flooder = ForgedHelloFlood(HOST, s.port, sources, seed=1) if args.flood_kind == "forged" else \
        HelloFlood(HOST, s.port, s.control, sources, seed=1)
    with flooder as hello_flood:
        probe = DuringProbe(s)
        try:
            report = hello_flood.run(args.flood_seconds, on_start=probe.start)
        finally:
            during_clients = probe.stop()
        during = s.resources()
    ended = time.monotonic()
    served_after = wait_until(lambda: serve_once(s, LEGIT_SOURCE), 60, step=0.2)
    return {"seconds": round(report.seconds, 2), "hellos": report.hellos,
            "hellos_per_s": round(report.hellos / max(report.seconds, 1e-9)),
            "connected_sources": report.connected_sources, "during": during,
            "legit_clients_during": during_clients,
            "legit_client_served_after_s": served_after, **until_rest(s, base, ended)}


def flood_sources(count: int, round_: int) -> list[str]:
    """``count`` flooding addresses of round ``round_``: 127.(10 + round).x.y, new ones each round."""
    return [f"127.{10 + round_}.{i // 250}.{2 + i % 250}" for i in range(count)]


def flood(args: argparse.Namespace, events: Path, *server_args: str) -> dict[str, Any]:
    with server(40100, "--clients", "64", "--events", str(events), *server_args) as s:
        assert serve_once(s), "the first client was not served"
        wait_until(lambda: s.resources()["image_maps"] == 0, 30)
        base = s.resources()
        rounds = [flood_round(s, args, base, flood_sources(args.flood_sources, r)) for r in range(args.flood_rounds)]
        code = s.stop()
    telemetry = sum(p.stat().st_size for p in events.glob("*.jsonl"))
    first = rounds[0]
    rests = [r["seconds_to_rest"] for r in rounds]
    return {"sources": args.flood_sources, "rounds": rounds, "baseline": base,
            "seconds": first["seconds"], "hellos": first["hellos"], "hellos_per_s": first["hellos_per_s"],
            "during": first["during"], "legit_client_served_after_s": first["legit_client_served_after_s"],
            "legit_first_served_during_s": [r["legit_clients_during"]["first_served_at_s"] for r in rounds],
            "seconds_to_rest": rests, "max_seconds_to_rest": None if None in rests else max(rests),
            "log_bytes": s.log_bytes(), "telemetry_bytes": telemetry,
            "log_plus_telemetry_mb": round((s.log_bytes() + telemetry) / 1e6, 3), "exit_code": code}


def churn(args: argparse.Namespace) -> dict[str, Any]:
    sources = [f"127.0.0.{i}" for i in range(2, 22)]
    with server(40400, "--clients", "64") as s:
        base = s.resources()
        served, failures = 0, Counter[str]()
        start = time.monotonic()
        for _ in range(args.churn_rounds):
            report, _results = run_load(HOST, s.port, s.control, clients=args.churn_clients, sources=sources,
                                        echoes=3, timeout=10)
            served += report.succeeded
            failures.update(report.failures)
        ended = time.monotonic()
        rest = wait_until(lambda: s.resources()["image_files"] <= base["image_files"], 60, step=0.2)
        after = s.resources()
    return {"clients": args.churn_clients, "rounds": args.churn_rounds, "served": served,
            "attempted": args.churn_clients * args.churn_rounds, "failures": dict(failures),
            "seconds": round(ended - start, 1), "baseline": base, "after": after,
            "seconds_until_image_files_at_rest": rest}


def cycles(args: argparse.Namespace) -> dict[str, Any]:
    warm = min(50, args.cycles // 10)
    with server(40200, "--clients", "16", "--max-per-ip", "16", "--image-liveness-timeout", "2") as s, \
            MediaDriver(publication_linger_timeout_ns=0) as driver, Aeron(driver=driver) as aeron:
        def run(n: int) -> int:
            failures = 0
            for _ in range(n):
                if wait_until(lambda: serve_once(s, aeron=aeron), 10, step=0.01) is None:
                    failures += 1
            return failures

        failures = run(warm)
        wait_until(lambda: s.resources()["image_maps"] == 0, 30)
        before = s.resources()
        start = time.monotonic()
        failures += run(args.cycles)
        seconds = time.monotonic() - start
        wait_until(lambda: s.resources()["image_maps"] == 0, 30)
        after = s.resources()
    return {"warm_up": warm, "cycles": args.cycles, "seconds": round(seconds, 1), "failures": failures,
            "before": before, "after": after,
            "vm_growth_kib": after["vm_kib"] - before["vm_kib"], "rss_growth_kib": after["rss_kib"] - before["rss_kib"],
            "vm_growth_per_cycle_b": round((after["vm_kib"] - before["vm_kib"]) * 1024 / args.cycles),
            "rss_growth_per_cycle_b": round((after["rss_kib"] - before["rss_kib"]) * 1024 / args.cycles)}


def big_terms(args: argparse.Namespace) -> dict[str, Any]:
    term = 16 * 1024 * 1024
    with server(40300, "--clients", "16") as s:
        base = s.resources()
        peak = dict(base)
        refusals = 0
        with MediaDriver(publication_linger_timeout_ns=0, term_buffer_length=term, term_buffer_sparse_file=True) as d, \
                Aeron(driver=d, use_conductor_agent_invoker=True) as aeron:
            sub = aeron.add_subscription(f"aeron:udp?control={HOST}:{s.control}|control-mode=dynamic", STREAM_ID)
            pubs = []
            for _ in range(args.big_terms):
                uri, dest = publication_channel(HOST, s.port, interface="127.0.0.9", term_length=term)
                pub = aeron.add_exclusive_publication(uri, STREAM_ID)
                if dest is not None:
                    pub.add_destination(dest)
                pubs.append(pub)
            payload = b"x" * 1024
            idle = BackoffIdleStrategy(max_park_ns=1_000_000)
            deadline = time.monotonic() + 15  # a rejected image never takes 20 MiB: bounded
            sent = dict.fromkeys(range(len(pubs)), 0)
            while time.monotonic() < deadline and min(sent.values()) < 20 * 1024:
                work = aeron.do_work()
                for i, pub in enumerate(pubs):
                    if sent[i] == 0 and pub.offer(format_hello(i)) > 0:
                        sent[i] = 1
                    elif sent[i] and sent[i] < 20 * 1024 and pub.offer(payload) > 0:
                        sent[i] += 1
                        work += 1
                refusals += sum(1 for m in sub.poll_batch(100) if b" ERROR " in m)
                now = s.resources()
                peak = {k: max(peak[k], now[k]) for k in peak}
                idle.idle(work)
            for pub in pubs:
                pub.close()
        left = wait_until(lambda: s.resources()["image_maps"] == 0, 60, step=0.5)
        after = s.resources()
    return {"publications": args.big_terms, "term_length": term, "messages_offered": sum(sent.values()),
            "error_replies": refusals, "baseline": base, "peak": peak, "after": after,
            "seconds_until_unmapped": left}


def history_row(out: dict[str, Any]) -> dict[str, Any]:
    """The headline numbers of a run, flat, for ``results/history/echo_attack.csv``."""
    flood_keys = ("sources", "hellos", "hellos_per_s", "max_seconds_to_rest", "legit_client_served_after_s",
                  "legit_first_served_during_s", "log_plus_telemetry_mb")
    keys = {"flood": flood_keys, "flood_reclaim_only": flood_keys,
            "churn": ("served", "attempted", "seconds_until_image_files_at_rest"),
            "cycles": ("cycles", "failures", "vm_growth_per_cycle_b", "rss_growth_per_cycle_b"),
            "big_terms": ("publications", "messages_offered", "error_replies", "seconds_until_unmapped")}
    row: dict[str, Any] = {}
    for scenario, names in keys.items():
        part = out.get(scenario) or {}
        row.update({f"{scenario}_{name}": part.get(name) for name in names})
        row[f"{scenario}_peak_vm_kib"] = pick(part, {"flood": "during", "flood_reclaim_only": "during", "cycles": "after"}.get(scenario, "peak"), "vm_kib")
        row[f"{scenario}_error"] = part.get("error")
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--flood-sources", type=int, default=250, metavar="N",
                   help="flood scenarios: HELLO senders, one per address 127.10.0.2... (default 250)")
    p.add_argument("--flood-seconds", type=float, default=20.0, metavar="S",
                   help="flood scenario: how long the HELLO flood lasts (default 20)")
    p.add_argument("--flood-rounds", type=int, default=2, metavar="N",
                   help="flood scenario: floods in a row, each measured until the server is at rest (default 2)")
    p.add_argument("--flood-kind", choices=("forged", "publications"), default="forged",
                   help="flood scenarios: 'forged' sends raw UDP frames with no flow control, as fast as this "
                        "process can (ForgedHelloFlood); 'publications' offers on real Aeron publications, "
                        "as fast as the server's flow control lets them (HelloFlood) (default forged)")
    p.add_argument("--churn-clients", type=int, default=50, metavar="N",
                   help="churn scenario: concurrent connect/echo/close clients per round (default 50)")
    p.add_argument("--churn-rounds", type=int, default=20, metavar="N",
                   help="churn scenario: rounds, back to back, on a server with 64 slots (default 20)")
    p.add_argument("--cycles", type=int, default=1000, metavar="N",
                   help="cycles scenario: connect/echo/close sessions, VmSize/RSS tracked (default 1000)")
    p.add_argument("--big-terms", type=int, default=50, metavar="N",
                   help="big_terms scenario: 16 MiB-term publications from one address (default 50)")
    p.add_argument("--only", default=ALL_SCENARIOS, metavar="LIST",
                   help=f"comma-separated scenarios to run (default: {ALL_SCENARIOS})")
    p.add_argument("--out", type=Path, default=RESULTS, metavar="PATH",
                   help=f"JSON results file; its history goes to history/<name>.csv beside it (default {RESULTS})")
    p.add_argument("--log-level", default="WARNING", help="logging level of this script (default WARNING)")
    args = p.parse_args(argv)
    logging.basicConfig(level=args.log_level)
    out: dict[str, Any] = {"settings": vars(args) | {"out": str(args.out)}, "started": time.time()}
    failed = False
    for name in args.only.split(","):
        started = time.monotonic()
        try:
            if name in ("flood", "flood_reclaim_only"):
                events = Path(f"/tmp/echo_attack_events_{os.getpid()}_{name}")
                out[name] = flood(args, events, *(("--flood-penalty", "0") if name == "flood_reclaim_only" else ()))
            elif name == "churn":
                out[name] = churn(args)
            elif name == "cycles":
                out[name] = cycles(args)
            elif name == "big_terms":
                out[name] = big_terms(args)
            else:
                raise ValueError(f"unknown scenario {name!r}")
        except Exception as exc:  # noqa: BLE001 - record and go on with the next scenario
            failed = True
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
        out[name]["wall_s"] = round(time.monotonic() - started, 1)
        print(json.dumps({name: out[name]}), flush=True)
    save_results(args.out, out, history_row(out), "" if args.only == ALL_SCENARIOS else args.only)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
