"""Block polls (aeron_image_block_poll; Subscription.block_poll walks the images): raw frames
in one bytes per block, bounded by block_length_limit, with the poll guard of every poll
(no re-entry, closes deferred, a raising handler loses nothing it did not see)."""
from __future__ import annotations

import struct
from typing import Any

import pytest

from aeron_py import AeronError
from conftest import wait_until

pytestmark = [pytest.mark.timeout(30), pytest.mark.integration]

HEADER = 32  # an Aeron data frame header
STREAM = 1251


def connected(aeron: Any, stream: int = STREAM) -> tuple[Any, Any]:
    sub = aeron.add_subscription("aeron:ipc", stream)
    pub = aeron.add_exclusive_publication("aeron:ipc", stream)
    wait_until(lambda: pub.is_connected and sub.is_connected, 5, "connect")
    return pub, sub


def payloads(block: bytes) -> list[bytes]:
    """The payloads of the data frames in a block (frame_length first, frames 32-byte aligned)."""
    out, offset = [], 0
    while offset < len(block):
        (frame_length,) = struct.unpack_from("<i", block, offset)
        out.append(block[offset + HEADER:offset + frame_length])
        offset += (frame_length + 31) & ~31
    return out


def test_a_block_holds_the_frames_of_several_messages(aeron: Any) -> None:
    pub, sub = connected(aeron)
    for i in range(3):
        pub.offer_until(b"message %d" % i, timeout=5)
    blocks: list[tuple[bytes, int, int]] = []
    wait_until(lambda: sub.block_poll(lambda *block: blocks.append(block), 4096) > 0, 5, "a block")
    [(data, session_id, term_id)] = blocks
    assert payloads(data) == [b"message 0", b"message 1", b"message 2"]
    assert session_id == pub.session_id and term_id == sub.images()[0].initial_term_id
    assert sub.block_poll(lambda *block: blocks.append(block), 4096) == 0  # consumed


def test_the_limit_bounds_a_block_and_the_rest_comes_next(aeron: Any) -> None:
    pub, sub = connected(aeron)
    for i in range(4):
        pub.offer_until(bytes(32), timeout=5)  # 64-byte frames
    seen: list[bytes] = []
    wait_until(lambda: sub.block_poll(lambda data, s, t: seen.append(data), 128) > 0, 5, "a block")
    assert [len(b) for b in seen] == [128]
    with sub.images()[0] as image:
        assert image.block_poll(lambda data, s, t: seen.append(data), 1 << 20) == 128
    assert sum(len(payloads(b)) for b in seen) == 4


def test_a_raising_handler_loses_nothing_it_did_not_see(aeron: Any) -> None:
    pub, sub = connected(aeron)
    pub.offer_until(b"first", timeout=5)
    seen: list[bytes] = []

    def fail(data: bytes, session_id: int, term_id: int) -> None:
        seen.append(data)
        raise KeyError("handler bug")

    with pytest.raises(KeyError, match="handler bug"):
        wait_until(lambda: sub.block_poll(fail, 4096) > 0, 5, "a block")
    pub.offer_until(b"second", timeout=5)
    wait_until(lambda: sub.block_poll(lambda data, s, t: seen.append(data), 4096) > 0, 5, "the next block")
    assert [payloads(b) for b in seen] == [[b"first"], [b"second"]]


def test_misuse_is_refused_with_clear_errors(aeron: Any) -> None:
    pub, sub = connected(aeron)
    with pytest.raises(TypeError, match="handler must be callable"):
        sub.block_poll(42, 4096)
    for limit in (0, -1, 2**31):
        with pytest.raises(ValueError, match="block_length_limit must be between 1 and 2147483647"):
            sub.block_poll(lambda *a: None, limit)
    pub.offer_until(b"x", timeout=5)
    errors: list[BaseException] = []

    def reenter(data: bytes, session_id: int, term_id: int) -> None:
        try:
            sub.poll(lambda d, h: None)
        except RuntimeError as exc:
            errors.append(exc)

    wait_until(lambda: sub.block_poll(reenter, 4096) > 0, 5, "a block")
    assert len(errors) == 1 and "is already being polled" in str(errors[0])
    with pytest.raises(RuntimeError, match="block_poll: this subscription .* is already being polled"):
        pub.offer_until(b"y", timeout=5)
        wait_until(lambda: sub.poll(lambda d, h: sub.block_poll(lambda *a: None, 4096)) > 0, 5, "a message")


def test_closing_from_the_handler_waits_for_the_poll(aeron: Any) -> None:
    pub, sub = connected(aeron)
    pub.offer_until(b"last", timeout=5)
    image = sub.images()[0]

    def close_all(data: bytes, session_id: int, term_id: int) -> None:
        image.close()
        sub.close()

    wait_until(lambda: sub.block_poll(close_all, 4096) > 0, 5, "a block")
    assert sub.is_closed
    with pytest.raises(AeronError):
        sub.block_poll(lambda *a: None, 4096)
    with pytest.raises(AeronError):
        image.block_poll(lambda *a: None, 4096)
