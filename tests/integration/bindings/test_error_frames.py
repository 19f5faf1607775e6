"""Publication error frames (aeron_context_set_publication_error_frame_handler): a receiver's
application rejects an image, the publishing client hears why. Two real drivers, UDP."""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from aeron_py import Aeron, MediaDriver, PublicationErrorFrame
from conftest import wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


@contextmanager
def rejected(port: int, handler: Callable[[PublicationErrorFrame], None] | None) -> Iterator[tuple[Any, Aeron]]:
    """A publication whose only subscriber rejects its image with a reason."""
    with MediaDriver() as pub_driver, MediaDriver() as sub_driver, \
            Aeron(driver=pub_driver, on_publication_error=handler) as publisher, Aeron(driver=sub_driver) as subscriber:
        sub = subscriber.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", 51)
        pub = publisher.add_exclusive_publication(f"aeron:udp?endpoint=127.0.0.1:{port}", 51)
        wait_until(lambda: pub.is_connected and sub.image_count == 1, 10, "connect")
        sub.images()[0].reject("not allowed here: wrong tenant")
        yield pub, publisher


def test_the_publisher_hears_why_its_image_was_rejected(udp_port: int) -> None:
    frames: list[PublicationErrorFrame] = []
    with rejected(udp_port, frames.append) as (pub, publisher):
        wait_until(lambda: publisher.poll_events() is None and frames, 10, "the error frame")
        [frame] = frames[:1]
        assert frame.registration_id == pub.registration_id
        assert (frame.session_id, frame.stream_id) == (pub.session_id, 51)
        assert frame.message == "not allowed here: wrong tenant" and frame.error_code != 0
        assert frame.source == f"127.0.0.1:{udp_port}"


def test_a_handler_that_raises_is_reported_not_fatal(udp_port: int, monkeypatch: pytest.MonkeyPatch) -> None:
    reported: list[Any] = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)

    def broken(frame: PublicationErrorFrame) -> None:
        raise RuntimeError(f"handler failed on {frame.message}")

    with rejected(udp_port, broken) as (pub, publisher):
        wait_until(lambda: publisher.poll_events() is None and reported, 10, "the handler's exception reported")
        assert isinstance(reported[0].exc_value, RuntimeError) and "wrong tenant" in str(reported[0].exc_value)
        assert pub.offer(b"still usable") != 0 and not publisher.is_closed


def test_without_a_handler_error_frames_are_ignored(udp_port: int) -> None:
    with rejected(udp_port, None) as (pub, publisher):
        publisher.poll_events()
        assert not publisher.is_closed and not pub.is_closed
