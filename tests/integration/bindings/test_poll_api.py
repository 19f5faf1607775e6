"""The poll fast paths through the natural API: signatures, options, argument errors, header
views, zero-copy, image objects and where client events are delivered."""
from __future__ import annotations

import inspect
import threading

import pytest

import aeron_py
from aeron_py import Action, Aeron, Header, HeaderView, Image, ImageSnapshotError, Subscription
from conftest import wait_until

pytestmark = [pytest.mark.timeout(30), pytest.mark.integration]

STREAM = 1201


def connected(aeron, stream: int = STREAM, **callbacks):
    sub = aeron.add_subscription("aeron:ipc", stream, **callbacks)
    pub = aeron.add_publication("aeron:ipc", stream)
    wait_until(lambda: pub.is_connected and sub.is_connected, 5, "connect")
    return pub, sub


def send(pub, *messages: bytes) -> None:
    for message in messages:
        wait_until(lambda: pub.offer(message) > 0, 5, "offer")


def test_public_classes_are_the_extension_types_with_inspectable_fast_methods(aeron):
    pub, sub = connected(aeron)
    assert type(sub) is Subscription and isinstance(sub, aeron_py._aeron.Subscription)
    [image] = sub.images()
    assert type(image) is Image and image.is_live
    image.close()
    for method in (Subscription.poll, Subscription.controlled_poll, Subscription.poll_fragments, Image.poll):
        assert list(inspect.signature(method).parameters)[:3] == ["self", "handler", "fragment_limit"]
    assert inspect.signature(Subscription.poll_batch).parameters["fragment_limit"].default == 100
    with pytest.raises(TypeError):
        Subscription()
    with pytest.raises(TypeError):
        Image()


def test_poll_arguments_are_checked_with_clear_errors(aeron):
    pub, sub = connected(aeron)
    with pytest.raises(TypeError, match="handler must be callable"):
        sub.poll(42)
    with pytest.raises(ValueError, match="fragment_limit"):
        sub.poll(lambda d, h: None, -1)
    with pytest.raises(TypeError, match="fragment_limit must be an int"):
        sub.poll(lambda d, h: None, "10")
    with pytest.raises(TypeError, match="unexpected keyword argument 'limit'"):
        sub.poll(lambda d, h: None, limit=10)
    with pytest.raises(TypeError, match="missing required argument 'handler'"):
        sub.poll()
    with pytest.raises(TypeError, match="doesn.t apply"):
        Subscription.poll(object(), lambda d, h: None)
    assert sub.poll(handler=lambda d, h: None, fragment_limit=0) == 0


def test_with_header_false_calls_handler_with_data_only_and_default_limit_is_ten(aeron):
    pub, sub = connected(aeron)
    send(pub, *[b"m%d" % i for i in range(12)])
    got: list[bytes] = []
    wait_until(lambda: sub.poll(got.append, with_header=False) or got, 5, "delivery")
    assert got == [b"m%d" % i for i in range(10)]  # fragment_limit defaults to 10
    wait_until(lambda: sub.poll(got.append, with_header=False) or len(got) == 12, 5, "the rest")


def test_the_header_view_is_reused_unless_kept(aeron):
    pub, sub = connected(aeron)
    send(pub, b"a", b"b", b"c")
    ids: list[int] = []
    positions: list[int] = []

    def handler(data, header):
        assert isinstance(header, HeaderView) and header.is_valid
        ids.append(id(header))
        positions.append(header.position)

    wait_until(lambda: sub.poll(handler, 10) or len(ids) == 3, 5, "delivery")
    if aeron_py._aeron.TRICKS:  # the reuse is a trick (header_view.cpp), off under AERON_PY_NO_TRICKS
        assert len(set(ids)) == 1  # one view for every fragment: no allocation per message
    assert positions == sorted(positions) and len(set(positions)) == 3
    copy = []
    send(pub, b"d")
    wait_until(lambda: sub.poll(lambda d, h: copy.append(h.copy()), 10) or copy, 5, "delivery")
    assert isinstance(copy[0], Header) and copy[0].stream_id == STREAM and copy[0].copy().position == copy[0].position


