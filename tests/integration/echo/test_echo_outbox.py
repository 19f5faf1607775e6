"""Outbox: bounded, expired replies dropped in bulk (a real publication nobody reads)."""
from __future__ import annotations

import pytest

from aeron_py.duologue.server.outbox import Outbox

pytestmark = [pytest.mark.timeout(30), pytest.mark.integration]


def test_outbox_is_bounded_and_drops_expired_replies_in_bulk(aeron, udp_port: int) -> None:
    pub = aeron.add_publication(f"aeron:udp?endpoint=127.0.0.1:{udp_port}", 7)  # no subscriber: NOT_CONNECTED
    box = Outbox(cap=100)
    for i in range(250):
        box.push(b"reply %d" % i, deadline=10.0 + i * 0.01)
    assert len(box) == 100 and box.dropped == 150  # the oldest went first
    sent, failure = box.flush(pub, now=0.0)
    assert (sent, failure, len(box)) == (0, None, 100)  # not yet due: kept
    sent, failure = box.flush(pub, now=12.0)  # deadlines 11.5 ... 12.49: those <= 12.0 go at once
    assert sent == 0 and failure is not None and "NOT_CONNECTED" in failure
    assert len(box) == 49 and box.dropped == 201
    assert box.clear() == 49 and box.dropped == 250 and not box


def test_outbox_refuses_a_zero_cap() -> None:
    with pytest.raises(ValueError, match="cap"):
        Outbox(0)
