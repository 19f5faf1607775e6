"""The core's large-term budget (aeron_py/echo/core/large_terms.py): stock Aeron clients
(16 MiB terms) are served by default, within a budget per IP and in total."""

from __future__ import annotations

import random
from typing import Any

import pytest

from aeron_py.duologue.core.contract import Broadcast, CreateDuologue, RejectImage, ServerConfig
from aeron_py.duologue.core.protocol import format_hello
from aeron_py.duologue.core.server import DuologueServerCore

pytestmark = pytest.mark.timeout(60)

STOCK_TERM = 16 * 1024 * 1024
SMALL_TERM = 64 * 1024
KEY = 0x1234


class Core:
    """A core with 8 client slots, driven the way the glue drives it."""

    def __init__(self, **overrides: Any) -> None:
        config = ServerConfig(**{"max_clients": 8, "clients_base_port": 9100, "max_per_ip": 8, **overrides})
        self.core = DuologueServerCore(config, rng=random.Random(3))
        self.next_image = 1

    def initial(self, ip: str, term: int, sid: int = 77) -> tuple[int, list[Any]]:
        image, self.next_image = self.next_image, self.next_image + 1
        return image, self.core.initial_image_available(image, sid, f"{ip}:40000", term, 0.0)

    def hello(self, image: int) -> list[Any]:
        return self.core.hello_received(image, format_hello(KEY), 0.0)

    def join(self, session: int, ip: str, term: int) -> tuple[int, list[Any]]:
        image, self.next_image = self.next_image, self.next_image + 1
        return image, self.core.duologue_image_available(session, image, f"{ip}:40001", term, 0.0)

    @property
    def large(self) -> int:
        return self.core.stats.large_term_images


def rejects(actions: list[Any]) -> list[str]:
    return [a.reason for a in actions if isinstance(a, RejectImage)]


def test_a_stock_client_is_served_by_default_and_gives_its_places_back() -> None:
    c = Core()
    initial, actions = c.initial("192.0.2.1", STOCK_TERM)
    assert rejects(actions) == []
    (created,) = [a for a in c.hello(initial) if isinstance(a, CreateDuologue)]
    duologue_image, joined = c.join(created.session_id, "192.0.2.1", STOCK_TERM)
    assert rejects(joined) == [] and c.large == 2
    c.core.initial_image_unavailable(initial, 1.0)  # the client closes its initial publication
    assert c.large == 1
    c.core.duologue_image_unavailable(created.session_id, duologue_image, 2.0)
    assert c.large == 0 and c.core.duologue_count == 0


def test_per_ip_budget_refuses_the_third_large_image_and_answers_its_hello() -> None:
    c = Core(max_large_term_images_per_ip=2)
    c.initial("192.0.2.1", STOCK_TERM)
    c.initial("192.0.2.1", STOCK_TERM)
    third, actions = c.initial("192.0.2.1", STOCK_TERM, sid=99)
    assert rejects(actions) == ["large_terms_per_ip"]
    assert Broadcast(b"99 ERROR server full") in actions
    assert rejects(c.initial("192.0.2.1", SMALL_TERM)[1]) == []  # small terms need no place
    assert rejects(c.initial("192.0.2.2", STOCK_TERM)[1]) == []  # another IP has its own
    c.core.initial_image_unavailable(third, 1.0)  # a refused image held no place
    assert c.large == 3


def test_total_budget_and_the_term_cap() -> None:
    c = Core(max_large_term_images=2, max_large_term_images_per_ip=1)
    assert rejects(c.initial("192.0.2.1", STOCK_TERM)[1]) == []
    assert rejects(c.initial("192.0.2.2", STOCK_TERM)[1]) == []
    assert rejects(c.initial("192.0.2.3", STOCK_TERM)[1]) == ["large_terms_total"]
    assert rejects(c.initial("192.0.2.4", 2 * STOCK_TERM)[1]) == ["term_length"]


def test_no_large_term_images_at_all() -> None:
    c = Core(max_large_term_images=0)
    assert rejects(c.initial("192.0.2.1", 2 * SMALL_TERM)[1]) == ["large_terms_total"]
    assert rejects(c.initial("192.0.2.1", SMALL_TERM)[1]) == []


def test_a_closed_duologue_gives_back_its_images_places() -> None:
    c = Core(expiry=5.0, idle_timeout=5.0)
    initial, _ = c.initial("192.0.2.1", SMALL_TERM)
    (created,) = [a for a in c.hello(initial) if isinstance(a, CreateDuologue)]
    c.join(created.session_id, "192.0.2.1", STOCK_TERM)
    assert c.large == 1
    c.core.tick(100.0)  # idle: closed; its subscription (and image) go with it
    assert c.core.duologue_count == 0 and c.large == 0


def test_the_default_budget_follows_the_duologue_limits() -> None:
    assert ServerConfig(max_clients=64, clients_base_port=9000).large_term_limits() == (129, 7)
    assert ServerConfig(max_clients=4, clients_base_port=9000, max_per_ip=1).large_term_limits() == (9, 3)
    assert ServerConfig(max_clients=4, clients_base_port=9000, max_large_term_images=0,
                        max_large_term_images_per_ip=5).large_term_limits() == (0, 5)


def test_stock_clients_that_keep_their_initial_images_are_served_up_to_max_per_ip() -> None:
    """Three stock clients from one address, each keeping its initial publication (as the
    reference client does): all served; the fourth's HELLO is answered as the reference
    answers it, not dropped."""
    c = Core(max_per_ip=3)
    for n in range(3):
        initial, actions = c.initial("192.0.2.1", STOCK_TERM, sid=70 + n)
        assert rejects(actions) == []
        (created,) = [a for a in c.hello(initial) if isinstance(a, CreateDuologue)]
        assert rejects(c.join(created.session_id, "192.0.2.1", STOCK_TERM)[1]) == []
    assert c.large == 6
    fourth, actions = c.initial("192.0.2.1", STOCK_TERM, sid=99)
    assert rejects(actions) == []
    assert Broadcast(b"99 ERROR too many connections for IP address") in c.hello(fourth)


@pytest.mark.parametrize("name", ["max_large_term_images", "max_large_term_images_per_ip"])
def test_negative_budgets_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match=name):
        ServerConfig(max_clients=1, clients_base_port=9000, **{name: -1})
    with pytest.raises(ValueError, match=name):
        ServerConfig(max_clients=1, clients_base_port=9000, **{name: True})
