"""PollSet: many subscriptions and images polled by one call, through the real C driver
(IPC and UDP on loopback): keys, session ids, order, reassembly, end of stream, removal,
closes, the total cap and argument errors. Crash-type misuse is in test_misuse_poll_set.py."""
from __future__ import annotations

import gc
import sys
import weakref
from collections import defaultdict

import pytest

import aeron_py
from aeron_py import Image, ImageSnapshotError, PollSet
from aeron_py.errors import AeronError
from conftest import wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

STREAM = 1700


def channel_of(kind: str, port: int) -> str:
    return "aeron:ipc" if kind == "ipc" else f"aeron:udp?endpoint=127.0.0.1:{port}"


def pairs(aeron, channel: str, count: int, stream: int = STREAM):
    subs = [aeron.add_subscription(channel, stream + i) for i in range(count)]
    pubs = [aeron.add_publication(channel, stream + i) for i in range(count)]
    wait_until(lambda: all(p.is_connected for p in pubs) and all(s.is_connected for s in subs), 10, "connect")
    return pubs, subs


def send(pub, *messages: bytes) -> None:
    for message in messages:
        wait_until(lambda: pub.offer(message) > 0, 5, "offer")


def drain(ps: PollSet, count: int, timeout: float = 10.0, **options) -> list[tuple[object, int, bytes]]:
    got: list[tuple[object, int, bytes]] = []

    def more() -> bool:
        got.extend(ps.poll(**options))
        return len(got) >= count

    wait_until(more, timeout, f"{count} messages from the set")
    return got


@pytest.mark.parametrize("kind", ["ipc", "udp"])
def test_messages_of_many_subscriptions_come_back_with_keys_and_session_ids_in_order(aeron, udp_port, kind):
    pubs, subs = pairs(aeron, channel_of(kind, udp_port), 12)
    ps: PollSet[int] = PollSet()
    for i, sub in enumerate(subs):
        ps.add(sub, 1000 + i)
    assert len(ps) == 12 and all(sub in ps for sub in subs)
    sent = {1000 + i: [b"%d:%d" % (i, n) for n in range(25)] for i in range(12)}
    for i, pub in enumerate(pubs):
        send(pub, *sent[1000 + i])
    got = drain(ps, 12 * 25)
    assert len(got) == 12 * 25
    by_key: dict[int, list[bytes]] = defaultdict(list)
    for key, session_id, data in got:
        assert session_id == pubs[key - 1000].session_id
        by_key[key].append(data)
    assert dict(by_key) == sent  # every message once, in order per stream
    assert ps.poll() == []


@pytest.mark.parametrize("kind", ["ipc", "udp"])
def test_messages_larger_than_the_mtu_are_reassembled(aeron, udp_port, kind):
    pubs, subs = pairs(aeron, channel_of(kind, udp_port), 2)
    ps: PollSet[str] = PollSet()
    ps.add(subs[0], "a")
    ps.add(subs[1], "b")
    big = bytes(range(256)) * 40  # 10 KiB: 8 MTU-sized fragments
    send(pubs[1], b"small", big, b"after")
    got = drain(ps, 3, fragment_limit=3)  # fewer fragments than the big message per poll
    assert [(k, d) for k, _, d in got] == [("b", b"small"), ("b", big), ("b", b"after")]


def test_an_idle_set_returns_an_empty_list_without_a_python_call(aeron):
    pubs, subs = pairs(aeron, "aeron:ipc", 200)
    ps: PollSet[int] = PollSet()
    for i, sub in enumerate(subs):
        ps.add(sub, i)
    calls: list[str] = []

    def profile(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)

    results = []
    sys.setprofile(profile)
    try:
        for _ in range(50):
            results.append(ps.poll())
    finally:
        sys.setprofile(None)
    assert results == [[]] * 50
    assert calls == []  # no Python frame ran for any of the 200 idle entries
    assert PollSet().poll() == []


@pytest.mark.parametrize("kind", ["ipc", "udp"])
def test_end_of_stream_of_a_cleanly_closed_publication_is_reported_once(aeron, udp_port, kind):
    pubs, subs = pairs(aeron, channel_of(kind, udp_port), 3)
    ps: PollSet[int] = PollSet()
    for i, sub in enumerate(subs):
        ps.add(sub, i)
    assert ps.end_of_stream() == []
    send(pubs[1], b"last words")
    session_id = pubs[1].session_id
    pubs[1].close()
    got: list[tuple[int, int, bytes]] = []
    eos: list[tuple[int, int]] = []

    def ended() -> bool:
        got.extend(ps.poll())
        eos.extend(ps.end_of_stream())
        return bool(eos)

    wait_until(ended, 10, "end of stream")
    assert got == [(1, session_id, b"last words")]  # end of stream comes after the data
    assert eos == [(1, session_id)]
    for _ in range(20):
        ps.poll()
        assert ps.end_of_stream() == []  # reported once, also while the image lingers


