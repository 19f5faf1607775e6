"""Round trips through the real C driver: IPC, UDP unicast, reassembly, claims, handlers."""
from __future__ import annotations

import pytest

import aeron_py
from aeron_py import Action, ChannelUri
from conftest import wait_until

pytestmark = [pytest.mark.timeout(30), pytest.mark.integration]

STREAM = 1001


def receive(sub, count: int, timeout: float = 5.0) -> list[tuple[bytes, object]]:
    got: list[tuple[bytes, object]] = []

    def more() -> bool:
        sub.poll(lambda data, header: got.append((data, header.copy())), 10)
        return len(got) >= count

    wait_until(more, timeout, f"{count} messages on {sub.channel}")
    return got


def connected_pair(aeron, channel: str, stream: int = STREAM):
    sub = aeron.add_subscription(channel, stream)
    pub = aeron.add_publication(channel, stream)
    wait_until(lambda: pub.is_connected and sub.is_connected, 5, "publication to connect")
    return pub, sub


def offer(pub, data) -> int:
    return pub.offer_until(data, timeout=5)


def test_ipc_round_trip_delivers_bytes_and_header(aeron):
    pub, sub = connected_pair(aeron, "aeron:ipc")
    position = offer(pub, b"hello ipc")
    [(data, header)] = receive(sub, 1)
    assert data == b"hello ipc"
    assert header.session_id == pub.session_id
    assert header.stream_id == STREAM
    assert header.position == position
    assert sub.images()[0].source_identity == "aeron:ipc"
    # the frame after this one: 32 B header + 9 B payload, aligned to 32; the shift is log2(term length)
    assert header.next_term_offset == header.term_offset + 64
    assert 1 << header.position_bits_to_shift == sub.images()[0].term_buffer_length


def test_header_copies_keep_next_term_offset_and_term_shift(aeron):
    pub, sub = connected_pair(aeron, "aeron:ipc?term-length=128k")
    offer(pub, bytes(100))
    views: list = []
    copies: list = []
    wait_until(lambda: sub.poll(lambda d, h: (views.append(h), copies.append(h.copy())), 1) > 0, 5, "a message")
    [copy] = copies
    assert (copy.next_term_offset, copy.position_bits_to_shift) == (copy.term_offset + 160, 17)
    with pytest.raises(ValueError, match="after its fragment handler returned"):
        views[0].next_term_offset  # a view is dead after the handler, whatever the field
    with pytest.raises(ValueError, match="after its fragment handler returned"):
        views[0].position_bits_to_shift


def test_udp_unicast_round_trip_accepts_any_contiguous_buffer(aeron, udp_port):
    channel = str(ChannelUri.udp(("127.0.0.1", udp_port)))
    pub, sub = connected_pair(aeron, channel)
    for payload in (b"bytes", bytearray(b"bytearray"), memoryview(b"xxmemoryview")[2:]):
        offer(pub, payload)
    assert [d for d, _ in receive(sub, 3)] == [b"bytes", b"bytearray", b"memoryview"]


def test_offer_rejects_non_contiguous_buffer(aeron):
    pub, _ = connected_pair(aeron, "aeron:ipc")
    with pytest.raises((BufferError, TypeError, ValueError)):
        pub.offer(memoryview(b"abcdef")[::2])
    with pytest.raises(TypeError):
        pub.offer("text is not bytes")


@pytest.mark.parametrize("media", ["ipc", "udp"])
def test_100_kib_message_is_reassembled(aeron, udp_port, media):
    channel = "aeron:ipc" if media == "ipc" else f"aeron:udp?endpoint=127.0.0.1:{udp_port}"
    pub, sub = connected_pair(aeron, channel)
    payload = bytes(range(256)) * 400  # 102400 bytes, many MTUs
    assert len(payload) > pub.max_payload_length
    offer(pub, payload)
    [(data, _)] = receive(sub, 1)
    assert data == payload


def test_poll_fragments_sees_raw_fragments(aeron):
    pub, sub = connected_pair(aeron, "aeron:ipc")
    offer(pub, b"y" * (pub.max_payload_length * 3))
    fragments: list[bytes] = []
    wait_until(lambda: sub.poll_fragments(lambda d, h: fragments.append(d), 10) and len(fragments) >= 3, 5,
               "three fragments")
    assert b"".join(fragments) == b"y" * (pub.max_payload_length * 3)


