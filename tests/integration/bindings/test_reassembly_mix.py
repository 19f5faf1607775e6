"""Messages in one frame and messages over many, mixed in one stream: a reassembling poll hands
the first kind straight to the handler and the second through the reassembler
(on_message_fragment in cpp/binding/fragment.cpp). Order, content and a controlled
handler's ABORT must hold across both kinds."""
from __future__ import annotations

import pytest

from aeron_py import Action
from conftest import wait_until

pytestmark = [pytest.mark.timeout(30), pytest.mark.integration]

STREAM = 1411
SMALL = 100
LARGE = 5000  # several frames at the IPC MTU


def _messages() -> list[bytes]:
    out = []
    for i in range(60):
        size = LARGE if i % 3 == 1 else SMALL
        out.append(bytes([i]) * size)
    return out


def _connected(aeron):
    sub = aeron.add_subscription("aeron:ipc", STREAM)
    pub = aeron.add_exclusive_publication("aeron:ipc", STREAM)
    wait_until(lambda: pub.is_connected and sub.is_connected, 5, "connect")
    return pub, sub


def _send_all(pub, messages: list[bytes]) -> None:
    for message in messages:
        wait_until(lambda: pub.offer(message) > 0, 5, "offer")


@pytest.mark.parametrize("zero_copy", [False, True])
def test_one_frame_and_many_frame_messages_arrive_whole_and_in_order(aeron, zero_copy):
    pub, sub = _connected(aeron)
    messages = _messages()
    _send_all(pub, messages)
    seen: list[bytes] = []
    wait_until(lambda: sub.poll(lambda data, header: seen.append(bytes(data)), 7, zero_copy=zero_copy) >= 0
               and len(seen) == len(messages), 5, "every message")
    assert seen == messages


def test_a_controlled_abort_on_a_reassembled_message_redelivers_it_whole(aeron):
    pub, sub = _connected(aeron)
    messages = _messages()
    _send_all(pub, messages)
    seen: list[bytes] = []
    aborted: set[int] = set()

    def handler(data, header):
        if len(data) == LARGE and data[0] not in aborted:
            aborted.add(data[0])  # the first time each large message arrives: not yet
            return Action.ABORT
        seen.append(bytes(data))
        return Action.CONTINUE

    wait_until(lambda: sub.controlled_poll(handler, 10) >= 0 and len(seen) == len(messages), 5, "every message")
    assert seen == messages
    assert len(aborted) == sum(len(m) == LARGE for m in messages)
