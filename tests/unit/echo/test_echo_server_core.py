"""Tests for aeron_py.duologue.core.server.DuologueServerCore (docs/spec/echo2.md §3, §4)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aeron_py.duologue.core.protocol import (
    Connect,
    CoreUsageError,
    format_hello,
    parse_initial_reply,
    session_from_crypt,
)
from aeron_py.duologue.core.contract import (
    Action,
    Broadcast,
    CloseDuologue,
    CloseReason,
    CreateDuologue,
    Event,
    RejectImage,
    SendDuologue,
    ServerConfig,
)
from aeron_py.echo.core.echo_rule import answer
from aeron_py.duologue.core.server import DuologueServerCore

pytestmark = pytest.mark.timeout(60)

KEY = 0x611786D9
BASE = 9010
SMALL_TERM = 65536


def make(**overrides: Any) -> DuologueServerCore:
    """A core with 4 clients on ports 9010-9017 unless overridden."""
    settings_ = {"max_clients": 4, "clients_base_port": BASE, **overrides}
    return DuologueServerCore(ServerConfig(**settings_), rng=random.Random(7))


def identity(ip: str, port: int = 40000) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def of(actions: list[Action], cls: type) -> list[Any]:
    return [a for a in actions if isinstance(a, cls)]


def events(actions: list[Action], kind: str) -> list[Event]:
    return [a for a in of(actions, Event) if a.kind == kind]


class Harness:
    """Drives a core like the glue would and checks every event carries an ip."""

    def __init__(self, core: DuologueServerCore) -> None:
        self.core = core
        self.next_image = 1
        self.all_actions: list[Action] = []

    def record(self, actions: list[Action]) -> list[Action]:
        for event in of(actions, Event):
            assert "ip" in event.fields, event
        self.all_actions += actions
        return actions

    def initial_image(self, sid: int, ip: str, term: int = SMALL_TERM, now: float = 0.0) -> int:
        image = self.next_image
        self.next_image += 1
        self.record(self.core.initial_image_available(image, sid, identity(ip), term, now))
        return image

    def hello(self, sid: int, ip: str, data: bytes | None = None, now: float = 0.0,
              blocked: str | None = None) -> list[Action]:
        image = self.initial_image(sid, ip, now=now)
        return self.record(self.core.hello_received(image, format_hello(KEY) if data is None else data, now,
                                                    blocked=blocked))

    def message(self, session: int, image: int, data: bytes, now: float) -> list[Action]:
        """A duologue message, answered by Echo's application rule (the core delivers it)."""
        return answer(self.core, self.core.duologue_message(session, image, data, now), now)

    def duologue(self, ip: str, sid: int = -555798973, now: float = 0.0) -> CreateDuologue:
        created = of(self.hello(sid, ip, now=now), CreateDuologue)
        assert len(created) == 1
        return created[0]

    def join(self, session: int, ip: str, now: float = 0.0, term: int = SMALL_TERM) -> tuple[int, list[Action]]:
        image = self.next_image
        self.next_image += 1
        return image, self.record(self.core.duologue_image_available(session, image, identity(ip), term, now))


def assert_no_resources(core: DuologueServerCore) -> None:
    stats = core.stats
    assert (stats.duologues, stats.ports_in_use, stats.sessions_in_use, stats.source_keys) == (0, 0, 0, 0)


def assert_closed(actions: list[Action], session: int, reason: str) -> dict[str, Any]:
    assert CloseDuologue(session, CloseReason(reason)) in actions
    closed = events(actions, "duologue_closed")
    assert len(closed) == 1 and closed[0].fields["reason"] == reason
    return closed[0].fields


# ------------------------------------------------------------- config


@pytest.mark.parametrize(("field", "value"), [
    ("max_clients", 0), ("max_per_ip", 0), ("max_message", 0), ("max_image_term_length", 0),
    ("expiry", 0), ("idle_timeout", -1.0), ("max_clients", 2.5),
])
def test_config_validation(field: str, value: Any) -> None:
    with pytest.raises(ValueError, match=field):
        ServerConfig(**{"max_clients": 1, "clients_base_port": BASE, field: value})


