"""Publication revoke (aeron_exclusive_publication_revoke, aeron_image_is_publication_revoked) on a real driver."""
from __future__ import annotations

from typing import Any

import pytest

from aeron_py import AeronError
from aeron_py.errors import PublicationClosedError
from conftest import wait_until

pytestmark = [pytest.mark.timeout(60), pytest.mark.integration]


def _connected(aeron: Any, port: int, stream: int) -> tuple[Any, Any, list[tuple[int, bool]]]:
    gone: list[tuple[int, bool]] = []
    sub = aeron.add_subscription(f"aeron:udp?endpoint=127.0.0.1:{port}", stream,
                                 on_unavailable_image=lambda image: gone.append(
                                     (image.session_id, image.is_publication_revoked)))
    pub = aeron.add_exclusive_publication(f"aeron:udp?endpoint=127.0.0.1:{port}", stream)
    wait_until(lambda: pub.is_connected, 5, "connect")
    pub.offer_until(b"before", timeout=5)
    got: list[bytes] = []
    wait_until(lambda: sub.poll(lambda data, header: got.append(data), 10) >= 0 and got, 5, "delivery")
    return sub, pub, gone


@pytest.mark.parametrize("end", ["revoke", "close", "revoke_on_close"])
def test_a_revoked_publication_ends_its_subscribers_images_and_says_so(aeron: Any, udp_port: int, end: str) -> None:
    sub, pub, gone = _connected(aeron, udp_port, 41)
    [image] = sub.images()
    assert image.is_publication_revoked is False
    if end == "revoke_on_close":
        pub.revoke_on_close()
        assert not pub.is_closed
        pub.close()
    else:
        getattr(pub, end)()
    assert pub.is_closed
    wait_until(lambda: aeron.poll_events() is None and gone, 20, "the image to go")
    assert gone == [(pub.session_id, end != "close")]  # a closed publication's image drains: not revoked


def test_revoke_misuse(aeron: Any, udp_port: int) -> None:
    _, pub, _ = _connected(aeron, udp_port, 42)
    claim = pub.try_claim(8)
    pub.revoke()  # a pending claim is aborted with it
    with pytest.raises(PublicationClosedError, match="the claim was aborted"):
        claim.commit()
    with pytest.raises(AeronError, match="closed"):
        pub.revoke()
    pub.close()  # closing a revoked publication is a no-op
    concurrent = aeron.add_publication("aeron:ipc", 43)
    with pytest.raises(TypeError, match="ExclusivePublication"):
        concurrent.revoke()
    with pytest.raises(TypeError, match="ExclusivePublication"):
        concurrent.revoke_on_close()
    with pytest.raises(AeronError, match="closed"):
        pub.revoke_on_close()
    assert not concurrent.is_closed
