"""The poll and claim paths reuse the objects a handler or a writer let go of (the bytes of
the last message, the last zero-copy view, the last claim's view). Reuse must be invisible:
whatever Python still holds - the object, a slice, a weak reference, a hash - keeps what it
had, and dead views stay dead."""
from __future__ import annotations

import gc
import queue
import threading
import weakref

import pytest

import aeron_py
from conftest import wait_until

pytestmark = [pytest.mark.timeout(30), pytest.mark.integration]

STREAM = 1231


def connected(aeron, stream: int = STREAM):
    sub = aeron.add_subscription("aeron:ipc", stream)
    pub = aeron.add_exclusive_publication("aeron:ipc", stream)
    wait_until(lambda: pub.is_connected and sub.is_connected, 5, "connect")
    return pub, sub


def send(pub, *messages: bytes) -> None:
    for message in messages:
        wait_until(lambda: pub.offer(message) > 0, 5, "offer")


def receive(sub, count: int, handler, **options) -> None:
    seen = [0]

    def counting(data, header):
        handler(data)
        seen[0] += 1

    wait_until(lambda: sub.poll(counting, 1, **options) >= 0 and seen[0] >= count, 5, f"{count} messages")


def messages(count: int, length: int = 24) -> list[bytes]:
    return [bytes([i % 251]) * length for i in range(count)]


def test_bytes_kept_by_the_handler_keep_their_content(aeron):
    pub, sub = connected(aeron)
    sent = messages(40)
    kept: list[bytes] = []
    send(pub, *sent)
    receive(sub, 40, kept.append)
    assert kept == sent
    assert len({id(b) for b in kept}) == 40  # every kept message is its own object


def test_bytes_and_positions_held_by_another_thread_keep_their_values(aeron):
    """Another thread's references count too: on free-threaded builds they sit in the object's
    shared count, and an object only this thread's cache holds is all that is rewritten."""
    pub, sub = connected(aeron)
    sent = messages(40)
    inbox: queue.Queue[object] = queue.Queue()
    held: list[object] = []
    keeper = threading.Thread(target=lambda: held.extend(inbox.get(timeout=10) for _ in range(80)))
    keeper.start()
    positions = []
    for message in sent:
        for _ in range(1000):  # back pressure is retried, a bounded number of times
            position = pub.offer(message)  # the recycled int itself goes to the other thread
            if position > 0:
                break
        assert position > 0
        positions.append(int(str(position)))  # an independent copy of its value
        inbox.put(position)
        del position
    receive(sub, 40, inbox.put)
    keeper.join(15)
    assert not keeper.is_alive()
    assert held[:40] == positions and held[40:] == sent


def test_bytes_not_kept_are_correct_every_time_including_hash_and_dict_use(aeron):
    pub, sub = connected(aeron)
    sent = messages(30) + messages(5, length=7) + messages(5)
    got: list[tuple[bytes, int]] = []
    table: dict[bytes, int] = {}

    def check(data: bytes) -> None:
        got.append((bytes(bytearray(data)), hash(data)))  # a copy, and the hash of what the handler saw
        table[bytes(data)] = len(table)

    send(pub, *sent)
    receive(sub, len(sent), check)
    assert [copy for copy, _ in got] == sent
    assert [h for _, h in got] == [hash(m) for m in sent]  # a reused object never answers an old hash
    assert set(table) == set(sent)


def test_zero_copy_views_dropped_are_reused_but_kept_ones_stay_dead(aeron):
    pub, sub = connected(aeron)
    sent = messages(20)
    seen: list[bytes] = []
    kept = []
    slices = []
    weak = []

    def handle(view) -> None:
        seen.append(view.tobytes())
        if len(seen) == 3:
            kept.append(view)
        if len(seen) == 5:
            slices.append(view[2:6])
        if len(seen) == 7:
            weak.append(weakref.ref(view))
        if len(seen) == 9:
            view.release()

    send(pub, *sent)
    receive(sub, 20, handle, zero_copy=True)
    assert seen == sent
    with pytest.raises(ValueError):
        kept[0].tobytes()
    if aeron_py._aeron.LAYOUT_TRICKS:
        with pytest.raises(ValueError):
            bytes(slices[0])
    else:  # no layout tricks (AERON_PY_NO_TRICKS, free-threaded or unchecked CPython): a slice of a private copy, which stays as it was
        assert bytes(slices[0]) == sent[4][2:6]
        slices.clear()
    view = weak[0]()
    if view is not None:  # still cached: it must be dead, and never revived while weakly referenced
        with pytest.raises(ValueError):
            view.tobytes()
    send(pub, *messages(5))
    receive(sub, 5, lambda v: None, zero_copy=True)
    for dead in [kept[0], *slices] + ([weak[0]()] if weak[0]() is not None else []):
        with pytest.raises(ValueError):
            bytes(dead)


def test_a_view_found_through_the_gc_between_polls_is_dead(aeron):
    pub, sub = connected(aeron)
    send(pub, b"a" * 16)
    receive(sub, 1, lambda v: None, zero_copy=True)
    cached = [o for o in gc.get_objects() if isinstance(o, memoryview)]
    for view in cached:
        try:
            view.tobytes()
        except ValueError:
            continue
        assert view.nbytes == 0 or not view.readonly or view.obj is not None  # not one of the log's views
    send(pub, b"b" * 16)
    got: list[bytes] = []
    receive(sub, 1, lambda v: got.append(v.tobytes()), zero_copy=True)
    assert got == [b"b" * 16]