def test_images_can_be_members_and_report_their_own_end_of_stream(aeron):
    pubs, subs = pairs(aeron, "aeron:ipc", 1)
    [image] = subs[0].images()
    assert type(image) is Image
    ps: PollSet[str] = PollSet()
    ps.add(image, "image")
    send(pubs[0], b"one", b"two")
    assert [(k, s, d) for k, s, d in drain(ps, 2)] == [("image", image.session_id, b"one"),
                                                         ("image", image.session_id, b"two")]
    pubs[0].close()
    eos = wait_until(ps.end_of_stream, 10, "image end of stream")
    assert eos == [("image", image.session_id)]
    assert ps.end_of_stream() == []
    image.close()  # a released image is dropped, never polled again
    assert ps.poll() == [] and len(ps) == 0


def test_a_subscription_and_its_image_in_one_set_are_polled_and_each_message_comes_once(aeron):
    # The set's poll claims every entry's subscription first; its own claim of the subscription
    # must not refuse the image's entry (nor the other way round).
    pubs, subs = pairs(aeron, "aeron:ipc", 1)
    [image] = subs[0].images()
    ps: PollSet[str] = PollSet()
    ps.add(subs[0], "subscription")
    ps.add(image, "image")
    send(pubs[0], *[b"%d" % n for n in range(20)])
    got = drain(ps, 20)
    assert sorted(int(d) for _, _, d in got) == list(range(20))
    assert {k for k, _, _ in got} <= {"subscription", "image"}
    assert ps.poll() == [] and subs[0].poll(lambda d, h: None, 10) == 0  # nothing left, nothing claimed


def test_add_refuses_duplicates_other_types_snapshots_and_closed_handles(aeron):
    pubs, subs = pairs(aeron, "aeron:ipc", 2)
    snapshots: list[Image] = []
    sub_with_callback = aeron.add_subscription("aeron:ipc", STREAM, on_available_image=snapshots.append)
    ps: PollSet[int] = PollSet()
    ps.add(subs[0], 1)
    with pytest.raises(ValueError, match="already in the set"):
        ps.add(subs[0], 2)
    for wrong in (pubs[0], object(), None, 42):
        with pytest.raises(TypeError, match="expected a Subscription or an Image"):
            ps.add(wrong, 3)
    wait_until(lambda: snapshots, 5, "image callback")
    with pytest.raises(ImageSnapshotError):
        ps.add(snapshots[0], 4)
    subs[1].close()
    with pytest.raises(AeronError, match="closed"):
        ps.add(subs[1], 5)
    assert len(ps) == 1
    sub_with_callback.close()


def test_remove_clear_and_closes_during_life(aeron):
    pubs, subs = pairs(aeron, "aeron:ipc", 4)
    ps: PollSet[int] = PollSet()
    for i, sub in enumerate(subs):
        ps.add(sub, i)
    assert ps.remove(subs[0]) is True
    assert ps.remove(subs[0]) is False and subs[0] not in ps
    assert ps.remove(object()) is False
    send(pubs[0], b"not in the set")
    send(pubs[2], b"closed before the poll")
    subs[2].close()
    assert subs[2] in ps and ps.remove(subs[2]) is True  # still a member until a poll drops it
    ps.add(subs[0], 0)
    subs[3].close()
    send(pubs[1], b"kept")
    got = drain(ps, 2)
    assert sorted((k, d) for k, _, d in got) == [(0, b"not in the set"), (1, b"kept")]
    assert subs[3] not in ps and ps.remove(subs[3]) is False and len(ps) == 2  # dropped by the poll
    ps.clear()
    assert len(ps) == 0 and ps.poll() == []


def test_max_messages_caps_a_poll_and_the_next_one_starts_after_the_filled_entry(aeron):
    pubs, subs = pairs(aeron, "aeron:ipc", 3)
    ps: PollSet[int] = PollSet()
    for i, sub in enumerate(subs):
        ps.add(sub, i)
    for i, pub in enumerate(pubs):
        send(pub, *[b"%d-%d" % (i, n) for n in range(6)])
    first = drain(ps, 1, max_messages=4)
    assert len(first) == 4 and len({k for k, _, _ in first}) == 1  # one entry filled the cap
    second = ps.poll(max_messages=4)
    assert 0 < len(second) <= 4 and second[0][0] != first[0][0]  # the next entry goes first
    rest = drain(ps, 18 - len(first) - len(second), max_messages=4)
    by_key: dict[int, list[bytes]] = defaultdict(list)
    for key, _, data in first + second + rest:
        by_key[key].append(data)
    assert dict(by_key) == {i: [b"%d-%d" % (i, n) for n in range(6)] for i in range(3)}
    assert ps.poll(max_messages=0) == [] and ps.poll(max_messages=None) == []


