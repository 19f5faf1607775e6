"""Image.bounded_poll / bounded_controlled_poll (aeron_image_bounded_controlled_poll): only
messages that end at or before a stream position are delivered, on a real driver."""
from __future__ import annotations

import pytest

from aeron_py import Action, ImageSnapshotError
from conftest import wait_until

pytestmark = [pytest.mark.timeout(30), pytest.mark.integration]

STREAM = 1241
FRAME = 64  # 32 B header + 32 B payload, 32 B aligned


def live_image(aeron, stream: int = STREAM, **callbacks):
    sub = aeron.add_subscription("aeron:ipc", stream, **callbacks)
    pub = aeron.add_exclusive_publication("aeron:ipc", stream)
    wait_until(lambda: pub.is_connected and sub.image_count == 1, 5, "connect")
    [image] = sub.images()
    return pub, sub, image


def send(pub, count: int) -> None:
    for i in range(count):
        wait_until(lambda: pub.offer(bytes([i]) * 32) > 0, 5, "offer")


def test_bounded_poll_stops_at_the_limit_position_and_resumes(aeron):
    pub, _, image = live_image(aeron)
    send(pub, 5)
    start = image.position
    got: list[bytes] = []
    wait_until(lambda: image.bounded_poll(lambda d, h: got.append(d), start + 3 * FRAME, 10) >= 0 and len(got) >= 3,
               5, "three messages")
    assert image.bounded_poll(lambda d, h: got.append(d), start + 3 * FRAME, 10) == 0  # the limit holds
    assert [d[0] for d in got] == [0, 1, 2] and image.position == start + 3 * FRAME
    assert image.bounded_poll(lambda d, h: got.append(d), start + 5 * FRAME) == 2
    assert [d[0] for d in got] == [0, 1, 2, 3, 4]
    assert image.bounded_poll(lambda d, h: got.append(d), 0) == 0  # a limit behind the position: nothing


def test_bounded_controlled_poll_honours_actions_and_zero_copy(aeron):
    pub, _, image = live_image(aeron, STREAM + 1)
    send(pub, 4)
    start = image.position
    seen: list[int] = []

    def abort_second(view, header):
        if len(seen) == 1 and not hasattr(abort_second, "done"):
            abort_second.done = True  # type: ignore[attr-defined]
            return Action.ABORT
        seen.append(view[0])
        return None

    wait_until(lambda: image.bounded_controlled_poll(abort_second, start + 4 * FRAME, 10, zero_copy=True) >= 0
               and len(seen) >= 4, 5, "four messages")
    assert seen == [0, 1, 2, 3]


def test_bounded_poll_misuse_raises_clear_errors(aeron):
    pub, sub, image = live_image(aeron, STREAM + 2)
    with pytest.raises(TypeError, match="handler must be callable"):
        image.bounded_poll(42, 0)
    with pytest.raises(ValueError, match="limit_position must be >= 0"):
        image.bounded_poll(lambda d, h: None, -1)
    with pytest.raises(ValueError, match="fragment_limit"):
        image.bounded_controlled_poll(lambda d, h: None, 0, -5)

    def reenter(data, header):
        image.bounded_poll(lambda d, h: None, 1 << 40)

    send(pub, 1)
    with pytest.raises(RuntimeError, match="already being polled"):
        wait_until(lambda: image.bounded_poll(reenter, 1 << 40) > 0, 5, "the re-entrant poll")
    image.close()
    with pytest.raises(Exception, match="closed"):
        image.bounded_poll(lambda d, h: None, 1 << 40)


def test_a_snapshot_image_cannot_bounded_poll(aeron):
    snapshots = []
    pub, sub, image = live_image(aeron, STREAM + 3, on_available_image=snapshots.append)
    wait_until(lambda: bool(snapshots), 5, "the image callback")  # delivered by the client's event thread
    with pytest.raises(ImageSnapshotError):
        snapshots[0].bounded_poll(lambda d, h: None, 1 << 40)


def test_a_raising_handler_stops_a_bounded_poll_and_loses_nothing(aeron):
    pub, _, image = live_image(aeron, STREAM + 4)
    send(pub, 3)
    got: list[int] = []

    def fail_on_second(data, header):
        got.append(data[0])
        if len(got) == 2:
            raise KeyError("handler failed")

    with pytest.raises(KeyError):
        wait_until(lambda: image.bounded_poll(fail_on_second, 1 << 40) < 0, 5, "the failure")  # raises first
    wait_until(lambda: image.bounded_poll(lambda d, h: got.append(d[0]), 1 << 40) >= 0 and len(got) >= 3, 5,
               "the rest")
    assert got == [0, 1, 2]


def test_closing_the_image_or_client_inside_a_bounded_poll_is_deferred(aeron):
    pub, sub, image = live_image(aeron, STREAM + 5)
    send(pub, 3)
    got: list[int] = []

    def close_image(data, header):
        got.append(data[0])
        image.close()  # deferred: nothing more is delivered, the release runs when the poll returns

    wait_until(lambda: image.bounded_poll(close_image, 1 << 40) > 0, 5, "the first message")
    assert got == [0] and not image.is_live
    with pytest.raises(Exception, match="closed"):
        image.bounded_poll(lambda d, h: None, 1 << 40)
    [again] = sub.images()

    def close_client(data, header):
        got.append(data[0])
        aeron.close()

    wait_until(lambda: again.bounded_controlled_poll(close_client, 1 << 40) > 0, 5, "the next message")
    assert got == [0, 1]
    with pytest.raises(Exception, match="closed"):
        again.bounded_poll(lambda d, h: None, 1 << 40)