def test_bad_port_range_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="top port"):
        make(clients_base_port=65530, max_clients=4)


# --------------------------------------------------------------- HELLO


def test_hello_creates_duologue_and_broadcasts_connect() -> None:
    h = Harness(make())
    actions = h.hello(-555798973, "192.0.2.1")
    assert [type(a) for a in actions] == [Event, CreateDuologue, Broadcast, Event]
    assert [e.kind for e in of(actions, Event)] == ["hello", "duologue_created"]
    create = of(actions, CreateDuologue)[0]
    broadcast = of(actions, Broadcast)[0]
    assert create.owner_ip == "192.0.2.1"
    assert broadcast.duologue_session == create.session_id
    assert broadcast.data.startswith(b"-555798973 CONNECT ")
    reply = parse_initial_reply(broadcast.data, -555798973)
    assert reply == Connect(create.data_port, create.control_port, reply.crypt)  # type: ignore[union-attr]
    assert session_from_crypt(KEY, reply.crypt) == create.session_id  # type: ignore[union-attr]
    assert {create.data_port, create.control_port} <= set(range(BASE, BASE + 8))
    assert create.data_port != create.control_port
    assert 1 <= create.session_id < 2**31 - 1
    assert h.core.connections_for_ip("192.0.2.1") == 1
    assert h.core.stats.ports_in_use == 2 and h.core.stats.connects == 1


@pytest.mark.parametrize("data", [
    b"HELLO 611786d9", b"HELLO  611786D9", b"HELLO 100000000", b"ECHO hi", b"HELLO", b"",
    b"HELLO 1\n", b"\xff\xfe",
])
def test_bad_hello_gets_bad_message_and_takes_nothing(data: bytes) -> None:
    h = Harness(make())
    actions = h.hello(-12, "192.0.2.1", data)
    assert of(actions, Broadcast) == [Broadcast(b"-12 ERROR bad message")]
    (reject,) = events(actions, "reject")
    assert reject.fields["reason"] == "bad message" and reject.fields["ip"] == "192.0.2.1"
    assert not of(actions, CreateDuologue)
    assert_no_resources(h.core)
    h.duologue("192.0.2.1", sid=-12)  # the client may retry


def test_oversize_hello_is_bad_message() -> None:
    h = Harness(make(max_message=8))
    actions = h.hello(3, "192.0.2.1", b"HELLO 0001")  # 10 bytes, would parse
    assert of(actions, Broadcast) == [Broadcast(b"3 ERROR bad message")]
    assert events(actions, "reject")[0].fields["cause"] == "oversize"
    # no client sends one: the image is rejected at once, so its log holds no more than this
    assert of(actions, RejectImage) == [RejectImage(h.next_image - 1, None, "oversize")]
    assert of(Harness(make(max_message=10)).hello(3, "192.0.2.1", b"HELLO 0001"), CreateDuologue)


def test_server_full() -> None:
    h = Harness(make(max_clients=2))
    h.duologue("192.0.2.1")
    h.duologue("192.0.2.2")
    actions = h.hello(77, "192.0.2.3")
    assert of(actions, Broadcast) == [Broadcast(b"77 ERROR server full")]
    assert events(actions, "reject")[0].fields["cause"] == "max_clients"
    assert h.core.stats.ports_in_use == 4 and h.core.stats.sessions_in_use == 2
    assert h.core.connections_for_ip("192.0.2.3") == 0


def test_too_many_per_ip() -> None:
    h = Harness(make(max_clients=8))
    for _ in range(3):
        h.duologue("192.0.2.1")
    actions = h.hello(5, "192.0.2.1")
    assert of(actions, Broadcast) == [Broadcast(b"5 ERROR too many connections for IP address")]
    assert h.core.connections_for_ip("192.0.2.1") == 3
    h.duologue("192.0.2.2")


