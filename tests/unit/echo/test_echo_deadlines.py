"""Deadlines: due keys come out in order; rescheduled and cancelled keys never surface stale."""
from __future__ import annotations

import random

from aeron_py.duologue.core.deadlines import Deadlines
from aeron_py.duologue.core.contract import ServerConfig
from aeron_py.echo.core.echo_rule import answer
from aeron_py.duologue.core.server import DuologueServerCore


def test_pop_due_returns_only_what_is_due_earliest_first() -> None:
    d: Deadlines[int] = Deadlines()
    for key, at in ((1, 3.0), (2, 1.0), (3, 2.0), (4, 10.0)):
        d.schedule(key, at)
    assert d.pop_due(0.5) == []
    assert d.pop_due(2.0) == [2, 3]
    assert d.pop_due(3.0) == [1] and len(d) == 1 and d.due(4) == 10.0


def test_rescheduled_and_cancelled_keys_leave_stale_entries_that_never_surface() -> None:
    d: Deadlines[int] = Deadlines()
    d.schedule(1, 1.0)
    d.schedule(1, 5.0)  # later: the entry at 1.0 is stale
    d.schedule(2, 2.0)
    d.cancel(2)
    d.cancel(99)  # unknown: no-op
    assert d.pop_due(4.0) == [] and 2 not in d and d.heap_size == 1
    d.schedule(2, 4.5)  # a reused key after a cancel
    assert d.pop_due(6.0) == [2, 1] and len(d) == 0 and d.heap_size == 0


def test_matches_a_plain_dict_model_under_random_operations() -> None:
    rng = random.Random(7)
    d: Deadlines[int] = Deadlines()
    model: dict[int, float] = {}
    now = 0.0
    for _ in range(5000):
        key = rng.randrange(50)
        op = rng.random()
        if op < 0.5:
            at = now + rng.uniform(0, 5)
            d.schedule(key, at)
            model[key] = at
        elif op < 0.7:
            d.cancel(key)
            model.pop(key, None)
        else:
            now += rng.uniform(0, 1)
            expected = sorted((at, k) for k, at in model.items() if at <= now)
            got = d.pop_due(now)
            assert sorted(got) == sorted(k for _, k in expected)
            assert [model[k] for k in got] == sorted(model[k] for k in got)  # earliest first
            for k in got:
                del model[k]
        assert len(d) == len(model)


def test_idle_deadline_follows_activity() -> None:
    core = DuologueServerCore(ServerConfig(max_clients=2, clients_base_port=9010, idle_timeout=1.0))
    core.initial_image_available(1, -5, "127.0.0.2:4000", 65536, 0.0)
    created = core.hello_received(1, b"HELLO ABC", 0.0)
    session = next(a.session_id for a in created if type(a).__name__ == "CreateDuologue")
    core.duologue_image_available(session, 2, "127.0.0.2:4001", 65536, 0.0)
    assert answer(core, core.duologue_message(session, 2, b"ECHO x", 0.8), 0.8)
    assert core.tick(1.0) == [] and core.duologue_count == 1  # active at 0.8: idle from 1.8
    assert core.tick(1.7) == [] and core.duologue_count == 1
    closed = core.tick(1.8)
    assert core.duologue_count == 0 and any(getattr(a, "reason", None) == "idle" for a in closed)
