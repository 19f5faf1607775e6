"""Publication features of the C fast paths and the Python layer (offers, claims, addresses)."""
from __future__ import annotations

import array
import inspect

import pytest

import aeron_py
from aeron_py import _aeron
from conftest import wait_until

pytestmark = [pytest.mark.timeout(30), pytest.mark.integration]


def _drain(sub, count: int) -> list[bytes]:
    got: list[bytes] = []
    wait_until(lambda: sub.poll(lambda d, h: got.append(bytes(d)), 10) >= 0 and len(got) >= count, 5,
               f"{count} messages")
    return got


def test_public_classes_subclass_the_extension_and_offer_is_its_c_method(aeron):
    pub = aeron.add_publication("aeron:ipc", 21)
    ex = aeron.add_exclusive_publication("aeron:ipc", 21)
    assert type(pub) is aeron_py.Publication and isinstance(pub, _aeron.Publication)
    assert type(ex) is aeron_py.ExclusivePublication and isinstance(ex, aeron_py.Publication)
    assert ex.is_exclusive and not pub.is_exclusive
    for name in ("offer", "offer_batch", "try_claim"):
        # the C method itself (no Python frame per call), as the class's own descriptor (the
        # adoption, off under AERON_PY_NO_TRICKS): see test_fast_methods.py
        for cls in (aeron_py.Publication, aeron_py.ExclusivePublication, _aeron.Publication):
            assert type(inspect.getattr_static(cls, name)).__name__ == "method_descriptor"
            if _aeron.TRICKS:
                assert type(vars(cls)[name]).__name__ == "method_descriptor"


def test_offer_accepts_every_contiguous_buffer_and_batches_any_sequence(aeron):
    sub = aeron.add_subscription("aeron:ipc", 22)
    pub = aeron.add_exclusive_publication("aeron:ipc", 22)
    wait_until(lambda: pub.is_connected, 5, "connect")
    assert pub.offer(b"bytes") > 0
    assert pub.offer(bytearray(b"bytearray")) > 0
    assert pub.offer(memoryview(b"xxview")[2:]) > 0
    assert pub.offer(array.array("B", b"array")) > 0
    assert pub.offer(b"") > 0
    assert pub.offer_batch((b"t1", b"t2")) == 2
    assert pub.offer_batch(iter([b"g1"])) == 1
    assert pub.offer_batch([]) == 0
    assert _drain(sub, 8) == [b"bytes", b"bytearray", b"view", b"array", b"", b"t1", b"t2", b"g1"]

def test_claim_reports_its_position_and_state(aeron):
    sub = aeron.add_subscription("aeron:ipc", 23)
    pub = aeron.add_publication("aeron:ipc", 23)
    wait_until(lambda: pub.is_connected, 5, "connect")
    claim = pub.try_claim(6)
    assert isinstance(claim, aeron_py.Claim) and claim.length == 6 and claim.state == "pending"
    assert len(claim.data) == 6 and not claim.data.readonly
    claim.data[:] = b"placed"
    claim.commit()
    assert claim.done and claim.state == "committed" and claim.position == pub.position
    assert "committed" in repr(claim)
    assert _drain(sub, 1) == [b"placed"]


def test_local_addresses_of_a_udp_publication(aeron, udp_port):
    pub = aeron.add_publication(f"aeron:udp?endpoint=127.0.0.1:{udp_port}", 24)
    addresses = wait_until(pub.local_addresses, 5, "the send socket to be bound")
    assert all(isinstance(a, str) and a.startswith("127.0.0.1:") for a in addresses)


def test_cnc_constants_come_from_c_by_field_name_and_stat_adds_units(driver):
    raw = _aeron.Cnc(driver.dir, 1000)
    try:
        assert {"client_liveness_timeout", "start_timestamp", "pid"} <= set(raw.constants())
    finally:
        raw.close()
    with driver.stat() as stat:
        constants = stat.constants()
        assert constants["client_liveness_timeout_ns"] > 0 and constants["start_timestamp_ms"] > 0
        assert "client_liveness_timeout" not in constants
        reader = stat.counters_reader()
        bytes_sent = next(c for c in stat.counters() if c.label == "Bytes sent")
        assert stat.counter_value(bytes_sent.id) >= 0 and reader.label(bytes_sent.id) == "Bytes sent"