def test_per_ip_limit_aggregates_ipv6_by_prefix() -> None:
    h = Harness(make(max_clients=8, max_per_ip=2))
    h.duologue("2001:db8:0:1::1")
    h.duologue("2001:db8:0:1::2")
    refused = h.hello(5, "2001:db8:0:1::3")
    assert of(refused, Broadcast) == [Broadcast(b"5 ERROR too many connections for IP address")]
    h.duologue("2001:db8:0:2::1")  # another /64 is fine
    assert h.core.connections_for_ip("2001:db8:0:1::ffff") == 2


def test_blocklist() -> None:
    h = Harness(make())
    actions = h.hello(9, "192.0.2.66", blocked="listed")  # the glue's fact: its blocklist entry
    assert of(actions, Broadcast) == [Broadcast(b"9 ERROR too many connections for IP address")]
    (hit,) = events(actions, "blocklist_hit")
    assert hit.fields == {"ip": "192.0.2.66", "session_id": 9, "detail": "listed"}
    assert events(actions, "reject")[0].fields["cause"] == "blocklist"
    assert_no_resources(h.core)
    h.duologue("192.0.2.67")


def test_duologues_keyed_by_their_own_session() -> None:
    h = Harness(make())
    a = h.duologue("192.0.2.1", sid=42)
    b = h.duologue("192.0.2.1", sid=42)
    assert a.session_id != b.session_id and h.core.duologue_count == 2


def test_session_exhaustion_returns_the_ports() -> None:
    h = Harness(make(session_min=1, session_max=2))
    h.duologue("192.0.2.1")
    actions = h.hello(8, "192.0.2.2")
    assert of(actions, Broadcast) == [Broadcast(b"8 ERROR server full")]
    assert events(actions, "reject")[0].fields["cause"] == "no_session_ids"
    assert h.core.stats.ports_in_use == 2 and h.core.stats.source_keys == 1


def test_initial_image_contract() -> None:
    core = make()
    with pytest.raises(CoreUsageError, match="image 5"):
        core.hello_received(5, format_hello(1), 0.0)
    core.initial_image_available(5, 1, "192.0.2.1:4000", SMALL_TERM, 0.0)
    with pytest.raises(CoreUsageError, match="already"):
        core.initial_image_available(5, 1, "192.0.2.1:4000", SMALL_TERM, 0.0)
    assert core.initial_image_unavailable(5, 1.0) == []
    with pytest.raises(CoreUsageError, match="never"):
        core.initial_image_unavailable(5, 1.0)
    with pytest.raises(ValueError, match="no port"):
        core.initial_image_available(6, 1, "aeron:udp", SMALL_TERM, 0.0)


def test_oversized_initial_image_rejected_and_its_hello_answered() -> None:
    """Decision 3: the image is rejected, yet its session gets ``ERROR server full`` (at
    once, and again for a HELLO read later, at most once per refusal interval)."""
    core = make(max_image_term_length=SMALL_TERM)
    actions = core.initial_image_available(3, 11, "192.0.2.1:4000", SMALL_TERM * 2, 0.0)
    assert of(actions, RejectImage) == [RejectImage(3, None, "term_length")]
    assert of(actions, Broadcast) == [Broadcast(b"11 ERROR server full")]
    assert not of(core.hello_received(3, format_hello(KEY), 0.1), Broadcast)  # just answered
    later = core.hello_received(3, format_hello(KEY), 1.0)
    assert of(later, Broadcast) == [Broadcast(b"11 ERROR server full")]
    assert events(later, "reject")[0].fields["cause"] == "image_rejected"
    assert core.stats.refusals_coalesced == 1
    assert_no_resources(core)


