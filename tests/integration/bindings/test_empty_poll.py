"""The empty poll's short cut (cpp/binding/log_peek.hpp): a poll that would read nothing skips
Aeron's poll, and nothing else may change. Each test here fails if the short cut says
"nothing" where Aeron's poll would have done something: read a message after a padding
frame, acknowledge a new image list (which lets the client free a removed image)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from aeron_py import Aeron, AeronError, PollSet
from conftest import wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]

STREAM = 1401
TERM = 64 * 1024
# 1,000 B payloads make 1,056 B frames: 62 fit in a 64 KiB term, and each term ends in a
# padding frame the next poll must step over.
PAYLOAD = 1000
MESSAGES = 400  # about 6.5 terms


def _message(i: int) -> bytes:
    return i.to_bytes(4, "little") * (PAYLOAD // 4)


def _read_in_turn(pub, poll_one) -> list[int]:
    """Sends each message, then polls one fragment at a time until it arrives; the indices seen."""
    seen: list[int] = []
    for i in range(MESSAGES):
        wait_until(lambda: pub.offer(_message(i)) > 0, 5, f"offer of message {i}")
        wait_until(lambda: poll_one(seen) > 0, 5, f"message {i} (after {len(seen)} read)")
        assert poll_one(seen) == 0  # nothing more: the empty poll, with a handler that must not run
    return seen


def _handler(seen: list[int]):
    def handle(data, header) -> None:
        assert len(data) == PAYLOAD and data == _message(int.from_bytes(data[:4], "little"))
        seen.append(int.from_bytes(data[:4], "little"))
    return handle


@pytest.mark.parametrize("how", ["subscription", "zero_copy", "image", "batch"])
def test_every_message_arrives_across_padding_frames_and_term_rotations(aeron, how):
    sub = aeron.add_subscription("aeron:ipc", STREAM)
    pub = aeron.add_exclusive_publication(f"aeron:ipc?term-length={TERM}", STREAM)
    wait_until(lambda: pub.is_connected and sub.is_connected, 5, "connect")
    [image] = sub.images()

    def poll_one(seen: list[int]) -> int:
        if how == "subscription":
            return sub.poll(_handler(seen), 1)
        if how == "zero_copy":
            return sub.poll(lambda view, header: _handler(seen)(bytes(view), header), 1, zero_copy=True)
        if how == "image":
            return image.poll(_handler(seen), 1)
        batch = sub.poll_batch(1)
        for data in batch:
            _handler(seen)(data, None)
        return len(batch)

    assert _read_in_turn(pub, poll_one) == list(range(MESSAGES))
    assert pub.position > 5 * TERM  # the log went round: padding frames and term rotations were crossed
    image.close()


def _mapped(path_part: str) -> int:
    with open("/proc/self/maps") as maps:
        return sum(path_part in line for line in maps)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/maps")
@pytest.mark.parametrize("how", ["subscription", "poll_set"])
def test_a_subscription_that_only_polls_empty_still_lets_a_removed_image_go(driver, how):
    # Aeron's poll is what tells the client conductor the subscription saw the image list
    # without the image; only then may the conductor unmap the image's log. A short cut that
    # skipped that would keep every removed image's log mapped for as long as nothing arrives.
    linger_ns = 50_000_000
    with Aeron(driver=driver, resource_linger_duration_ns=linger_ns) as publisher, \
            Aeron(driver=driver, resource_linger_duration_ns=linger_ns) as subscriber:
        sub = subscriber.add_subscription("aeron:ipc", STREAM + 1)
        pub = publisher.add_exclusive_publication("aeron:ipc", STREAM + 1)
        wait_until(lambda: pub.is_connected and sub.is_connected, 5, "connect")
        log = f"{Path(driver.dir).name}/publications/{pub.registration_id}.logbuffer"
        assert _mapped(log) >= 2  # the publication's mapping, the image's (and the embedded driver's)
        calls: list[bytes] = []
        poll_set = PollSet()
        poll_set.add(sub, "the subscription")

        def poll_empty() -> bool:
            if how == "subscription":
                return sub.poll(lambda data, header: calls.append(data), 10) == 0
            return poll_set.poll() == []

        assert poll_empty()
        # From here on the subscription only polls: image_count, is_connected and the other
        # image-list reads would acknowledge the new list as Aeron's poll does.
        pub.close()
        wait_until(lambda: poll_empty() and _mapped(log) == 0, 10,
                   "the log to be unmapped while the subscription polls empty")
        assert calls == []


def test_misuse_still_raises_when_there_is_nothing_to_read(aeron):
    # The short cut runs after the checks that make a poll refuse. From the handler of a
    # message on one image, polling the subscription's other image, which has nothing to
    # read, still raises; so do polls of a closed image or subscription with nothing to read.
    sub = aeron.add_subscription("aeron:ipc", STREAM + 2)
    busy = aeron.add_exclusive_publication("aeron:ipc", STREAM + 2)
    idle = aeron.add_exclusive_publication("aeron:ipc", STREAM + 2)
    wait_until(lambda: busy.is_connected and idle.is_connected and sub.image_count == 2, 5, "two images")
    idle_image = sub.image_by_session_id(idle.session_id)
    wait_until(lambda: busy.offer(b"only") > 0, 5, "offer")
    outcomes: list[str] = []

    def handler(data, header) -> None:
        for inner in (lambda: idle_image.poll(handler, 10), lambda: sub.poll(handler, 10),
                      lambda: sub.poll_batch(10)):
            try:
                outcomes.append(f"returned {inner()!r}")
            except RuntimeError as exc:
                outcomes.append("re-entrant" if "re-entrant" in str(exc) else str(exc))

    wait_until(lambda: sub.poll(handler, 10) > 0, 5, "the message")
    assert outcomes == ["re-entrant"] * 3
    assert sub.poll(handler, 10) == 0 and idle_image.poll(handler, 10) == 0  # idle again, and usable
    idle_image.close()
    with pytest.raises(AeronError, match="closed"):
        idle_image.poll(handler, 10)
    sub.close()
    with pytest.raises(AeronError, match="closed"):
        sub.poll(handler, 10)
    with pytest.raises(AeronError, match="closed"):
        sub.poll_batch(10)
