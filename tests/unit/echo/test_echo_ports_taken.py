"""DuologueServerCore.ports_taken: a duologue whose ports the driver still binds moves to two
other ports while its CONNECT is held back (plain mode), and only then."""

from __future__ import annotations

import random

import pytest

from aeron_py.duologue.core.contract import Broadcast, CreateDuologue, ServerConfig
from aeron_py.duologue.core.protocol import Connect, format_hello, parse_initial_reply, session_from_crypt
from aeron_py.duologue.core.server import MAX_MOVES, DuologueServerCore

pytestmark = pytest.mark.timeout(60)

KEY = 0x5EED


def opened(core: DuologueServerCore) -> CreateDuologue:
    core.initial_image_available(1, 42, "192.0.2.1:40000", 65536, 0.0)
    (created,) = [a for a in core.hello_received(1, format_hello(KEY), 0.0) if isinstance(a, CreateDuologue)]
    return created


def config(clients: int) -> ServerConfig:
    return ServerConfig(max_clients=clients, clients_base_port=9100)


def test_a_plain_duologue_moves_to_other_ports_with_a_new_connect() -> None:
    core = DuologueServerCore(config(4), rng=random.Random(1))
    first = opened(core)
    busy = {first.data_port, first.control_port}  # the glue's fact: ports found bound
    created, connect = core.ports_taken(first.session_id, 0.1, busy)
    assert isinstance(created, CreateDuologue) and isinstance(connect, Broadcast)
    assert created.session_id == first.session_id and created.owner_ip == "192.0.2.1"
    assert {created.data_port, created.control_port}.isdisjoint({first.data_port, first.control_port})
    reply = parse_initial_reply(connect.data, 42)
    assert isinstance(reply, Connect) and connect.duologue_session == first.session_id
    assert (reply.data_port, reply.control_port) == (created.data_port, created.control_port)
    assert session_from_crypt(KEY, reply.crypt) == first.session_id
    assert core.stats.ports_in_use == 2  # the old pair went back
    info = core.duologue_info(first.session_id)
    assert info is not None and (info.data_port, info.control_port) == (created.data_port, created.control_port)


def test_no_move_once_joined_after_max_moves_or_for_an_unknown_duologue() -> None:
    core = DuologueServerCore(config(8), rng=random.Random(2))
    first = opened(core)
    for _ in range(MAX_MOVES):
        assert core.ports_taken(first.session_id, 0.1)
    assert core.ports_taken(first.session_id, 0.2) == []
    assert core.ports_taken(12345, 0.2) == []
    second = DuologueServerCore(config(4), rng=random.Random(3))
    d = opened(second)
    second.duologue_image_available(d.session_id, 7, "192.0.2.1:40001", 65536, 0.5)  # the client joined
    assert second.ports_taken(d.session_id, 0.6) == []


def test_no_move_without_other_free_ports() -> None:
    core = DuologueServerCore(config(1), rng=random.Random(4))
    first = opened(core)
    busy = {first.data_port, first.control_port}
    assert core.ports_taken(first.session_id, 0.1, busy) == []  # only its own pair could come back
    assert core.stats.ports_in_use == 2