def test_keys_and_subscriptions_are_held_by_strong_references(aeron):
    pubs, subs = pairs(aeron, "aeron:ipc", 1)

    class Key:
        pass

    key = Key()
    key_ref = weakref.ref(key)
    ps: PollSet[Key] = PollSet()
    ps.add(subs[0], key)
    sub_ref = weakref.ref(subs[0]) if hasattr(subs[0], "__weakref__") else None
    del key
    subs.clear()
    gc.collect()
    assert key_ref() is not None
    send(pubs[0], b"x")
    [(got_key, _, data)] = drain(ps, 1)
    assert got_key is key_ref() and data == b"x"  # the subscription stayed open in the set
    del got_key
    ps.clear()
    gc.collect()
    assert key_ref() is None
    assert sub_ref is None or sub_ref() is None


def test_poll_arguments_are_checked_with_clear_errors(aeron):
    ps: PollSet[int] = PollSet()
    for bad in (-1, 2**31, 2**100):
        with pytest.raises(ValueError, match="fragment_limit must be between 0 and 2147483647"):
            ps.poll(bad)
        with pytest.raises(ValueError, match="max_messages must be between"):
            ps.poll(10, max_messages=bad)
    with pytest.raises(TypeError, match="fragment_limit must be an int"):
        ps.poll("10")
    with pytest.raises(TypeError, match="unexpected keyword argument 'limit'"):
        ps.poll(limit=3)
    with pytest.raises(TypeError, match="at most 2 arguments"):
        ps.poll(1, 2, 3)
    assert ps.poll(fragment_limit=0) == [] and ps.poll(0, 0) == []


def test_polling_the_set_from_a_handler_of_one_of_its_subscriptions_raises_before_consuming(aeron):
    pubs, subs = pairs(aeron, "aeron:ipc", 2)
    ps: PollSet[int] = PollSet()
    ps.add(subs[0], 0)
    ps.add(subs[1], 1)
    send(pubs[0], b"first")
    send(pubs[1], b"other")

    def handler(data, header):
        ps.poll()

    with pytest.raises(RuntimeError, match="already being polled"):
        wait_until(lambda: subs[0].poll(handler), 5, "a message for the handler")
    assert [(k, d) for k, _, d in drain(ps, 1)] == [(1, b"other")]  # nothing was consumed by the refused poll


def test_a_key_referring_back_to_its_set_is_collected_with_it(aeron):
    pubs, subs = pairs(aeron, "aeron:ipc", 1)

    class Owner:
        def __init__(self) -> None:
            self.ps: PollSet[Owner] = PollSet()
            self.ps.add(subs[0], self)  # owner -> set -> key (owner): a cycle

    owner = Owner()
    owner_ref = weakref.ref(owner)
    del owner
    gc.collect()
    assert owner_ref() is None  # the set takes part in the cycle collector
    assert gc.is_tracked(PollSet()) and gc.is_tracked(aeron_py._aeron.PollSet())


def test_a_pass_that_consumes_a_terms_padding_finds_nothing_though_the_next_term_holds_a_message(aeron):
    # Why the Echo server's quiet loop settles only after two empty passes in a row
    # (aeron_py/echo/server/loop.py, _settle_poll): a poll stops at the end of a term, so
    # the pass that reads the padding closing a term returns no message while the next
    # term already holds one.  64 KiB terms, 96-byte frames: 682 fill all but 64 bytes.
    channel = "aeron:ipc?term-length=65536"
    sub = aeron.add_subscription(channel, STREAM)
    pub = aeron.add_exclusive_publication(channel, STREAM)
    wait_until(lambda: pub.is_connected and sub.is_connected, 10, "connect")
    ps: PollSet[int] = PollSet()
    ps.add(sub, 7)
    payload = b"p" * 64  # + 32-byte header = one 96-byte frame
    for batch in (100,) * 6 + (82,):  # in steps: the publication runs at most half a term ahead
        send(pub, *[payload] * batch)
        assert len(drain(ps, batch, fragment_limit=1000)) == batch
    assert ps.poll(fragment_limit=1000) == []
    # a 96-byte frame does not fit the last 64 bytes: the first offer pads them (ADMIN_ACTION),
    # the second writes into term 1; both are in the log before the next poll
    nxt = b"n" * 64
    assert pub.offer(nxt) == aeron_py.ADMIN_ACTION
    assert pub.offer(nxt) == 65536 + 96
    assert ps.poll(fragment_limit=1000) == []  # consumed the padding only: stopped at the term's end
    assert [data for _, _, data in ps.poll(fragment_limit=1000)] == [nxt]
