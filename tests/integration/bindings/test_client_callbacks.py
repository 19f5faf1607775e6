"""The client's lifecycle callbacks (aeron_context_set_on_available_counter,
_on_unavailable_counter, _on_new_publication, _on_new_exclusive_publication,
_on_new_subscription) on a real driver: what they report, on which thread, and that they
never crash or hang the client when misused."""
from __future__ import annotations

import sys
import threading
from typing import Any

import pytest

from aeron_py import Aeron, MediaDriver
from conftest import wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


class Recorder:
    """Collects callback calls (from the client's event thread) with the thread's name."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, tuple[Any, ...], str]] = []
        self.lock = threading.Lock()

    def __call__(self, name: str) -> Any:
        def record(*args: Any) -> None:
            with self.lock:
                self.calls.append((name, args, threading.current_thread().name))
        return record

    def named(self, name: str) -> list[tuple[Any, ...]]:
        with self.lock:
            return [args for called, args, _thread in self.calls if called == name]


def test_counters_appearing_and_going_are_reported(driver: MediaDriver) -> None:
    seen = Recorder()
    with Aeron(driver=driver, on_available_counter=seen("available"),
               on_unavailable_counter=seen("unavailable")) as aeron:
        counter = aeron.add_counter(1101, "watched")
        ids = (counter.registration_id, counter.counter_id)
        wait_until(lambda: ids in seen.named("available"), 5, "the counter's availability")
        counter.close()
        wait_until(lambda: ids in seen.named("unavailable"), 5, "the counter's unavailability")
        threads = {thread for _name, _args, thread in seen.calls}
        assert threads == {f"aeron-py-events-{aeron.client_id}"}  # never Aeron's conductor thread


def test_new_publications_and_subscriptions_are_reported_with_their_ids(driver: MediaDriver) -> None:
    seen = Recorder()
    with Aeron(driver=driver, on_new_publication=seen("pub"), on_new_exclusive_publication=seen("excl"),
               on_new_subscription=seen("sub")) as aeron:
        pub = aeron.add_publication("aeron:ipc", 1102)
        excl = aeron.add_exclusive_publication("aeron:ipc", 1103)
        sub = aeron.add_subscription("aeron:ipc", 1102)
        wait_until(lambda: seen.named("pub") and seen.named("excl") and seen.named("sub"), 5, "three callbacks")
        assert seen.named("pub") == [("aeron:ipc", 1102, pub.session_id, pub.registration_id)]
        assert seen.named("excl") == [("aeron:ipc", 1103, excl.session_id, excl.registration_id)]
        assert seen.named("sub") == [("aeron:ipc", 1102, sub.registration_id)]


def test_only_the_callbacks_given_are_called(driver: MediaDriver) -> None:
    seen = Recorder()
    with Aeron(driver=driver, on_new_subscription=seen("sub"), on_unavailable_counter=seen("gone")) as aeron:
        aeron.add_publication("aeron:ipc", 1104)  # no on_new_publication: nothing to call
        counter = aeron.add_counter(1104, "one")
        sub = aeron.add_subscription("aeron:ipc", 1104)
        counter.close()
        wait_until(lambda: seen.named("sub") and seen.named("gone"), 5, "the two callbacks given")
        assert seen.named("sub") == [("aeron:ipc", 1104, sub.registration_id)]
        assert {name for name, _args, _thread in seen.calls} == {"sub", "gone"}


@pytest.mark.parametrize("name", ["on_available_counter", "on_unavailable_counter", "on_new_publication",
                                  "on_new_exclusive_publication", "on_new_subscription"])
def test_a_callback_that_is_not_callable_is_refused_before_connecting(driver: MediaDriver, name: str) -> None:
    with pytest.raises(TypeError, match=f"{name} must be a callable or None, got int"):
        Aeron(driver=driver, **{name: 42})


def test_a_raising_callback_is_reported_and_the_client_goes_on(driver: MediaDriver) -> None:
    reported: list[BaseException | None] = []
    seen = Recorder()

    def fail(*args: Any) -> None:
        raise RuntimeError("callback bug")

    old_hook = sys.unraisablehook
    sys.unraisablehook = lambda unraisable: reported.append(unraisable.exc_value)
    try:
        with Aeron(driver=driver, on_new_publication=fail, on_new_subscription=seen("sub")) as aeron:
            aeron.add_publication("aeron:ipc", 1105)
            sub = aeron.add_subscription("aeron:ipc", 1105)
            wait_until(lambda: seen.named("sub") and reported, 5, "the failure reported and the next event delivered")
            assert isinstance(reported[0], RuntimeError) and seen.named("sub")[0][2] == sub.registration_id
    finally:
        sys.unraisablehook = old_hook


def test_with_the_agent_invoker_do_work_delivers_them(driver: MediaDriver) -> None:
    seen = Recorder()
    with Aeron(driver=driver, use_conductor_agent_invoker=True, on_new_subscription=seen("sub"),
               on_available_counter=seen("available")) as aeron:
        pending = aeron.async_add_subscription("aeron:ipc", 1106)
        wait_until(lambda: aeron.do_work() >= 0 and pending.poll() is not None, 5, "the subscription")
        wait_until(lambda: aeron.do_work() >= 0 and bool(seen.named("sub")), 5, "the callback")
        assert {thread for _name, _args, thread in seen.calls} == {threading.current_thread().name}


def test_nothing_is_delivered_after_close(driver: MediaDriver) -> None:
    seen = Recorder()
    aeron = Aeron(driver=driver, use_conductor_agent_invoker=True, on_new_publication=seen("pub"))
    pending = aeron.async_add_publication("aeron:ipc", 1107)
    # the raw duty cycle: the conductor queues the event, nothing delivers it yet
    wait_until(lambda: aeron._client.main_do_work() >= 0 and pending.poll() is not None, 5, "the publication")
    aeron.close()
    aeron.poll_events()  # closed: the queued event is dropped, no callback runs
    assert seen.calls == []
