"""Gathered offers (aeron_publication_offerv) and padding (aeron_exclusive_publication_append_padding), real driver."""
from __future__ import annotations

from typing import Any

import pytest

from aeron_py import Aeron
from aeron_py.errors import PublicationClosedError
from conftest import wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


def _pair(aeron: Aeron, stream: int, exclusive: bool = True) -> tuple[Any, Any]:
    sub = aeron.add_subscription("aeron:ipc", stream)
    pub = (aeron.add_exclusive_publication if exclusive else aeron.add_publication)("aeron:ipc", stream)
    wait_until(lambda: pub.is_connected, 5, "connect")
    return sub, pub


def _read(sub: Any, count: int) -> list[bytes]:
    got: list[bytes] = []
    wait_until(lambda: sub.poll(lambda data, header: got.append(data), 10) >= 0 and len(got) >= count, 5, "messages")
    return got


@pytest.mark.parametrize("exclusive", [True, False])
def test_offerv_sends_one_message_gathered_from_its_parts(aeron: Aeron, exclusive: bool) -> None:
    sub, pub = _pair(aeron, 81 if exclusive else 82, exclusive)
    assert pub.offerv([b"head:", memoryview(b"body"), bytearray(b"!")]) > 0
    assert pub.offerv([b"x" * 3000, b"y" * 3000]) > 0  # longer than the MTU: fragmented and reassembled
    assert _read(sub, 2) == [b"head:body!", b"x" * 3000 + b"y" * 3000]


def test_padding_is_skipped_by_subscribers(aeron: Aeron) -> None:
    sub, pub = _pair(aeron, 83)
    before = pub.offer(b"one")
    after_padding = pub.append_padding(200)
    assert after_padding >= before + 200
    pub.offer(b"two")
    assert _read(sub, 2) == [b"one", b"two"]


def test_misuse_raises(aeron: Aeron) -> None:
    _, pub = _pair(aeron, 84)
    with pytest.raises(ValueError, match="must not be empty"):
        pub.offerv([])
    with pytest.raises(ValueError, match="at most 1024"):
        pub.offerv([b"x"] * 1025)
    with pytest.raises(TypeError, match="item 1 of parts"):
        pub.offerv([b"ok", 42])
    with pytest.raises(TypeError):
        pub.offerv(b"not a sequence of parts" and 5)
    with pytest.raises(ValueError, match="max_message_length"):
        pub.append_padding(-1)
    with pytest.raises(ValueError, match="max_message_length"):
        pub.append_padding(pub.max_message_length + 1)
    _, concurrent = _pair(aeron, 85, exclusive=False)
    with pytest.raises(TypeError, match="ExclusivePublication"):
        concurrent.append_padding(64)
    pub.close()
    with pytest.raises(PublicationClosedError):
        pub.offerv([b"late"])
    with pytest.raises(PublicationClosedError):
        pub.append_padding(64)