def test_repeated_refusals_to_one_image_are_coalesced() -> None:
    core = make(max_clients=1, flood_hellos=None)
    core.initial_image_available(1, 5, "192.0.2.1:4000", SMALL_TERM, 0.0)
    assert of(core.hello_received(1, format_hello(KEY), 0.0), CreateDuologue)
    core.initial_image_available(2, 6, "192.0.2.2:4000", SMALL_TERM, 0.0)
    answers = [of(core.hello_received(2, format_hello(k), 0.01 * k), Broadcast) for k in range(1, 41)]
    assert answers[0] == [Broadcast(b"6 ERROR server full")]
    assert sum(map(len, answers)) == 1  # 40 HELLOs in 0.4 s: one answer
    assert of(core.hello_received(2, format_hello(99), 0.6), Broadcast) == [Broadcast(b"6 ERROR server full")]
    assert core.stats.refusals_coalesced == 39 and core.stats.rejects == {"max_clients": 41}
    assert of(core.hello_received(2, b"HELLO zz", 0.61), Broadcast) == [Broadcast(b"6 ERROR bad message")]


# ------------------------------------------------------------ duologue


def test_echo_verbatim() -> None:
    h = Harness(make())
    d = h.duologue("192.0.2.1")
    image, joined = h.join(d.session_id, "192.0.2.1", now=1.0)
    (connected,) = events(joined, "client_connected")
    assert connected.fields["wrong_ip"] is False
    for message in (b"ECHO hello", b"ECHO ", "ECHO ✓".encode(), b"ECHO \xff\x00"):
        assert h.message(d.session_id, image, message, 2.0) == [
            SendDuologue(d.session_id, message)]
    info = h.core.duologue_info(d.session_id)
    assert info is not None and info.connected and info.msgs_in == 4 and info.msgs_out == 4


def test_owner_compared_by_address_not_text() -> None:
    h = Harness(make())
    d = h.duologue("2001:db8::1")
    _, joined = h.join(d.session_id, "2001:0db8:0:0::1")
    assert not of(joined, RejectImage)


def test_wrong_ip_image_rejected_and_ignored() -> None:
    h = Harness(make(expiry=5.0))
    d = h.duologue("192.0.2.1")
    image, joined = h.join(d.session_id, "198.51.100.9", now=1.0)
    assert of(joined, RejectImage) == [RejectImage(image, d.session_id, "wrong_ip")]
    (connected,) = events(joined, "client_connected")
    assert connected.fields["wrong_ip"] is True and connected.fields["ip"] == "198.51.100.9"
    assert h.message(d.session_id, image, b"ECHO x", 2.0) == []
    assert h.message(d.session_id, image, b"garbage", 2.0) == []
    assert h.core.duologue_image_unavailable(d.session_id, image, 3.0) == []
    assert h.core.duologue_count == 1
    assert_closed(h.core.tick(5.0), d.session_id, "expired")
    assert_no_resources(h.core)


def test_oversized_duologue_image_rejected() -> None:
    h = Harness(make(max_image_term_length=SMALL_TERM))
    d = h.duologue("192.0.2.1")
    image, joined = h.join(d.session_id, "192.0.2.1", term=SMALL_TERM * 4)
    assert of(joined, RejectImage) == [RejectImage(image, d.session_id, "term_length")]
    assert h.message(d.session_id, image, b"ECHO x", 1.0) == []


@pytest.mark.parametrize("data", [b"ECHO", b"HELLO 1", b"ECHO a\rb", "ECHO \u2028".encode(), b""])
def test_bad_duologue_message_errors_then_closes(data: bytes) -> None:
    h = Harness(make())
    d = h.duologue("192.0.2.1", now=10.0)
    image, _ = h.join(d.session_id, "192.0.2.1", now=10.5)
    h.message(d.session_id, image, b"ECHO ok", 11.0)
    actions = h.record(h.message(d.session_id, image, data, 12.0))
    assert actions[0] == SendDuologue(d.session_id, b"ERROR bad message")
    assert [type(a) for a in actions] == [SendDuologue, Event, CloseDuologue, Event]
    assert events(actions, "bad_message")[0].fields["ip"] == "192.0.2.1"
    stats = assert_closed(actions, d.session_id, "bad_message")
    assert stats == {"ip": "192.0.2.1", "session_id": d.session_id, "reason": "bad_message",
                     "lifetime_s": 2.0, "msgs_in": 2, "msgs_out": 2,
                     "bytes_in": 7 + len(data), "bytes_out": 7 + 17}
    assert_no_resources(h.core)


