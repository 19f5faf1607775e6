"""Tests for aeron_py.duologue.core.client.EchoClientCore (guide spec, docs/spec/echo2.md §1, §4.10)."""

from __future__ import annotations

import random

import pytest

from aeron_py.duologue.core.client import (
    ClientState,
    EchoClientCore,
    Failed,
    OpenDuologue,
    random_key,
    random_payload,
)
from aeron_py.duologue.core.protocol import CoreUsageError, Echoed, Ignored, parse_echo
from aeron_py.duologue.core.contract import Broadcast, CreateDuologue, SendDuologue, ServerConfig
from aeron_py.echo.core.echo_rule import answer
from aeron_py.duologue.core.server import DuologueServerCore

pytestmark = pytest.mark.timeout(30)

KEY = 0x611786D9
SID = -555798973
WORKED_CONNECT = b"-555798973 CONNECT 9010 9011 129F3C18"


def echoing(timeout: float = 10.0) -> EchoClientCore:
    client = EchoClientCore(KEY, SID, timeout=timeout)
    assert isinstance(client.initial_reply(WORKED_CONNECT, 0.0), OpenDuologue)
    return client


def test_hello_and_key_validation() -> None:
    assert EchoClientCore(KEY).hello() == b"HELLO 611786D9"
    for bad in (-1, 2**32):
        with pytest.raises(ValueError, match="key"):
            EchoClientCore(bad)
    with pytest.raises(ValueError, match="timeout"):
        EchoClientCore(KEY, timeout=0)


def test_random_key_uses_the_injected_rng() -> None:
    assert EchoClientCore(rng=random.Random(3)).key == random.Random(3).getrandbits(32)
    assert random_key(random.Random(4)) == random.Random(4).getrandbits(32)
    assert 0 <= EchoClientCore().key < 2**32


def test_random_payload_is_lowercase_hex_of_64_bits() -> None:
    payload = random_payload(random.Random(5))
    assert payload == f"{random.Random(5).getrandbits(64):x}".encode()
    assert 1 <= len(payload) <= 16 and payload == payload.lower()


def test_initial_session_must_be_known_and_signed_32_bit() -> None:
    client = EchoClientCore(KEY)
    with pytest.raises(CoreUsageError, match="set_initial_session"):
        client.initial_reply(WORKED_CONNECT, 0.0)
    for bad in (2**31, -(2**31) - 1, True):
        with pytest.raises(ValueError, match="initial session"):
            client.set_initial_session(bad)


def test_connect_for_us_opens_the_decrypted_duologue() -> None:
    client = EchoClientCore(KEY)
    client.set_initial_session(SID)
    assert client.state is ClientState.AWAIT_CONNECT
    result = client.initial_reply(WORKED_CONNECT, 1.0)
    assert result == OpenDuologue(9010, 9011, 1938340545)
    assert client.state is ClientState.ECHOING and client.duologue == result
    later = client.initial_reply(WORKED_CONNECT, 1.1)
    assert isinstance(later, Ignored) and "not awaiting" in later.why
    with pytest.raises(CoreUsageError, match="hello"):
        client.hello()


@pytest.mark.parametrize("message", [
    b"-555798974 CONNECT 1 2 A", b"-555798974 ERROR server full", b"garbage",
    b"-555798973 CONNECT 1 2 a", b"-555798973 SOMETHING",
])
def test_other_messages_are_ignored_while_waiting(message: bytes) -> None:
    client = EchoClientCore(KEY, SID)
    assert isinstance(client.initial_reply(message, 0.0), Ignored)
    assert client.state is ClientState.AWAIT_CONNECT


def test_server_error_fails_with_its_reason() -> None:
    client = EchoClientCore(KEY, SID)
    result = client.initial_reply(b"-555798973 ERROR too many connections for IP address", 0.0)
    assert isinstance(result, Failed)
    assert result.server_reason == "too many connections for IP address"
    assert client.state is ClientState.FAILED and client.exit_code == 1 and client.failure == result


def test_echo_round_trip_in_order() -> None:
    client = echoing()
    first, second = client.next_echo(b"abc"), client.next_echo(b"")
    assert (first, second) == (b"ECHO abc", b"ECHO ")
    assert client.duologue_reply(b"ECHO abc", 1.0) == Echoed(b"abc")
    assert client.duologue_reply(b"ECHO ", 1.0) == Echoed(b"")
    assert client.echoes_ok == 2 and client.outstanding == 0
    client.finish()
    assert client.state is ClientState.DONE and client.exit_code == 0
    assert isinstance(client.duologue_reply(b"ECHO late", 2.0), Ignored)


