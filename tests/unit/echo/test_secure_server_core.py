"""DuologueServerCore in secure mode (docs/spec/echo2.md §5), driven with the real client objects.

The sans-I/O server core with ``ServerConfig(secure=ServerSecrets(...))`` talks to
``EchoClientCore(secure=SecureClientHello(...))`` through real libsodium primitives
(:mod:`aeron_py.crypto`): the Noise NK handshake, the duologue's two session ids and
keys, the answers to HELLO-KEY / plain HELLO / garbage / a wrong server key, and the
admission limits and resource accounting that still apply.  No Aeron, no I/O.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from aeron_py import crypto
from aeron_py.duologue.core.client import ClientState, EchoClientCore, Failed, OpenDuologue
from aeron_py.duologue.core.contract import (
    Action,
    Broadcast,
    CloseDuologue,
    CloseReason,
    CreateDuologue,
    Event,
    ServerConfig,
)
from aeron_py.duologue.core.protocol import format_hello
from aeron_py.duologue.core.secure_client import SecureClientHello, ServerKeyOffered
from aeron_py.duologue.core.secure_handshake import ServerSecrets
from aeron_py.duologue.core.secure_hello import b64url_encode
from aeron_py.duologue.core.server import DuologueServerCore

pytestmark = pytest.mark.timeout(30)

SID = -555798973
SID2 = 1234567
IP = "192.0.2.1"
TERM = 65536


@pytest.fixture
def server_keys() -> tuple[bytes, bytes]:
    return crypto.x25519_keypair()


def make_server(server_keys: tuple[bytes, bytes], **overrides: Any) -> DuologueServerCore:
    settings = {"max_clients": 4, "clients_base_port": 9010,
                "secure": ServerSecrets(server_keys, crypto), **overrides}
    return DuologueServerCore(ServerConfig(**settings), rng=random.Random(7))


def make_client(server_public: bytes | None, sid: int = SID) -> EchoClientCore:
    client = EchoClientCore(secure=SecureClientHello(server_public, crypto=crypto))
    client.set_initial_session(sid)
    return client


def of(actions: list[Action], cls: type) -> list[Any]:
    return [a for a in actions if isinstance(a, cls)]


def only_broadcast(actions: list[Action]) -> Broadcast:
    broadcasts = of(actions, Broadcast)
    assert len(broadcasts) == 1, actions
    broadcast: Broadcast = broadcasts[0]
    return broadcast


class Wire:
    """Plays the glue: one initial image per client, HELLOs into the server core."""

    def __init__(self, server: DuologueServerCore) -> None:
        self.server = server
        self.next_image = 1

    def image(self, sid: int = SID, ip: str = IP) -> int:
        image = self.next_image
        self.next_image += 1
        assert self.server.initial_image_available(image, sid, f"{ip}:5000", TERM, 0.0) == []
        return image

    def hello(self, data: bytes, sid: int = SID, ip: str = IP, image: int | None = None,
              now: float = 0.0) -> list[Action]:
        return self.server.hello_received(self.image(sid, ip) if image is None else image, data, now)


def connect(wire: Wire, client: EchoClientCore, sid: int = SID) -> tuple[CreateDuologue, Broadcast]:
    """One secure HELLO that the server admits; returns its CreateDuologue and CONNECT-SECURE."""
    actions = wire.hello(client.hello(), sid)
    created = of(actions, CreateDuologue)
    assert len(created) == 1, actions
    return created[0], only_broadcast(actions)


# ------------------------------------------------------------ the handshake


def test_full_secure_handshake_gives_both_sides_the_same_keys(server_keys: tuple[bytes, bytes]) -> None:
    server = make_server(server_keys)
    client = make_client(server_keys[0])
    actions = Wire(server).hello(client.hello())

    assert [type(a) for a in actions] == [Event, CreateDuologue, Broadcast, Event]
    create, broadcast = of(actions, CreateDuologue)[0], of(actions, Broadcast)[0]
    keys = create.keys
    assert keys is not None
    assert keys.server_session == create.session_id
    assert keys.client_session != create.session_id
    assert create.client_session == keys.client_session
    assert keys.client_send_key != keys.server_send_key and len(keys.client_send_key) == len(keys.server_send_key) == 32
    assert broadcast.duologue_session == create.session_id
    assert broadcast.data.startswith(f"{SID} CONNECT-SECURE ".encode())
    created = [e for e in of(actions, Event) if e.kind == "duologue_created"]
    assert len(created) == 1 and created[0].fields["secure"] is True
    assert created[0].fields["session_id"] == create.session_id

    opened = client.initial_reply(broadcast.data, 0.0)
    assert isinstance(opened, OpenDuologue)
    assert client.state is ClientState.ECHOING
    assert (opened.data_port, opened.control_port) == (create.data_port, create.control_port)
    assert opened.session_id == create.session_id
    assert opened.keys == keys  # source_key, server_key, both sessions and the handshake hash
    assert opened.publication_session == keys.client_session != opened.session_id


def test_other_sessions_connect_secure_is_ignored_by_the_client(server_keys: tuple[bytes, bytes]) -> None:
    wire = Wire(make_server(server_keys))
    _, broadcast = connect(wire, make_client(server_keys[0]))
    bystander = make_client(server_keys[0], SID2)
    assert not isinstance(bystander.initial_reply(broadcast.data, 0.0), (OpenDuologue, Failed))
    assert bystander.state is ClientState.AWAIT_CONNECT


# ------------------------------------------------------------ resources


@pytest.mark.parametrize("how", ["shutdown", "expiry", "create_failed"])
def test_secure_duologue_holds_two_sessions_and_frees_both(server_keys: tuple[bytes, bytes], how: str) -> None:
    server = make_server(server_keys, expiry=5.0)
    create, _ = connect(Wire(server), make_client(server_keys[0]))
    stats = server.stats
    assert (stats.duologues, stats.sessions_in_use, stats.ports_in_use, stats.source_keys) == (1, 2, 2, 1)

    if how == "shutdown":
        closed, reason = server.shutdown(1.0), CloseReason.SHUTDOWN
    elif how == "expiry":
        assert server.tick(4.9) == []
        closed, reason = server.tick(5.0), CloseReason.EXPIRED
    else:
        closed, reason = server.create_failed(create.session_id, 1.0), CloseReason.CREATE_FAILED
    assert CloseDuologue(create.session_id, reason) in closed
    stats = server.stats
    assert (stats.duologues, stats.sessions_in_use, stats.ports_in_use, stats.source_keys) == (0, 0, 0, 0)


def test_repeated_hello_secure_gets_the_same_connect_and_no_second_duologue(
        server_keys: tuple[bytes, bytes]) -> None:
    server = make_server(server_keys)
    wire = Wire(server)
    client = make_client(server_keys[0])
    image = wire.image()
    first = server.hello_received(image, client.hello(), 0.0)
    connect_bytes = only_broadcast(first).data

    again = server.hello_received(image, client.hello(), 1.0)
    assert of(again, CreateDuologue) == []
    assert only_broadcast(again) == Broadcast(connect_bytes, of(first, CreateDuologue)[0].session_id)
    stats = server.stats
    assert (stats.connects, stats.duologues, stats.sessions_in_use, stats.ports_in_use) == (1, 1, 2, 2)
    assert isinstance(client.initial_reply(only_broadcast(again).data, 1.0), OpenDuologue)


# ------------------------------------------------------------ the answers


@pytest.mark.parametrize("kind", ["plain", "hello_key", "garbage", "wrong_key"])
def test_non_secure_messages_get_their_answer_and_open_nothing(server_keys: tuple[bytes, bytes],
                                                              kind: str) -> None:
    server = make_server(server_keys)
    expected: dict[str, tuple[bytes, bytes, str | None]] = {
        "plain": (format_hello(0x611786D9), f"{SID} ERROR secure mode required".encode(),
                  "secure_mode_required"),
        "hello_key": (b"HELLO-KEY", f"{SID} SERVER-KEY {b64url_encode(server_keys[0])}".encode(), None),
        "garbage": (b"garbage", f"{SID} ERROR bad message".encode(), "malformed"),
        "wrong_key": (make_client(crypto.x25519_keypair()[0]).hello(), f"{SID} ERROR wrong server key".encode(),
                      "wrong_server_key"),
    }
    data, answer, cause = expected[kind]
    actions = Wire(server).hello(data)
    assert only_broadcast(actions) == Broadcast(answer)
    assert of(actions, CreateDuologue) == []
    stats = server.stats
    assert (stats.duologues, stats.connects, stats.sessions_in_use, stats.ports_in_use) == (0, 0, 0, 0)
    assert stats.hellos == 1
    assert dict(stats.rejects) == ({} if cause is None else {cause: 1})


# ------------------------------------------------------------ admission limits


def test_per_ip_limit_applies_after_the_handshake(server_keys: tuple[bytes, bytes]) -> None:
    server = make_server(server_keys, max_per_ip=1)
    wire = Wire(server)
    connect(wire, make_client(server_keys[0]))

    second = make_client(server_keys[0], SID2)
    actions = wire.hello(second.hello(), SID2)
    refusal = only_broadcast(actions)
    assert refusal == Broadcast(f"{SID2} ERROR too many connections for IP address".encode())
    assert of(actions, CreateDuologue) == []
    stats = server.stats
    assert (stats.duologues, stats.sessions_in_use, stats.ports_in_use) == (1, 2, 2)
    assert stats.rejects["max_per_ip"] == 1
    failed = second.initial_reply(refusal.data, 0.0)
    assert isinstance(failed, Failed) and failed.server_reason == "too many connections for IP address"
    # another address is still admitted
    actions = wire.hello(make_client(server_keys[0], 77).hello(), 77, ip="192.0.2.2")
    assert len(of(actions, CreateDuologue)) == 1 and server.stats.sessions_in_use == 4


def test_session_exhaustion_refuses_and_gives_the_ports_back(server_keys: tuple[bytes, bytes]) -> None:
    server = make_server(server_keys, session_min=1, session_max=3, expiry=5.0)  # ids 1 and 2
    wire = Wire(server)
    create, _ = connect(wire, make_client(server_keys[0]))
    assert create.keys is not None
    assert {create.keys.server_session, create.keys.client_session} == {1, 2}

    actions = wire.hello(make_client(server_keys[0], SID2).hello(), SID2)
    assert only_broadcast(actions) == Broadcast(f"{SID2} ERROR server full".encode())
    stats = server.stats
    assert (stats.duologues, stats.sessions_in_use, stats.ports_in_use) == (1, 2, 2)
    assert stats.rejects["no_session_ids"] == 1

    server.tick(5.0)  # the first expires: its two ids and ports come back and serve the next client
    assert len(of(wire.hello(make_client(server_keys[0], 99).hello(), 99, now=6.0), CreateDuologue)) == 1
    assert (server.stats.sessions_in_use, server.stats.ports_in_use) == (2, 2)


def test_one_free_session_id_is_not_enough_for_a_secure_duologue(server_keys: tuple[bytes, bytes]) -> None:
    server = make_server(server_keys, session_min=1, session_max=2)  # a single id
    actions = Wire(server).hello(make_client(server_keys[0]).hello())
    assert only_broadcast(actions) == Broadcast(f"{SID} ERROR server full".encode())
    stats = server.stats  # the one id taken before running out is given back, and both ports
    assert (stats.duologues, stats.sessions_in_use, stats.ports_in_use, stats.source_keys) == (0, 0, 0, 0)


# ------------------------------------------------------------ the client core


def test_client_trusts_offered_key_then_connects(server_keys: tuple[bytes, bytes]) -> None:
    server = make_server(server_keys)
    wire = Wire(server)
    client = make_client(None)
    assert client.hello() == b"HELLO-KEY"

    image = wire.image()
    offered = client.initial_reply(only_broadcast(server.hello_received(image, client.hello(), 0.0)).data, 0.0)
    assert offered == ServerKeyOffered(server_keys[0])
    assert client.state is ClientState.AWAIT_CONNECT
    assert client.secure is not None
    client.secure.trust(offered.public_key)
    hello = client.hello()
    assert hello.startswith(b"HELLO-SECURE ") and client.hello() == hello

    actions = server.hello_received(image, hello, 0.5)
    create = of(actions, CreateDuologue)[0]
    opened = client.initial_reply(only_broadcast(actions).data, 0.5)
    assert isinstance(opened, OpenDuologue) and opened.keys == create.keys


def test_client_fails_on_wrong_server_key(server_keys: tuple[bytes, bytes]) -> None:
    server = make_server(server_keys)
    client = make_client(crypto.x25519_keypair()[0])  # not this server's key
    refusal = only_broadcast(Wire(server).hello(client.hello()))
    assert refusal.data == f"{SID} ERROR wrong server key".encode()
    result = client.initial_reply(refusal.data, 0.0)
    assert isinstance(result, Failed)
    assert client.state is ClientState.FAILED and client.failure == result
    assert result.server_reason == "wrong server key"
    assert server.duologue_count == 0


# ------------------------------------------------------------ snapshots


def test_duologue_info_marks_secure_duologues(server_keys: tuple[bytes, bytes]) -> None:
    server = make_server(server_keys)
    create, _ = connect(Wire(server), make_client(server_keys[0]))
    infos = server.duologue_infos()
    assert len(infos) == 1 and infos[0].secure is True and infos[0].session_id == create.session_id
    assert server.duologue_info(create.session_id) == infos[0]

    plain = DuologueServerCore(ServerConfig(max_clients=4, clients_base_port=9010), rng=random.Random(7))
    plain_create = of(Wire(plain).hello(format_hello(0x611786D9)), CreateDuologue)[0]
    assert plain_create.keys is None and plain_create.client_session == plain_create.session_id
    assert [info.secure for info in plain.duologue_infos()] == [False]
    assert plain.stats.sessions_in_use == 1