def test_oversize_echo_is_bad_message() -> None:
    h = Harness(make(max_message=16))
    d = h.duologue("192.0.2.1")
    image, _ = h.join(d.session_id, "192.0.2.1")
    exact = b"ECHO " + b"x" * 11
    assert h.message(d.session_id, image, exact, 1.0) == [SendDuologue(d.session_id, exact)]
    actions = h.message(d.session_id, image, exact + b"x", 1.0)
    assert events(actions, "bad_message")[0].fields["oversize"] is True
    assert_closed(actions, d.session_id, "bad_message")


def test_client_gone_when_last_owner_image_leaves() -> None:
    h = Harness(make())
    d = h.duologue("192.0.2.1")
    first, _ = h.join(d.session_id, "192.0.2.1")
    second, _ = h.join(d.session_id, "192.0.2.1")
    assert h.core.duologue_image_unavailable(d.session_id, first, 1.0) == []
    assert_closed(h.core.duologue_image_unavailable(d.session_id, second, 2.0), d.session_id, "client_gone")
    assert_no_resources(h.core)


def test_unknown_duologue_image_is_a_contract_error() -> None:
    h = Harness(make())
    d = h.duologue("192.0.2.1")
    with pytest.raises(CoreUsageError):
        h.message(d.session_id, 999, b"ECHO x", 0.0)
    with pytest.raises(CoreUsageError):
        h.core.duologue_image_unavailable(d.session_id, 999, 0.0)
    image, _ = h.join(d.session_id, "192.0.2.1")
    with pytest.raises(CoreUsageError, match="already"):
        h.core.duologue_image_available(d.session_id, image, "192.0.2.1:1", SMALL_TERM, 0.0)


def test_stale_events_after_close_are_ignored() -> None:
    h = Harness(make())
    d = h.duologue("192.0.2.1")
    image, _ = h.join(d.session_id, "192.0.2.1")
    h.core.send_failed(d.session_id, 1.0)
    assert h.message(d.session_id, image, b"ECHO x", 1.1) == []
    assert h.core.duologue_image_unavailable(d.session_id, image, 1.2) == []
    assert h.core.duologue_image_available(d.session_id, 77, "192.0.2.1:1", SMALL_TERM, 1.3) == []
    assert h.core.send_failed(d.session_id, 1.4) == []
    assert_no_resources(h.core)


# ------------------------------------------------------ time and closes


def test_expiry_counts_from_creation_until_first_owner_image() -> None:
    h = Harness(make(expiry=10.0))
    a = h.duologue("192.0.2.1", now=100.0)
    b = h.duologue("192.0.2.2", now=100.0)
    h.join(b.session_id, "192.0.2.2", now=109.0)
    assert h.core.tick(109.99) == []
    actions = h.core.tick(110.0)
    assert assert_closed(actions, a.session_id, "expired")["lifetime_s"] == 10.0
    assert h.core.tick(1000.0) == [] and h.core.duologue_count == 1  # no idle timeout by default


def test_idle_timeout() -> None:
    h = Harness(make(idle_timeout=5.0))
    d = h.duologue("192.0.2.1", now=0.0)
    image, _ = h.join(d.session_id, "192.0.2.1", now=1.0)
    h.message(d.session_id, image, b"ECHO x", 3.0)
    assert h.core.tick(7.99) == []
    assert_closed(h.core.tick(8.0), d.session_id, "idle")
    assert_no_resources(h.core)


def test_send_deadline() -> None:
    h = Harness(make())
    d = h.duologue("192.0.2.1")
    assert_closed(h.core.send_failed(d.session_id, 1.0), d.session_id, "send_deadline")
    assert_no_resources(h.core)