def test_a_claim_view_kept_after_commit_stays_dead_while_the_next_claims_work(aeron):
    pub, sub = connected(aeron)
    first = pub.try_claim(8)
    old_view = first.data
    old_view[:] = b"12345678"
    first.commit()
    for i in range(5):
        with pub.try_claim(8) as buf:
            buf[:] = bytes([65 + i]) * 8
    with pytest.raises(ValueError):
        old_view[0] = 1
    with pytest.raises(ValueError):
        bytes(old_view)
    got: list[bytes] = []
    receive(sub, 6, got.append)
    assert got == [b"12345678"] + [bytes([65 + i]) * 8 for i in range(5)]


def test_claims_of_different_lengths_reuse_the_view_with_the_right_length(aeron):
    pub, sub = connected(aeron)
    lengths = [8, 100, 1, 33, 8]
    for n in lengths:
        claim = pub.try_claim(n)
        view = claim.data
        assert len(view) == n and view.nbytes == n and not view.readonly
        view[:] = b"x" * n
        claim.commit()
        del view, claim
    got: list[bytes] = []
    receive(sub, len(lengths), got.append)
    assert got == [b"x" * n for n in lengths]


def test_a_claim_object_kept_after_commit_is_never_restarted(aeron):
    pub, sub = connected(aeron)
    kept = pub.try_claim(4)
    kept.data[:] = b"keep"
    kept.commit()
    weak_target = pub.try_claim(4)
    weak_target.data[:] = b"weak"
    weak_target.commit()
    weak = weakref.ref(weak_target)
    del weak_target
    later = []
    for i in range(4):
        claim = pub.try_claim(4)
        later.append(claim.position)
        claim.data[:] = bytes([48 + i]) * 4
        claim.commit()
        assert claim is not kept and claim is not weak()
        del claim
    assert kept.state == "committed" and kept.done and kept.length == 4
    with pytest.raises(RuntimeError, match="already committed"):
        kept.commit()
    with pytest.raises(ValueError):
        kept.data
    assert later == sorted(later) and len(set(later)) == 4
    got: list[bytes] = []
    receive(sub, 6, got.append)
    assert got == [b"keep", b"weak"] + [bytes([48 + i]) * 4 for i in range(4)]


def test_an_ended_claim_does_not_keep_its_publication_alive(aeron):
    pub, _ = connected(aeron)
    claim = pub.try_claim(4)
    claim.data[:] = b"1234"
    claim.commit()
    del claim  # now the publication's spare claim
    publication = weakref.ref(pub) if hasattr(type(pub), "__weakref__") else None
    pub.close()
    del pub
    gc.collect()
    if publication is not None:
        assert publication() is None


def test_a_pending_claim_dropped_is_aborted_and_the_next_claim_works(aeron):
    pub, sub = connected(aeron)
    dropped = pub.try_claim(4)
    dropped.data[:] = b"lost"
    del dropped  # abandoned while pending: aborted (padding), never sent
    claim = pub.try_claim(4)
    claim.data[:] = b"sent"
    claim.abort()
    del claim
    with pub.try_claim(4) as buf:
        buf[:] = b"real"
    got: list[bytes] = []
    receive(sub, 1, got.append)
    assert got == [b"real"]


def test_poll_counts_above_the_small_ints_and_offer_positions_are_exact(aeron):
    pub, sub = connected(aeron)
    positions = [pub.offer(bytes(8)) for _ in range(300)]  # kept: every one its own value
    assert all(p > 0 for p in positions) and positions == sorted(positions)
    assert [b - a for a, b in zip(positions, positions[1:])] == [64] * 299  # 32 B header + 8 B, 32 B aligned
    assert positions[-1] == pub.position
    calls = [0]

    def count(data, header):
        calls[0] += 1

    got = 0
    for _ in range(100):
        got += sub.poll(count, 1000)
        if got >= 300:
            break
    assert got == calls[0] == 300
    last = 0
    for _ in range(1000):  # results dropped at once: recycled ints, still the right values
        position = pub.offer(b"x")
        assert position > last
        last = position
    assert last == pub.position and hash(last) == hash(int(str(last)))


def test_ended_claims_outliving_their_publication_and_client_raise_cleanly(aeron):
    pub, _ = connected(aeron)
    held = []
    for i in range(3):  # two become the publication's spares, all three stay held here too
        claim = pub.try_claim(4)
        claim.data[:] = bytes([49 + i]) * 4
        claim.commit()
        held.append(claim)
    spare = pub.try_claim(4)
    spare.abort()
    del spare
    pub.close()
    with pytest.raises(aeron_py.errors.PublicationClosedError):
        pub.try_claim(4)
    del pub
    gc.collect()
    aeron.close()
    for claim in held:  # their publication and client are gone: every use raises, nothing crashes
        assert claim.state == "committed" and claim.done
        with pytest.raises(ValueError):
            claim.data
        with pytest.raises(RuntimeError, match="already committed"):
            claim.commit()
        with pytest.raises(RuntimeError):
            claim.abort()
