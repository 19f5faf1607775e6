"""AERON_PY_NO_TRICKS (docs/development.md, "CPython and Aeron internals"): read once when
the extension is imported, exposed as ``_aeron.TRICKS``; with it set, the sites that lean on
CPython or Aeron internals take their public-API fallbacks. The whole bindings suite runs a
second time with it set (.ci/sanitize); these tests pin down the switch itself, each in a
child process (the variable is read at import)."""
from __future__ import annotations

import os
import sys

import pytest

from processes import run_process

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


def child(code: str, value: str | None) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "AERON_PY_NO_TRICKS"}
    if value is not None:
        env["AERON_PY_NO_TRICKS"] = value
    result = run_process([sys.executable, "-c", code], timeout=45, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.splitlines()


@pytest.mark.parametrize(("value", "tricks"), [
    (None, True), ("", True), ("0", True), ("false", True), ("No", True), ("off", True),
    ("1", False), ("true", False), ("YES", False), ("on", False),
])
def test_the_variable_sets_tricks_once_at_import(value: str | None, tricks: bool) -> None:
    lines = child("from aeron_py import _aeron; import os; os.environ['AERON_PY_NO_TRICKS'] = 'x'; "
                  "print('TRICKS', _aeron.TRICKS)", value)
    assert lines == [f"TRICKS {tricks}"]


def test_an_unknown_value_fails_the_import_and_says_why() -> None:
    lines = child("""
try:
    import aeron_py
except ImportError as exc:
    print("REFUSED", exc.__cause__)
""", "maybe")
    assert lines and lines[0].startswith("REFUSED AERON_PY_NO_TRICKS=maybe: expected 1, true, yes or on"), lines


def test_without_tricks_the_fallbacks_serve_every_kind_of_poll_and_offer() -> None:
    lines = child("""
import aeron_py
from aeron_py import Aeron, MediaDriver, _aeron
print("TRICKS", _aeron.TRICKS)
print("ADOPTED", "offer" in vars(aeron_py.Publication), "poll" in vars(aeron_py.Subscription))
with MediaDriver(publication_linger_timeout_ns=0) as driver, Aeron(driver=driver) as aeron:
    print("RING", "conductor_queue_capacity" in driver.options)
    sub = aeron.add_subscription("aeron:ipc", 5)
    pub = aeron.add_publication("aeron:ipc", 5)
    idle = aeron_py.SleepingIdleStrategy(1_000_000)
    while not (pub.is_connected and sub.is_connected):
        idle.idle(0)
    positions = []
    for n in range(300):
        while (position := pub.offer(b"m%03d" % n)) < 0:
            idle.idle(0)
        positions.append(position)
    with pub.try_claim(8) as buffer:
        buffer[:] = b"claimed!"
    got, views = [], []
    def handler(data, header):
        got.append((bytes(data), header.position))
    def zero_copy(view, header):
        views.append(view)
        got.append((view.tobytes(), header.position))
    while len(got) < 150:
        idle.idle(sub.poll(handler, 7))
    while len(got) < 301:
        idle.idle(sub.poll(zero_copy, 7, zero_copy=True))
    print("IN ORDER", [g[0] for g in got] == [b"m%03d" % n for n in range(300)] + [b"claimed!"])
    print("POSITIONS", positions == [g[1] for g in got[:300]] and len(set(positions)) == 300)
    dead = 0
    for view in views:
        try:
            view.tobytes()
        except ValueError:
            dead += 1
    print("DEAD VIEWS", dead == len(views) > 100)
    print("EMPTY", sub.poll(handler, 10), sub.poll_batch(10))
""", "1")
    assert lines == ["TRICKS False", "ADOPTED False False", "RING False", "IN ORDER True", "POSITIONS True",
                     "DEAD VIEWS True", "EMPTY 0 []"], lines