def test_shutdown_closes_everything_and_refuses_later_hellos() -> None:
    h = Harness(make())
    sessions = {h.duologue(f"192.0.2.{i}").session_id for i in range(1, 4)}
    actions = h.core.shutdown(5.0)
    assert {a.session_id for a in of(actions, CloseDuologue)} == sessions
    assert all(a.reason == "shutdown" for a in of(actions, CloseDuologue))
    assert_no_resources(h.core)
    assert of(h.hello(4, "192.0.2.9"), Broadcast) == [Broadcast(b"4 ERROR server full")]
    assert_no_resources(h.core)


def test_create_failed_refuses_and_frees() -> None:
    h = Harness(make())
    d = h.duologue("192.0.2.1", sid=-3)
    actions = h.core.create_failed(d.session_id, 0.1)
    assert actions[0] == Broadcast(b"-3 ERROR server full")
    assert_closed(actions, d.session_id, "create_failed")
    assert_no_resources(h.core)
    with pytest.raises(CoreUsageError):
        h.core.create_failed(d.session_id, 0.2)


CLOSE_PATHS = ["client_gone", "bad_message", "send_deadline", "expired", "idle", "shutdown",
               "create_failed"]


@pytest.mark.parametrize("path", CLOSE_PATHS)
def test_every_close_path_returns_everything_and_capacity_is_reusable(path: str) -> None:
    h = Harness(make(max_clients=1, max_per_ip=1, idle_timeout=1.0, expiry=1.0))
    d = h.duologue("192.0.2.1")
    image, _ = h.join(d.session_id, "192.0.2.1") if path in ("client_gone", "bad_message", "idle") else (0, [])
    core = h.core
    actions = {
        "client_gone": lambda: core.duologue_image_unavailable(d.session_id, image, 1.0),
        "bad_message": lambda: answer(core, core.duologue_message(d.session_id, image, b"nope", 1.0), 1.0),
        "send_deadline": lambda: core.send_failed(d.session_id, 1.0),
        "expired": lambda: core.tick(1.0),
        "idle": lambda: core.tick(1.0),
        "shutdown": lambda: core.shutdown(1.0),
        "create_failed": lambda: core.create_failed(d.session_id, 1.0),
    }[path]()
    assert_closed(h.record(actions), d.session_id, path)
    assert_no_resources(core)
    assert core.stats.closes == {path: 1}
    if path != "shutdown":
        again = h.duologue("192.0.2.1", now=2.0)
        assert {again.data_port, again.control_port} == {BASE, BASE + 1}


OPS = st.lists(st.tuples(st.sampled_from(["hello", "join", "wrong", "echo", "bad", "leave",
                                          "send_fail", "tick"]),
                         st.integers(0, 7), st.integers(0, 3)), max_size=60)


@settings(max_examples=150, deadline=None)
@given(OPS)
def test_resources_always_match_live_duologues(ops: list[tuple[str, int, int]]) -> None:
    h = Harness(make(max_clients=3, max_per_ip=2, idle_timeout=3.0, expiry=2.0, session_max=5))
    live: list[int] = []
    images: dict[int, list[int]] = {}
    now = 0.0
    for op, pick, ip_index in ops:
        now += 0.5
        ip = f"192.0.2.{ip_index}"
        target = live[pick % len(live)] if live else None
        if op == "hello":
            created = of(h.hello(pick, ip, now=now), CreateDuologue)
            for c in created:
                live.append(c.session_id)
                images[c.session_id] = []
        elif target is None:
            continue
        elif op in ("join", "wrong"):
            owner = h.core.duologue_info(target).owner_ip  # type: ignore[union-attr]
            image, _ = h.join(target, owner if op == "join" else "203.0.113.1", now=now)
            images[target].append(image)
        elif op in ("echo", "bad", "leave") and images[target]:
            image = images[target][pick % len(images[target])]
            if op == "leave":
                images[target].remove(image)
                h.record(h.core.duologue_image_unavailable(target, image, now))
            else:
                h.record(h.message(target, image, b"ECHO x" if op == "echo" else b"x", now))
        elif op == "send_fail":
            h.record(h.core.send_failed(target, now))
        elif op == "tick":
            h.record(h.core.tick(now))
        # (a HELLO may reclaim a place: its session id can come back at once)
        live = list(dict.fromkeys(s for s in live if h.core.duologue_info(s) is not None))
        stats = h.core.stats
        assert stats.duologues == len(live)
        assert stats.ports_in_use == 2 * len(live) and stats.sessions_in_use == len(live)
        assert sum(h.core.connections_for_ip(f"192.0.2.{i}") for i in range(4)) == len(live)
    h.record(h.core.shutdown(now + 1))
    assert_no_resources(h.core)
    created = of(h.all_actions, CreateDuologue)
    closed = of(h.all_actions, CloseDuologue)
    assert sorted(c.session_id for c in closed) == sorted(c.session_id for c in created)


