"""Synthetic Echo 2.0 telemetry: legit load clients plus hostile sources.

A public tool, shipped on purpose: it lets a user try the analytics without a server
under attack, and it feeds the pipeline's tests and benchmarks.

``python -m aeron_py.analytics.generate --out DIR --events N [--seed S]
[--hostile-ips ADDR_OR_PREFIX ...]`` writes exactly N events as JSON Lines through
:class:`~aeron_py.telemetry.writer.EventWriter` (server events ``events-*.jsonl``,
load-client RTT samples ``load-*.jsonl``) and a ``generator.json`` manifest naming
the hostile sources, their behaviour and the source key the rules should flag.

The simulation is a discrete-event merge of one Python generator per actor (legit
client, hostile source, driver snapshots, arrivals), so memory grows with the number
of *concurrent* clients, not with N: ten million events stream straight to disk.

Simulated server: at most 256 duologues, 3 per IP, 10 s expiry. Legit clients
(IPv4 and IPv6, a few behind shared office addresses) say HELLO, retry when the server
is full, connect, echo once per second for about a minute and a half (one
``rtt_sample`` each) and leave. Hostile behaviours, assigned round-robin to the
hostile addresses (an IPv6 prefix always gets ``ipv6_rotator``):

* ``hello_flood`` — HELLO several times a second, never connects;
* ``garbage`` — junk instead of ``HELLO <key>`` on the all-clients channel;
* ``session_guesser`` — images on other clients' duologues (``wrong_ip``);
* ``duologue_abuser`` — connects, then sends a bad message, again and again;
* ``ipv6_rotator`` — a HELLO flood from ever-new addresses inside one /64.

Hostile sources attack in windows of minutes separated by pauses; after the first
window part of their traffic shows up as ``blocklist_hit`` (as if an operator had
blocked them).
"""

from __future__ import annotations

import argparse
import heapq
import ipaddress
import json
import logging
import math
import random
import sys
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aeron_py.duologue.blocklist import parse_network
from aeron_py.telemetry.writer import EventWriter

__all__ = ["GeneratorConfig", "generate", "main"]

log = logging.getLogger(__name__)

DEFAULT_START_TS = 1_767_225_600.0  # 2026-01-01T00:00:00Z
DEFAULT_HOSTILE = ("203.0.113.10", "203.0.113.11", "203.0.113.12", "203.0.113.13", "2001:db8:bad:1::/64")
BEHAVIOURS = ("hello_flood", "garbage", "session_guesser", "duologue_abuser")
MAX_DUOLOGUES = 256
MAX_PER_IP = 3
EXPIRY_S = 10.0
PORT_BASE = 9010
STREAM_ID = 0x2044F002
ECHO_BYTES = len("ECHO ") + 16
SNAPSHOT_PERIOD_S = 5.0

Event = tuple[float, str, str, dict[str, Any]]  # (ts, writer name, kind, fields)


@dataclass(frozen=True)
class Wake:
    """An actor asks to be resumed at ``ts`` without emitting anything."""

    ts: float


# One step of a hostile behaviour: yields its events, returns when the next step starts.
Step = Generator[Event | Wake, None, float]


@dataclass(frozen=True)
class GeneratorConfig:
    """What to generate."""

    out: Path
    events: int
    seed: int = 1
    hostile: tuple[str, ...] = DEFAULT_HOSTILE
    start_ts: float = DEFAULT_START_TS
    server_id: str = "echo-1"
    max_bytes: int = 64 * 1024 * 1024


