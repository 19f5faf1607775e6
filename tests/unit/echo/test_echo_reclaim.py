"""The reclaim rule (aeron_py.duologue.core.reclaim): on a full server, a HELLO from a source in
good standing takes the place of the oldest duologue nobody joined for ``reclaim_after``;
sources whose duologues are reclaimed or expire unjoined lose their standing.  And the
flood rule (aeron_py.duologue.core.hello_admission): an initial image refused
``flood_hellos`` times gets its source penalised."""

from __future__ import annotations

import itertools
import random
from typing import Any

import pytest

from aeron_py.duologue.core.contract import (Action, BlockSource, CloseDuologue, CloseReason, CreateDuologue, Event,
                                        RejectImage, ServerConfig)
from aeron_py.duologue.core.protocol import Rejected, format_hello, parse_initial_reply
from aeron_py.duologue.core.reclaim import MAX_SOURCES_OUT_OF_STANDING, Reclaim
from aeron_py.duologue.core.server import DuologueServerCore

pytestmark = pytest.mark.timeout(60)

BASE = 9200


class Clients:
    """HELLOs from fresh initial images, one per call, like many clients would send."""

    def __init__(self, **overrides: Any) -> None:
        settings = {"max_clients": 2, "max_per_ip": 2, "clients_base_port": BASE, **overrides}
        self.core = DuologueServerCore(ServerConfig(**settings), rng=random.Random(3))
        self._ids = itertools.count(1)

    def hello(self, ip: str, now: float) -> list[Action]:
        image, sid = next(self._ids), next(self._ids)
        self.core.initial_image_available(image, sid, f"{ip}:40000", 65536, now)
        return self.core.hello_received(image, format_hello(image), now)

    def join(self, created: CreateDuologue, now: float) -> None:
        self.core.duologue_image_available(created.session_id, next(self._ids), f"{created.owner_ip}:40001",
                                           65536, now)


def created(actions: list[Action]) -> CreateDuologue | None:
    found = [a for a in actions if isinstance(a, CreateDuologue)]
    return found[0] if found else None


def closed(actions: list[Action]) -> list[CloseDuologue]:
    return [a for a in actions if isinstance(a, CloseDuologue)]


def refused(actions: list[Action]) -> str | None:
    """The wire reason of an ERROR answer among ``actions`` (None: no ERROR)."""
    for event in (a for a in actions if isinstance(a, Event) and a.kind == "reject"):
        return str(event.fields["reason"])
    return None


def test_a_full_server_gives_the_oldest_unjoined_place_to_a_newcomer_once_it_is_old_enough() -> None:
    c = Clients()
    first = created(c.hello("192.0.2.1", 0.0))
    second = created(c.hello("192.0.2.2", 0.5))
    assert first is not None and second is not None
    assert refused(c.hello("192.0.2.9", 1.9)) == "server full"  # nobody unjoined for 2 s yet
    actions = c.hello("192.0.2.9", 2.0)
    assert closed(actions) == [CloseDuologue(first.session_id, CloseReason.RECLAIMED)]
    newcomer = created(actions)
    assert newcomer is not None and newcomer.owner_ip == "192.0.2.9"
    # the close comes first: the glue frees the ports before it creates the new channels
    assert actions.index(closed(actions)[0]) < actions.index(newcomer)
    stats = c.core.stats
    assert stats.duologues == 2 and stats.closes == {"reclaimed": 1} and stats.sources_out_of_standing == 1


def test_a_joined_duologue_is_never_reclaimed() -> None:
    c = Clients()
    for ip in ("192.0.2.1", "192.0.2.2"):
        d = created(c.hello(ip, 0.0))
        assert d is not None
        c.join(d, 0.1)
    assert refused(c.hello("192.0.2.9", 30.0)) == "server full"
    assert c.core.stats.duologues == 2 and c.core.stats.closes == {}