@pytest.mark.parametrize(("sent", "reply", "words"), [
    (b"abc", b"ECHO abd", "mismatch"),
    (b"abc", b"ERROR bad message", "bad message"),
    (b"abc", b"nonsense", "unexpected"),
    (None, b"ECHO abc", "none was outstanding"),
])
def test_bad_replies_fail_the_client(sent: bytes | None, reply: bytes, words: str) -> None:
    client = echoing()
    if sent is not None:
        client.next_echo(sent)
    result = client.duologue_reply(reply, 1.0)
    assert isinstance(result, Failed) and words in result.reason
    assert client.exit_code == 1


def test_server_error_on_duologue_carries_reason() -> None:
    client = echoing()
    client.next_echo(b"x")
    result = client.duologue_reply(b"ERROR bad message", 1.0)
    assert isinstance(result, Failed) and result.server_reason == "bad message"


def test_payload_the_server_would_reject_is_refused_locally() -> None:
    client = echoing()
    for payload in (b"a\nb", b"\r", "\u2028".encode()):
        with pytest.raises(ValueError, match="line terminator"):
            client.next_echo(payload)
    assert client.outstanding == 0


def test_wrong_state_calls_raise() -> None:
    client = EchoClientCore(KEY, SID)
    with pytest.raises(CoreUsageError, match="next_echo"):
        client.next_echo(b"x")
    with pytest.raises(CoreUsageError, match="duologue_reply"):
        client.duologue_reply(b"ECHO x", 0.0)
    with pytest.raises(CoreUsageError, match="finish"):
        client.finish()
    client.fail("image lost")
    with pytest.raises(CoreUsageError):
        client.fail("again")


def test_connect_timeout() -> None:
    client = EchoClientCore(KEY, SID, timeout=5.0)
    assert client.tick(100.0) is None  # arms
    assert client.tick(104.99) is None
    result = client.tick(105.0)
    assert isinstance(result, Failed) and "CONNECT" in result.reason
    assert client.state is ClientState.FAILED and client.tick(200.0) is None


def test_echo_timeout_only_while_replies_are_awaited() -> None:
    client = echoing(timeout=5.0)
    assert client.tick(50.0) is None and client.tick(500.0) is None  # nothing outstanding
    client.next_echo(b"a", now=600.0)
    client.next_echo(b"b", now=601.0)
    assert client.duologue_reply(b"ECHO a", 603.0) == Echoed(b"a")  # progress re-arms: 608
    assert client.tick(607.99) is None
    result = client.tick(608.0)
    assert isinstance(result, Failed) and "echo reply" in result.reason


def test_echo_deadline_armed_by_tick_when_send_time_unknown() -> None:
    client = echoing(timeout=2.0)
    client.next_echo(b"a")
    assert client.tick(10.0) is None
    assert client.tick(11.9) is None
    assert isinstance(client.tick(12.0), Failed)


def test_against_server_core_end_to_end() -> None:
    server = DuologueServerCore(ServerConfig(max_clients=2, clients_base_port=9010), rng=random.Random(1))
    client = EchoClientCore(rng=random.Random(2))
    client.set_initial_session(-77)
    server.initial_image_available(1, -77, "127.0.0.1:51000", 65536, 0.0)
    actions = server.hello_received(1, client.hello(), 0.0)
    create = next(a for a in actions if isinstance(a, CreateDuologue))
    broadcast = next(a for a in actions if isinstance(a, Broadcast))
    opened = client.initial_reply(broadcast.data, 0.1)
    assert opened == OpenDuologue(create.data_port, create.control_port, create.session_id)
    server.duologue_image_available(create.session_id, 2, "127.0.0.1:51001", 65536, 0.2)
    for i in range(5):
        message = client.next_echo(random_payload(random.Random(i)), now=float(i))
        assert parse_echo(message) is not None
        (reply,) = answer(server, server.duologue_message(create.session_id, 2, message, float(i)), float(i))
        assert isinstance(reply, SendDuologue) and reply.session_id == create.session_id
        assert isinstance(client.duologue_reply(reply.data, float(i)), Echoed)
    assert client.echoes_ok == 5 and client.state is ClientState.ECHOING