def test_zero_copy_controlled_poll_redelivers_an_aborted_message_in_a_fresh_view(aeron):
    pub, sub = connected(aeron)
    send(pub, b"first", b"second")
    seen: list[bytes] = []

    def handler(data, header):
        assert isinstance(data, memoryview) and data.readonly
        seen.append(bytes(data))
        return Action.ABORT if len(seen) == 1 else Action.CONTINUE

    wait_until(lambda: sub.controlled_poll(handler, 10, zero_copy=True) or len(seen) >= 3, 5, "redelivery")
    assert seen == [b"first", b"first", b"second"]


def test_poll_batch_and_image_poll_batch_reassemble(aeron):
    pub, sub = connected(aeron)
    big = bytes(range(256)) * 40  # larger than the IPC MTU: reassembled
    send(pub, big, b"small")
    batch: list[bytes] = []
    wait_until(lambda: batch.extend(sub.poll_batch()) or len(batch) >= 2, 5, "batch")
    assert batch == [big, b"small"]
    send(pub, b"via image")
    with sub.images()[0] as image:
        got: list[bytes] = []
        wait_until(lambda: got.extend(image.poll_batch(fragment_limit=5)) or got, 5, "image batch")
        assert got == [b"via image"]


def test_image_callbacks_run_on_the_event_thread_with_snapshots(aeron):
    events: list[tuple[str, Image]] = []
    sub = aeron.add_subscription("aeron:ipc", STREAM + 1, on_available_image=lambda i: events.append(
        (threading.current_thread().name, i)))
    pub = aeron.add_publication("aeron:ipc", STREAM + 1)
    wait_until(lambda: events, 5, "image callback")
    thread_name, snapshot = events[0]
    assert thread_name.startswith("aeron-py-events-")
    assert type(snapshot) is Image and not snapshot.is_live and snapshot.session_id == pub.session_id
    with pytest.raises(ImageSnapshotError, match="snapshot.*image_by_session_id"):
        snapshot.poll(lambda d, h: None)
    assert aeron._client.lost_events == 0


def test_invoker_mode_delivers_image_callbacks_in_do_work_on_the_calling_thread(driver):
    with Aeron(driver=driver, use_conductor_agent_invoker=True) as aeron:
        events: list[str] = []
        pending = aeron.async_add_subscription(
            "aeron:ipc", STREAM + 2, on_available_image=lambda i: events.append(threading.current_thread().name))
        sub = wait_until(lambda: aeron.do_work() >= 0 and pending.poll(), 5, "subscription")
        pending_pub = aeron.async_add_publication("aeron:ipc", STREAM + 2)
        wait_until(lambda: aeron.do_work() >= 0 and pending_pub.poll() and events, 5, "image callback")
        assert events == [threading.current_thread().name]
        sub.close()


def test_callbacks_are_dropped_with_their_subscription(aeron):
    events: list[str] = []
    sub = aeron.add_subscription("aeron:ipc", STREAM + 3, on_unavailable_image=lambda i: events.append("gone"))
    pub = aeron.add_publication("aeron:ipc", STREAM + 3)
    wait_until(lambda: sub.is_connected, 5, "connect")
    sub.close()
    pub.close()
    aeron.poll_events()
    assert events == []  # nothing is delivered for a closed subscription


def test_a_handler_may_offer_claim_and_poll_elsewhere_on_the_polling_client(aeron):
    """Calls on the polling client from inside its handler (the echo shape) run, and only the
    re-entrant poll of the same subscription is refused. Free-threaded, each is a critical
    section inside the poll's on the same lock (docs/safety.md)."""
    pub, sub = connected(aeron)
    echo_pub, echo_sub = connected(aeron, STREAM + 1)
    sent = [b"m%03d" % i for i in range(50)]
    refused, echoed = [], []

    def echo(data, header):
        try:
            sub.poll(lambda d, h: None, 1)
        except RuntimeError:
            refused.append(data)
        if len(refused) % 2:
            wait_until(lambda: echo_pub.offer(data) > 0, 5, "echo offer")
        else:
            claim = echo_pub.try_claim(len(data))
            claim.data[:] = data
            claim.commit()
        echo_sub.poll(lambda d, h: echoed.append(d), 10)  # another subscription: allowed

    send(pub, *sent)
    wait_until(lambda: sub.poll(echo, 10) >= 0 and len(refused) == len(sent), 5, "every message handled")
    wait_until(lambda: echo_sub.poll(lambda d, h: echoed.append(d), 10) >= 0 and len(echoed) == len(sent), 5,
               "every echo")
    assert refused == sent and echoed == sent