def test_a_source_whose_duologue_was_reclaimed_cannot_reclaim_until_its_window_ends() -> None:
    c = Clients(standing_window=60.0)
    assert created(c.hello("192.0.2.1", 0.0)) is not None
    assert created(c.hello("192.0.2.2", 0.0)) is not None
    assert created(c.hello("192.0.2.3", 2.0)) is not None  # reclaims 192.0.2.1's place
    assert refused(c.hello("192.0.2.1", 4.0)) == "server full"  # out of standing
    assert created(c.hello("192.0.2.4", 4.0)) is not None  # others still may (reclaims .2's)
    assert refused(c.hello("192.0.2.1", 61.9)) == "server full"
    assert created(c.hello("192.0.2.1", 62.0)) is not None  # back in standing


def test_an_unjoined_expiry_costs_the_source_its_standing_but_not_a_free_place() -> None:
    c = Clients(expiry=10.0)
    assert created(c.hello("192.0.2.1", 0.0)) is not None
    assert closed(c.core.tick(10.0))  # expired unjoined
    assert c.core.stats.sources_out_of_standing == 1
    assert created(c.hello("192.0.2.1", 11.0)) is not None  # a free place is still its to take
    assert created(c.hello("192.0.2.2", 11.0)) is not None
    assert refused(c.hello("192.0.2.1", 14.0)) == "server full"  # but not another's


def test_a_source_at_its_per_ip_limit_is_refused_without_reclaiming() -> None:
    c = Clients(max_clients=2, max_per_ip=1)
    assert created(c.hello("192.0.2.1", 0.0)) is not None
    assert created(c.hello("192.0.2.2", 0.0)) is not None
    actions = c.hello("192.0.2.1", 5.0)
    assert refused(actions) == "server full" and closed(actions) == []


def test_a_source_that_holds_a_place_does_not_reclaim_another() -> None:
    c = Clients(max_clients=2, max_per_ip=2)
    assert created(c.hello("192.0.2.1", 0.0)) is not None
    assert created(c.hello("192.0.2.2", 0.0)) is not None
    assert created(c.hello("192.0.2.3", 2.0)) is not None  # reclaims .1's place
    actions = c.hello("192.0.2.3", 4.0)  # .2's place is old enough, but .3 holds one
    assert refused(actions) == "server full" and closed(actions) == []


def test_reclaim_after_none_keeps_the_reference_behaviour() -> None:
    c = Clients(reclaim_after=None)
    assert created(c.hello("192.0.2.1", 0.0)) is not None
    assert created(c.hello("192.0.2.2", 0.0)) is not None
    assert refused(c.hello("192.0.2.9", 9.9)) == "server full"


def test_a_flood_loses_its_standing_and_a_legitimate_client_gets_a_place() -> None:
    """200 sources each sending a HELLO every 0.2 s and never joining, on 64 places: each
    source can hold a place for ``reclaim_after`` (2 s) before losing its standing, so
    after about 200 x 2 / 64 = 6.25 s none can reclaim, and a legitimate client's HELLO
    (once a second, like a client retrying) gets a place; the next ones too."""
    c = Clients(max_clients=64, max_per_ip=3, expiry=10.0)
    flood = [f"198.51.100.{i}" for i in range(1, 201)]
    served: list[float] = []
    for step in range(2000):  # 20 s in steps of 10 ms
        now = step / 100
        for ip in flood[step % 20::20]:  # 10 of the 200 sources each step
            c.hello(ip, now)
        c.core.tick(now)
        if step % 100 == 50:
            legit = created(c.hello(f"203.0.113.{len(served) + 1}", now))
            if legit is not None:
                c.join(legit, now + 0.01)
                served.append(now)
    assert served and served[0] <= 8.0, served
    assert served == [t + 0.5 for t in range(int(served[0]), 20)]  # every later one at once
    assert c.core.stats.closes["reclaimed"] <= len(flood) + len(served)