@dataclass
class _Server:
    """The state of the simulated server that actors consult and change."""

    rng: random.Random
    active: int = 0
    per_ip: dict[str, int] = field(default_factory=dict)
    sessions: dict[int, str] = field(default_factory=dict)  # duologue session -> owner
    bytes_echoed: int = 0
    bad_messages: int = 0

    def admit(self, ip: str) -> str | None:
        """None if a duologue may be created for ``ip``, else the reject reason."""
        if self.active >= MAX_DUOLOGUES:
            return "server_full"
        if self.per_ip.get(ip, 0) >= MAX_PER_IP:
            return "too_many_for_ip"
        return None

    def create(self, ip: str) -> dict[str, Any]:
        session = self.rng.randrange(1, 2**31)
        while session in self.sessions:
            session = self.rng.randrange(1, 2**31)
        self.sessions[session] = ip
        self.active += 1
        self.per_ip[ip] = self.per_ip.get(ip, 0) + 1
        data = PORT_BASE + self.rng.randrange(2 * MAX_DUOLOGUES)
        return {"session": session, "owner_ip": ip, "data_port": data, "control_port": data + 1}

    def release(self, session: int) -> None:
        ip = self.sessions.pop(session)
        self.active -= 1
        left = self.per_ip[ip] - 1
        if left:
            self.per_ip[ip] = left
        else:
            del self.per_ip[ip]