# ------------------------------------------------------------- repeated HELLO


def test_repeated_hello_gets_the_same_connect_and_takes_nothing_more() -> None:
    h = Harness(make())
    image = h.initial_image(-7, "192.0.2.1")
    first = h.record(h.core.hello_received(image, format_hello(KEY), 0.0))
    again = h.record(h.core.hello_received(image, format_hello(KEY), 1.0))
    assert len(of(first, CreateDuologue)) == 1 and of(again, CreateDuologue) == []
    assert of(again, Broadcast)[0].data == of(first, Broadcast)[0].data
    assert of(again, Broadcast)[0].duologue_session == of(first, CreateDuologue)[0].session_id
    assert h.core.duologue_count == 1 and h.core.connections_for_ip("192.0.2.1") == 1
    assert h.core.stats.ports_in_use == 2


def test_hello_repeated_with_another_key_or_after_connect_opens_a_new_duologue() -> None:
    h = Harness(make())
    image = h.initial_image(-7, "192.0.2.1")
    first = of(h.record(h.core.hello_received(image, format_hello(KEY), 0.0)), CreateDuologue)[0]
    other_key = of(h.record(h.core.hello_received(image, format_hello(KEY ^ 1), 0.0)), CreateDuologue)
    assert len(other_key) == 1 and other_key[0].session_id != first.session_id
    h.join(first.session_id, "192.0.2.1", now=0.5)
    after_connect = of(h.record(h.core.hello_received(image, format_hello(KEY), 1.0)), CreateDuologue)
    assert len(after_connect) == 1 and after_connect[0].session_id != first.session_id
    assert h.core.duologue_count == 3


def test_hello_repeated_after_expiry_opens_a_new_duologue() -> None:
    h = Harness(make(expiry=2.0))
    image = h.initial_image(-7, "192.0.2.1")
    first = of(h.record(h.core.hello_received(image, format_hello(KEY), 0.0)), CreateDuologue)[0]
    assert_closed(h.record(h.core.tick(3.0)), first.session_id, "expired")
    again = of(h.record(h.core.hello_received(image, format_hello(KEY), 3.5)), CreateDuologue)
    assert len(again) == 1
    assert h.core.duologue_count == 1


def test_a_duologue_whose_connect_is_held_closes_when_its_hello_publication_goes() -> None:
    """A client closes its initial publication once it has its CONNECT, or when it gives up:
    a duologue whose CONNECT is still held back (channels being made) has nobody waiting."""
    h = Harness(make())
    held = h.duologue("192.0.2.1", sid=1)
    sent = h.duologue("192.0.2.2", sid=2)
    image_of = {1: 1, 2: 2}  # Harness numbers initial images from 1, one per HELLO
    actions = h.core.initial_image_unavailable(image_of[1], 1.0, connects_held={held.session_id})
    assert_closed(actions, held.session_id, "client_gone")
    # the CONNECT of the other went out: the client may be joining with its publication closed
    assert h.core.initial_image_unavailable(image_of[2], 1.0, connects_held={held.session_id}) == []
    assert h.core.duologue_info(sent.session_id) is not None and h.core.stats.duologues == 1
    # with no CONNECT held, nothing is closed
    late = h.duologue("192.0.2.3", sid=3)
    assert h.core.initial_image_unavailable(3, 1.0) == [] and h.core.duologue_info(late.session_id) is not None
