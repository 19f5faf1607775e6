"""The hot calls (poll, offer, try_claim, commit, idle, ...) are raw fast-call methods of the
extension's classes. Each public class holds its own descriptor of them, so CPython
specialises ``sub.poll(...)`` for it: a descriptor inherited from the pybind11 base fails
the interpreter's exact-type check on every call (cpp/binding/fastcall.hpp). These tests
pin that down, and that the copies behave as the originals: the same results, the same
refusals of a wrong ``self``, and a subclass's own method left alone."""
from __future__ import annotations

import pytest

import aeron_py
from aeron_py import _aeron
from aeron_py.idle import BackoffIdleStrategy, BusySpinIdleStrategy, NoOpIdleStrategy
from aeron_py.poll_set import PollSet
from aeron_py.publication import Claim, ExclusivePublication, Publication
from aeron_py.subscription import Image, Subscription
from conftest import wait_until

pytestmark = [pytest.mark.timeout(30), pytest.mark.integration]

FAST = {
    Subscription: ("poll", "controlled_poll", "poll_fragments", "poll_batch"),
    Image: ("poll", "controlled_poll", "poll_batch"),
    Publication: ("offer", "offer_batch", "try_claim", "offerv", "append_padding"),
    ExclusivePublication: ("offer", "offer_batch", "try_claim", "offerv", "append_padding"),
    Claim: ("commit", "abort"),
    PollSet: ("poll",),
    BackoffIdleStrategy: ("idle",),
    BusySpinIdleStrategy: ("idle",),
    NoOpIdleStrategy: ("idle",),
}


@pytest.mark.tricks  # the adoption (fastcall.cpp), off under AERON_PY_NO_TRICKS
@pytest.mark.parametrize("cls", list(FAST), ids=lambda c: c.__name__)
def test_public_classes_own_their_fast_methods(cls: type) -> None:
    for name in FAST[cls]:
        descriptor = cls.__dict__.get(name)
        assert descriptor is not None, f"{cls.__name__}.{name} is inherited, not the class's own"
        assert descriptor.__objclass__ is cls


def test_adopted_methods_work_and_refuse_a_wrong_self(aeron) -> None:
    sub = aeron.add_subscription("aeron:ipc", 1241)
    pub = aeron.add_exclusive_publication("aeron:ipc", 1241)
    wait_until(lambda: pub.is_connected and sub.is_connected, 5, "connect")
    wait_until(lambda: pub.offer(b"one") > 0, 5, "offer")
    got: list[bytes] = []
    wait_until(lambda: Subscription.poll(sub, lambda data, header: got.append(data), 10) > 0 or bool(got), 5,
               "poll")
    assert got == [b"one"]
    with pytest.raises(TypeError):
        Subscription.poll(pub, lambda data, header: None)
    with pytest.raises(TypeError):
        ExclusivePublication.offer(sub, b"x")
    with pytest.raises(TypeError):
        BackoffIdleStrategy.idle(object(), 0)


@pytest.mark.tricks
def test_a_user_subclass_gets_its_own_copy() -> None:
    class Quick(BackoffIdleStrategy):
        pass

    assert Quick.__dict__["idle"].__objclass__ is Quick
    Quick().idle(1)


def test_a_user_subclass_keeps_its_overrides() -> None:
    class Quick(BackoffIdleStrategy):
        pass

    class Counting(NoOpIdleStrategy):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0

        def idle(self, work_count: int = 0) -> None:
            self.calls += 1
            super().idle(work_count)

    Quick().idle(1)
    counting = Counting()
    counting.idle(0)
    counting.idle(0)
    assert counting.calls == 2  # the override is not replaced by an adopted copy


def test_adopt_fast_methods_refuses_what_is_not_a_class() -> None:
    for not_a_python_class in (42, int, type):  # not a class, or a static built-in type: refused
        with pytest.raises(TypeError, match="expects a class made by a class statement"):
            _aeron._adopt_fast_methods(not_a_python_class)

    class Plain:
        pass

    _aeron._adopt_fast_methods(Plain)  # a class without fast methods: nothing to adopt
    assert "poll" not in vars(Plain)
    assert aeron_py.Subscription is Subscription