def test_the_table_of_sources_out_of_standing_is_bounded() -> None:
    c = Clients(max_clients=1)
    reclaim = Reclaim(c.core.config, c.core._duologues, lambda d, reason, now: [])  # noqa: SLF001
    for i in range(MAX_SOURCES_OUT_OF_STANDING + 10):
        reclaim.lose_standing(f"10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255}", 1.0)
    assert reclaim.sources_out_of_standing == MAX_SOURCES_OUT_OF_STANDING
    assert reclaim.in_good_standing("10.0.0.0", 1.0)  # the oldest made way
    assert not reclaim.in_good_standing("10.1.0.9", 1.0)
    reclaim.lose_standing("10.9.9.9", 100.0)  # entries past their window are dropped
    assert reclaim.sources_out_of_standing == 1


@pytest.mark.parametrize(("field", "value"), [("reclaim_after", 0.0), ("reclaim_after", -1.0),
                                              ("standing_window", -1.0), ("flood_hellos", 0), ("flood_hellos", 2.5),
                                              ("flood_penalty", 0.0)])
def test_bad_reclaim_settings_are_refused(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        ServerConfig(max_clients=1, clients_base_port=BASE, **{field: value})


def test_the_refusal_on_the_wire_is_server_full() -> None:
    c = Clients(max_clients=1, reclaim_after=None)
    assert created(c.hello("192.0.2.1", 0.0)) is not None
    answer = [a for a in c.hello("192.0.2.2", 1.0) if not isinstance(a, Event)]
    reply = parse_initial_reply(answer[0].data, 4)  # type: ignore[union-attr]
    assert isinstance(reply, Rejected) and reply.reason == "server full"


def flood_image(c: Clients, ip: str, now: float) -> tuple[int, list[list[Action]]]:
    """One initial image of ``ip`` sending HELLOs with new keys every 10 ms (a flood)."""
    image, sid = next(c._ids), next(c._ids)  # noqa: SLF001
    c.core.initial_image_available(image, sid, f"{ip}:40000", 65536, now)
    return image, [c.core.hello_received(image, format_hello(k), now + k / 100) for k in range(1, 31)]


def test_an_image_refused_flood_hellos_times_gets_its_source_blocked() -> None:
    c = Clients(max_clients=2, max_per_ip=2, flood_hellos=20, flood_penalty=60.0)
    image, answers = flood_image(c, "192.0.2.66", 0.0)
    created_count = sum(1 for a in answers if created(a) is not None)
    assert created_count == 2  # its per-IP limit; then 20 refusals
    flagged = [i for i, a in enumerate(answers) if any(isinstance(x, BlockSource) for x in a)]
    assert flagged == [created_count + 19]
    penalty = answers[flagged[0]]
    assert BlockSource("192.0.2.66", 60.0) in penalty and RejectImage(image, None, "flood") in penalty
    assert c.core.stats.floods == 1
    # refused for the penalty (another image of it too), then admitted again
    assert refused(c.hello("192.0.2.66", 1.0)) == "too many connections for IP address"
    assert c.core.stats.rejects["flood_penalty"] == 30 - 22 + 1  # the flood's later HELLOs and this one
    c.core.tick(30.0)  # its unjoined duologues expire
    assert refused(c.hello("192.0.2.66", 59.0)) == "too many connections for IP address"
    assert created(c.hello("192.0.2.66", 61.0)) is not None


def test_a_client_that_stops_at_its_refusal_is_never_penalised() -> None:
    c = Clients(max_clients=1, reclaim_after=None)
    assert created(c.hello("192.0.2.1", 0.0)) is not None
    image, sid = 900, 901
    c.core.initial_image_available(image, sid, "192.0.2.2:40000", 65536, 0.0)
    for t in range(19):  # a HELLO a second, as if every refusal were lost
        actions = c.core.hello_received(image, format_hello(7), float(t))
        assert not any(isinstance(a, BlockSource) for a in actions)
    assert c.core.stats.floods == 0


def test_flood_hellos_none_never_penalises() -> None:
    c = Clients(max_clients=1, flood_hellos=None)
    _, answers = flood_image(c, "192.0.2.66", 0.0)
    assert not any(isinstance(a, BlockSource) for answer in answers for a in answer)