class _Simulation:
    """Merges actor generators by time and writes their events."""

    def __init__(self, config: GeneratorConfig, emit: Callable[[Event], None]) -> None:
        self.cfg = config
        self.rng = random.Random(config.seed)
        self.server = _Server(self.rng)
        self._emit = emit
        self._heap: list[tuple[float, int, Event | Wake, Iterator[Event | Wake]]] = []
        self._seq = 0
        self.legit_sessions = 0
        office = [f"198.51.100.{i}" for i in range(1, 51)]
        self._office = office

    # -- scheduling -------------------------------------------------------------
    def start(self, actor: Iterator[Event | Wake]) -> None:
        self._push(actor)

    def _push(self, actor: Iterator[Event | Wake]) -> None:
        item = next(actor, None)
        if item is not None:
            ts = item.ts if isinstance(item, Wake) else item[0]
            self._seq += 1
            heapq.heappush(self._heap, (ts, self._seq, item, actor))

    def run(self, events: int) -> tuple[int, float]:
        """Emit ``events`` events; return (count, last ts)."""
        count, last = 0, self.cfg.start_ts
        while count < events and self._heap:
            ts, _, item, actor = heapq.heappop(self._heap)
            if not isinstance(item, Wake):
                self._emit(item)
                count += 1
                last = ts
            self._push(actor)
        return count, last

    # -- helpers ------------------------------------------------------------------
    def _initial_session(self) -> int:
        return self.rng.randrange(-(2**31), 0)

    def _hello(self, ts: float, ip: str, key_valid: bool = True) -> tuple[Event, int]:
        initial = self._initial_session()
        fields = {"initial_session": initial, "ip": ip, "port": self.rng.randrange(32768, 61000), "key_valid": key_valid}
        return (ts, "server", "hello", fields), initial

    @staticmethod
    def _ev(ts: float, kind: str, **fields: Any) -> Event:
        return (ts, "server", kind, fields)

    def _legit_ip(self) -> str:
        roll = self.rng.random()
        if roll < 0.1:
            return self.rng.choice(self._office)
        if roll < 0.3:
            net = 0x20010DB8_1000_0000 | self.rng.getrandbits(28)
            return str(ipaddress.IPv6Address((net << 64) | self.rng.getrandbits(64)))
        return str(ipaddress.IPv4Address(0x0A000000 | self.rng.getrandbits(24)))

    def _close(self, ts: float, session: int, owner: str, reason: str, opened: float, msgs: int) -> Event:
        return self._ev(
            ts, "duologue_closed", session=session, owner_ip=owner, reason=reason,
            lifetime_s=round(ts - opened, 3), msgs_in=msgs, msgs_out=msgs,
            bytes_in=msgs * ECHO_BYTES, bytes_out=msgs * ECHO_BYTES,
        )

    # -- actors -------------------------------------------------------------------
    def arrivals(self) -> Iterator[Event | Wake]:
        """Spawns legit clients at a rate that swings over the simulated hour."""
        t = self.cfg.start_ts
        while True:
            phase = 2 * math.pi * (t - self.cfg.start_ts) / 3600.0
            rate = 1.2 * (1.0 + 0.7 * math.sin(phase))
            t += self.rng.expovariate(max(rate, 0.05))
            yield Wake(t)
            self.start(self.legit_client(t))

    def legit_client(self, t: float) -> Iterator[Event | Wake]:
        ip = self._legit_ip()
        rtt_base = self.rng.lognormvariate(math.log(600), 0.6)
        for _attempt in range(3):
            hello, initial = self._hello(t, ip)
            yield hello
            reason = self.server.admit(ip)
            if reason is not None:
                t += self.rng.uniform(0.0005, 0.002)
                yield self._ev(t, "reject", initial_session=initial, ip=ip, reason=reason)
                t += self.rng.uniform(5, 20)
                yield Wake(t)
                continue
            duologue = self.server.create(ip)
            session, opened = duologue["session"], t + 0.001
            yield self._ev(opened, "duologue_created", **duologue)
            self.legit_sessions += 1
            if self.rng.random() < 0.02:  # never shows up
                t = opened + EXPIRY_S
                yield self._close(t, session, ip, "expired", opened, 0)
                self.server.release(session)
                return
            t = opened + self.rng.uniform(0.05, 0.5)
            yield self._ev(t, "client_connected", session=session, ip=ip, wrong_ip=False)
            echoes = max(1, int(self.rng.expovariate(1 / 90.0)))
            buggy = self.rng.random() < 0.003
            for seq in range(echoes):
                t += 1.0 + self.rng.uniform(-0.01, 0.01)
                rtt = rtt_base * self.rng.lognormvariate(0, 0.25)
                if self.rng.random() < 0.01:
                    rtt *= self.rng.uniform(5, 30)  # a spike
                self.server.bytes_echoed += ECHO_BYTES
                yield (t, "load", "rtt_sample", {"client_ip": ip, "rtt_us": int(rtt), "seq": seq})
            if buggy:
                t += 1.0
                self.server.bad_messages += 1
                yield self._ev(t, "bad_message", session=session, ip=ip, where="duologue")
                reason = "bad_message"
            else:
                t += self.rng.uniform(1.0, 10.0)
                reason = self.rng.choices(("client_gone", "idle", "send_deadline"), (0.93, 0.05, 0.02))[0]
            yield self._close(t, session, ip, reason, opened, echoes)
            self.server.release(session)
            return

    def hostile(self, source: str, behaviour: str) -> Iterator[Event | Wake]:
        """Attack windows of minutes, pauses between; blocklist hits after window 1."""
        network = parse_network(source)
        t = self.cfg.start_ts + self.rng.uniform(0, 2)
        window = 0
        step = getattr(self, f"_{behaviour}")
        while True:
            end = t + self.rng.uniform(120, 600)
            while t < end:
                if window > 0 and self.rng.random() < 0.5:
                    yield self._ev(t, "blocklist_hit", ip=self._address_in(network), rule=_target(network))
                    t += self.rng.uniform(0.1, 0.4)
                    continue
                t = yield from step(t, network)
            window += 1
            t += self.rng.uniform(300, 1800)
            yield Wake(t)

    def _address_in(self, network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> str:
        if network.num_addresses == 1:
            return str(network.network_address)
        offset = self.rng.randrange(1, network.num_addresses)
        return str(network.network_address + offset)

    def _flood_hello(self, t: float, ip: str) -> Step:
        """One HELLO that is never followed by a connect; returns the next time."""
        hello, initial = self._hello(t, ip)
        yield hello
        reason = self.server.admit(ip)
        if reason is not None:
            yield self._ev(t + 0.001, "reject", initial_session=initial, ip=ip, reason=reason)
        else:
            duologue = self.server.create(ip)
            yield self._ev(t + 0.001, "duologue_created", **duologue)
            self.start(self._expire(t + 0.001, duologue))
        return t + self.rng.uniform(0.1, 0.3)

    def _expire(self, opened: float, duologue: dict[str, Any]) -> Iterator[Event | Wake]:
        t = opened + EXPIRY_S
        yield self._close(t, duologue["session"], duologue["owner_ip"], "expired", opened, 0)
        self.server.release(duologue["session"])

    def _hello_flood(self, t: float, network: Any) -> Step:
        return (yield from self._flood_hello(t, str(network.network_address)))

    def _ipv6_rotator(self, t: float, network: Any) -> Step:
        return (yield from self._flood_hello(t, self._address_in(network)))

    def _garbage(self, t: float, network: Any) -> Step:
        ip = str(network.network_address)
        hello, initial = self._hello(t, ip, key_valid=False)
        yield hello
        yield self._ev(t + 0.0005, "bad_message", session=initial, ip=ip, where="initial")
        yield self._ev(t + 0.001, "reject", initial_session=initial, ip=ip, reason="bad_message")
        return t + self.rng.uniform(0.3, 0.8)

    def _session_guesser(self, t: float, network: Any) -> Step:
        ip = str(network.network_address)
        victims = [s for s, owner in list(self.server.sessions.items())[:50] if owner != ip]
        session = self.rng.choice(victims) if victims else self.rng.randrange(1, 2**31)
        yield self._ev(t, "client_connected", session=session, ip=ip, wrong_ip=True)
        return t + self.rng.uniform(0.5, 2.0)

    def _duologue_abuser(self, t: float, network: Any) -> Step:
        ip = str(network.network_address)
        hello, initial = self._hello(t, ip)
        yield hello
        reason = self.server.admit(ip)
        if reason is not None:
            yield self._ev(t + 0.001, "reject", initial_session=initial, ip=ip, reason=reason)
            return t + self.rng.uniform(1.0, 3.0)
        duologue = self.server.create(ip)
        session, opened = duologue["session"], t + 0.001
        yield self._ev(opened, "duologue_created", **duologue)
        yield self._ev(opened + 0.05, "client_connected", session=session, ip=ip, wrong_ip=False)
        yield self._ev(opened + 0.1, "bad_message", session=session, ip=ip, where="duologue")
        self.server.bad_messages += 1
        yield self._close(opened + 0.1, session, ip, "bad_message", opened, 0)
        self.server.release(session)
        return opened + self.rng.uniform(0.5, 1.5)

    def driver_snapshots(self) -> Iterator[Event | Wake]:
        """Cumulative driver counters every few seconds; rare loss and error records."""
        counters = {
            "Bytes sent": 0, "Bytes received": 0, "NAKs sent": 0, "NAKs received": 0,
            "Status Messages sent": 0, "Heartbeats sent": 0, "Retransmits sent": 0,
            "Errors": 0, "Loss gap fills": 0, "Invalid packets": 0, "Bytes currently mapped": 0,
        }
        t = self.cfg.start_ts
        while True:
            t += SNAPSHOT_PERIOD_S
            yield Wake(t)
            echoed = self.server.bytes_echoed
            counters["Bytes sent"] = echoed + 64 * int(t - self.cfg.start_ts)
            counters["Bytes received"] = echoed + 48 * int(t - self.cfg.start_ts)
            counters["Status Messages sent"] += 25 * max(1, self.server.active)
            counters["Heartbeats sent"] += 10 * max(1, self.server.active)
            counters["Invalid packets"] = self.server.bad_messages
            counters["Bytes currently mapped"] = (2 + 2 * self.server.active) * 196 * 1024
            loss, errors = [], []
            if self.rng.random() < 0.02:
                lost = self.rng.randrange(1, 20) * 1408
                counters["NAKs sent"] += self.rng.randrange(1, 5)
                counters["Retransmits sent"] += self.rng.randrange(1, 5)
                counters["Loss gap fills"] += 1
                loss.append({
                    "observation_count": 1, "total_bytes_lost": lost,
                    "first_observation_ts": t - 1.0, "last_observation_ts": t - 0.5,
                    "session_id": self.rng.randrange(1, 2**31), "stream_id": STREAM_ID,
                    "channel": f"aeron:udp?endpoint=0.0.0.0:{PORT_BASE + self.rng.randrange(400)}",
                    "source": f"10.{self.rng.randrange(256)}.{self.rng.randrange(256)}.7:40123",
                })
            if self.rng.random() < 0.005:
                counters["Errors"] += 1
                errors.append({
                    "observation_count": 1, "first_observation_ts": t - 2.0, "last_observation_ts": t - 2.0,
                    "message": self.rng.choice((
                        "image rejected: term length 1073741824 above limit 65536",
                        "send deadline exceeded on duologue publication",
                    )),
                })
            yield self._ev(t, "driver_snapshot", counters=dict(counters), new_loss=loss, new_errors=errors)


def _target(network: ipaddress.IPv4Network | ipaddress.IPv6Network) -> str:
    if network.prefixlen == network.max_prefixlen:
        return str(network.network_address)
    return str(network)


def hostile_plan(sources: tuple[str, ...]) -> list[dict[str, str]]:
    """Behaviour and expected source key (/64 for IPv6) of each hostile source."""
    plan = []
    for index, source in enumerate(sources):
        network = parse_network(source)
        if network.prefixlen < network.max_prefixlen:
            if network.version == 4:
                raise ValueError(f"{source}: only IPv6 prefixes can be hostile (IPv4 is judged per address)")
            behaviour = "ipv6_rotator"
        else:
            behaviour = BEHAVIOURS[index % len(BEHAVIOURS)]
        if network.version == 6:
            key = str(ipaddress.ip_network(f"{network.network_address}/64", strict=False))
        else:
            key = str(network.network_address)
        plan.append({"source": _target(network), "behaviour": behaviour, "key": key})
    return plan


def generate(config: GeneratorConfig) -> dict[str, Any]:
    """Write ``config.events`` events under ``config.out``; return the manifest."""
    plan = hostile_plan(config.hostile)
    config.out.mkdir(parents=True, exist_ok=True)
    writers = {
        name: EventWriter(
            config.out, source=name, server_id=config.server_id, max_bytes=config.max_bytes,
            prefix="events" if name == "server" else name, flush_each_event=False,
        )
        for name in ("server", "load")
    }

    def emit(event: Event) -> None:
        ts, writer, kind, fields = event
        writers[writer].emit(kind, ts=round(ts, 6), **fields)

    sim = _Simulation(config, emit)
    sim.start(sim.arrivals())
    sim.start(sim.driver_snapshots())
    for item in plan:
        sim.start(sim.hostile(item["source"], item["behaviour"]))
    try:
        count, last_ts = sim.run(config.events)
    finally:
        for writer in writers.values():
            writer.close()
    manifest = {
        "seed": config.seed,
        "events": count,
        "start_ts": config.start_ts,
        "end_ts": last_ts,
        "server_id": config.server_id,
        "legit_sessions": sim.legit_sessions,
        "hostile": plan,
        "files": sorted(p.name for w in writers.values() for p in w.files),
    }
    (config.out / "generator.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return manifest


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m aeron_py.analytics.generate",
        description="Write synthetic Echo 2.0 telemetry (legit and hostile clients) as JSON Lines.",
        epilog="Example: python -m aeron_py.analytics.generate --out /tmp/events --events 100000 "
        "--seed 7 --hostile-ips 203.0.113.9 2001:db8:bad:1::/64",
    )
    parser.add_argument("--out", required=True, type=Path, help="directory to write *.jsonl into (created)")
    parser.add_argument("--events", required=True, type=int, help="exact number of events to write")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1): same seed, same logs")
    parser.add_argument(
        "--hostile-ips", nargs="*", default=list(DEFAULT_HOSTILE), metavar="ADDR_OR_PREFIX",
        help="hostile sources; an address gets one of " + ", ".join(BEHAVIOURS)
        + " (round-robin), an IPv6 prefix the rotator (default: %(default)s; give none for only legit clients)",
    )
    parser.add_argument("--start-ts", type=float, default=DEFAULT_START_TS, help="epoch seconds of the first event")
    parser.add_argument("--server-id", default="echo-1", help="server_id of the events (default echo-1)")
    return parser


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the exit code (2 for bad arguments)."""
    parser = _parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.events < 1:
        parser.error(f"--events must be at least 1, got {args.events}")
    try:
        hostile_plan(tuple(args.hostile_ips))
    except ValueError as exc:
        parser.error(f"--hostile-ips: {exc}")
    config = GeneratorConfig(
        out=args.out, events=args.events, seed=args.seed, hostile=tuple(args.hostile_ips),
        start_ts=args.start_ts, server_id=args.server_id,
    )
    manifest = generate(config)
    log.info("wrote %d events to %s (%d files)", manifest["events"], args.out, len(manifest["files"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