def test_try_claim_commits_on_exit_and_aborts_on_exception(aeron):
    pub, sub = connected_pair(aeron, "aeron:ipc")
    with pytest.raises(RuntimeError):
        with pub.try_claim(4) as buf:
            buf[:] = b"lost"
            raise RuntimeError("abort this claim")
    with pub.try_claim(4) as buf:
        buf[:] = b"kept"
    assert [d for d, _ in receive(sub, 1)] == [b"kept"]
    assert sub.poll(lambda d, h: None, 10) == 0  # the aborted claim became padding, not a message


def test_claim_view_is_invalid_after_commit(aeron):
    pub, _ = connected_pair(aeron, "aeron:ipc")
    claim = pub.try_claim(8)
    view = claim.data
    claim.commit()
    with pytest.raises(ValueError):
        view[0] = 1  # released: no write into the log after commit


def test_handler_exception_propagates_and_loses_nothing(aeron):
    pub, sub = connected_pair(aeron, "aeron:ipc")
    for i in range(5):
        offer(pub, f"m{i}".encode())
    seen: list[bytes] = []

    def handler(data: bytes, header) -> None:
        seen.append(data)
        if data == b"m1":
            raise ValueError("bad message m1")

    wait_until(lambda: sub.image_count == 1, 5, "image")
    with pytest.raises(ValueError, match="bad message m1"):
        wait_until(lambda: sub.poll(handler, 10) and False, 5, "poll to raise")
    assert seen == [b"m0", b"m1"]  # polling stopped at the raising message
    wait_until(lambda: sub.poll(handler, 10) == 0 and len(seen) == 5, 5, "the rest")
    assert seen == [b"m0", b"m1", b"m2", b"m3", b"m4"]  # later messages were not lost


def test_controlled_poll_abort_redelivers(aeron):
    pub, sub = connected_pair(aeron, "aeron:ipc")
    offer(pub, b"first")
    offer(pub, b"second")
    calls: list[bytes] = []

    def abort_first_time(data: bytes, header):
        calls.append(data)
        return Action.ABORT if calls.count(data) == 1 else Action.CONTINUE

    wait_until(lambda: sub.controlled_poll(abort_first_time, 10) >= 0 and len(calls) >= 4, 5, "redelivery")
    assert calls[:2] == [b"first", b"first"]
    assert b"second" in calls


def test_controlled_poll_break_stops_after_one(aeron):
    pub, sub = connected_pair(aeron, "aeron:ipc")
    for m in (b"a", b"b", b"c"):
        offer(pub, m)
    got: list[bytes] = []
    wait_until(lambda: sub.controlled_poll(lambda d, h: (got.append(d), Action.BREAK)[1], 10) == 1, 5, "one")
    assert got == [b"a"]


def test_poll_batch_returns_messages_in_order(aeron):
    pub, sub = connected_pair(aeron, "aeron:ipc")
    for i in range(50):
        offer(pub, i.to_bytes(4, "little"))
    batch: list[bytes] = []
    wait_until(lambda: batch.extend(sub.poll_batch(100)) or len(batch) >= 50, 5, "batch")
    assert [int.from_bytes(b, "little") for b in batch] == list(range(50))


def test_exclusive_publication_round_trip(aeron):
    sub = aeron.add_subscription("aeron:ipc", 77)
    pub = aeron.add_exclusive_publication("aeron:ipc", 77)
    assert isinstance(pub, aeron_py.ExclusivePublication)
    wait_until(lambda: pub.is_connected, 5, "connect")
    offer(pub, b"exclusive")
    assert [d for d, _ in receive(sub, 1)] == [b"exclusive"]


def test_image_poll_and_source_identity(aeron, udp_port):
    pub, sub = connected_pair(aeron, f"aeron:udp?endpoint=127.0.0.1:{udp_port}")
    offer(pub, b"via image")
    [image] = sub.images()
    with image:
        assert image.session_id == pub.session_id
        host, port = image.source_address
        assert host == "127.0.0.1" and port > 0
        got: list[bytes] = []
        wait_until(lambda: image.poll(lambda d, h: got.append(d), 10) and got, 5, "image poll")
        assert got == [b"via image"]
        assert image.position > 0
    assert not image.is_live
    with pytest.raises(aeron_py.AeronError, match="released"):
        image.position
