"""Same-host clients over IPC in the sans-I/O core: a limit of their own, streams instead of
ports, their replies on the IPC all-clients publication, and no network-only rule."""
from __future__ import annotations

import random
from typing import Any

import pytest

from aeron_py import crypto
from aeron_py.duologue.core.contract import Broadcast, CloseReason, CreateDuologue, Event, RejectImage, ServerConfig
from aeron_py.duologue.core.protocol import (
    IPC_SOURCE,
    IPC_SOURCE_IDENTITY,
    IPC_STREAM_BASE,
    Connect,
    format_hello,
    parse_initial_reply,
    session_from_crypt,
)
from aeron_py.duologue.core.secure_handshake import ServerSecrets
from aeron_py.duologue.core.server import DuologueServerCore

pytestmark = pytest.mark.timeout(60)

TERM = 65536
KEY = 0x1234ABCD


def make(**overrides: Any) -> DuologueServerCore:
    config = {"max_clients": 2, "clients_base_port": 9010, "max_ipc_clients": 3, "max_per_ip": 1, **overrides}
    return DuologueServerCore(ServerConfig(**config), rng=random.Random(3))


def hello(core: DuologueServerCore, image: int, identity: str = IPC_SOURCE_IDENTITY, now: float = 0.0,
          key: int = KEY) -> list[Any]:
    assert core.initial_image_available(image, 1000 + image, identity, TERM, now) == []
    return core.hello_received(image, format_hello(key), now)


def broadcasts(actions: list[Any]) -> list[Broadcast]:
    return [a for a in actions if isinstance(a, Broadcast)]


def test_ipc_hello_opens_a_duologue_on_ipc_streams() -> None:
    core = make()
    actions = hello(core, 1)
    create = next(a for a in actions if isinstance(a, CreateDuologue))
    assert create.ipc and create.owner_ip == IPC_SOURCE
    assert {create.data_port, create.control_port} <= set(range(IPC_STREAM_BASE, IPC_STREAM_BASE + 6))
    (connect,) = broadcasts(actions)
    assert connect.ipc and connect.duologue_session == create.session_id
    reply = parse_initial_reply(connect.data, 1001)
    assert isinstance(reply, Connect) and session_from_crypt(KEY, reply.crypt) == create.session_id
    assert (reply.data_port, reply.control_port) == (create.data_port, create.control_port)
    stats = core.stats
    assert stats.ipc_duologues == 1 and stats.duologues == 1 and stats.ports_in_use == 0
    info = core.duologue_info(create.session_id)
    assert info is not None and info.ipc and info.owner_ip == IPC_SOURCE


def test_ipc_limit_is_its_own_and_network_limit_unchanged() -> None:
    core = make()
    for image in (1, 2, 3):  # max_per_ip 1 does not apply to IPC: max_ipc_clients does
        assert any(isinstance(a, CreateDuologue) for a in hello(core, image))
    refused = broadcasts(hello(core, 4))
    assert [b.ipc for b in refused] == [True] and b"server full" in refused[0].data
    assert core.stats.rejects["max_ipc_clients"] == 1
    for image, ip in ((5, "127.0.0.2"), (6, "127.0.0.3")):  # the network's two places are all free
        created = [a for a in hello(core, image, f"{ip}:4000") if isinstance(a, CreateDuologue)]
        assert created and not created[0].ipc and 9010 <= created[0].data_port < 9014
    network_refusal = broadcasts(hello(core, 7, "127.0.0.4:4000"))
    assert not network_refusal[0].ipc and b"server full" in network_refusal[0].data


def test_closing_an_ipc_duologue_gives_its_streams_back() -> None:
    core = make(max_ipc_clients=1)
    create = next(a for a in hello(core, 1) if isinstance(a, CreateDuologue))
    actions = core.close(create.session_id, 1.0)
    assert any(isinstance(a, Event) and a.kind == "duologue_closed" for a in actions)
    assert core.stats.ipc_duologues == 0
    again = next(a for a in hello(core, 2, now=2.0, key=KEY + 1) if isinstance(a, CreateDuologue))
    assert {again.data_port, again.control_port} == {create.data_port, create.control_port}


def test_no_ipc_clients_configured_refuses_an_ipc_hello() -> None:
    core = make(max_ipc_clients=0)
    refusal = broadcasts(hello(core, 1))
    assert refusal[0].ipc and b"server full" in refusal[0].data
    assert core.stats.rejects["max_ipc_clients"] == 1


def test_ipc_flood_rejects_the_image_but_penalises_nobody() -> None:
    core = make(max_ipc_clients=1, flood_hellos=3)
    hello(core, 1)
    assert core.initial_image_available(2, 2002, IPC_SOURCE_IDENTITY, TERM, 0.0) == []
    actions: list[Any] = []
    for i in range(5):  # refused server full each time (one place, taken)
        actions += core.hello_received(2, format_hello(KEY + i + 1), 0.01 * i)
    assert not any(isinstance(a, RejectImage) for a in actions)  # no flood rule on the shared source
    assert core.stats.floods == 0
    d = core.duologue_infos()[0]
    core.close(d.session_id, 1.0)
    assert any(isinstance(a, CreateDuologue) for a in hello(core, 3, now=1.5, key=KEY + 9))


def test_reclaim_never_takes_an_ipc_place_for_a_network_hello() -> None:
    core = make(max_clients=1, reclaim_after=1.0)
    hello(core, 1)  # an unjoined IPC duologue
    hello(core, 2, "127.0.0.2:4000")  # the one network place, unjoined
    actions = hello(core, 3, "127.0.0.3:4000", now=5.0)
    closed = [a for a in actions if getattr(a, "reason", None) is CloseReason.RECLAIMED]
    assert len(closed) == 1 and core.duologue_info(closed[0].session_id) is None
    assert core.stats.ipc_duologues == 1


def test_an_unjoined_ipc_duologue_expires() -> None:
    core = make(expiry=2.0)
    create = next(a for a in hello(core, 1) if isinstance(a, CreateDuologue))
    closed = core.tick(3.0)
    assert any(getattr(a, "reason", None) is CloseReason.EXPIRED for a in closed)
    assert core.duologue_info(create.session_id) is None


def test_secure_mode_refuses_ipc_clients_with_a_reason() -> None:
    with pytest.raises(ValueError, match="max_ipc_clients=0 with secure"):
        ServerConfig(max_clients=1, clients_base_port=9010, max_ipc_clients=1, secure=ServerSecrets(crypto.x25519_keypair(), crypto))
    with pytest.raises(ValueError, match="max_ipc_clients"):
        ServerConfig(max_clients=1, clients_base_port=9010, max_ipc_clients=-1)
