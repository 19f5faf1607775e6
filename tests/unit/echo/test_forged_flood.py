"""The forged frames and the forged HELLO flood (aeron_py.echo.load.forged): layouts, the
sequence a forged session sends, and the refusals; real UDP on loopback, no Aeron."""
from __future__ import annotations

import random
import socket
import struct
from collections.abc import Iterator

import pytest

from aeron_py.duologue.core.protocol import STREAM_ID
from aeron_py.echo.load.forged import (DATA_TYPE, SETUP_LENGTH, SETUP_TYPE, ForgedHelloFlood, _ForgedSession,
                                       data_frame, setup_frame)

pytestmark = pytest.mark.timeout(30)
TERM = 64 * 1024


def test_a_setup_frame_has_aerons_layout() -> None:
    frame = setup_frame(11, 22, TERM, initial_term_id=5, active_term_id=9, mtu=1408)
    assert len(frame) == SETUP_LENGTH
    assert struct.unpack("<iBBhiiiiiiii", frame) == (40, 0, 0, SETUP_TYPE, 0, 11, 22, 5, 9, TERM, 1408, 0)


def test_a_data_frame_carries_its_payload_after_a_32_byte_header() -> None:
    frame = data_frame(11, 9, 128, b"HELLO 1F", 22)
    assert struct.unpack("<iBBhiiiiq", frame[:32]) == (40, 0, 0xC0, DATA_TYPE, 128, 11, 22, 9, 0)
    assert frame[32:] == b"HELLO 1F"


@pytest.fixture
def receiver() -> Iterator[socket.socket]:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        s.settimeout(5)
        yield s


def test_a_forged_session_sends_a_setup_then_consecutive_hellos_and_a_setup_at_each_new_term(
        receiver: socket.socket) -> None:
    session = _ForgedSession("127.0.0.2", receiver.getsockname(), random.Random(1), TERM)
    try:
        frames = [(bytes(frame), is_hello) for frame, is_hello in session.frames(1100)]
    finally:
        session.socket.close()
    setups = [i for i, (_, is_hello) in enumerate(frames) if not is_hello]
    hellos = [struct.unpack_from("<iBBhiiii", f) for f, is_hello in frames if is_hello]
    assert {len(f) for f, is_hello in frames if is_hello} == {64}  # a datagram is the aligned frame
    assert len(hellos) == 1100
    per_term = TERM // 64  # "HELLO <up to 8 hex>" + 32 bytes of header: 64 aligned
    assert setups == [0, per_term + 1]
    first_term = hellos[0][7]
    for n, (length, _v, flags, kind, offset, session_id, stream, term_id) in enumerate(hellos):
        assert (kind, flags, stream, session_id) == (DATA_TYPE, 0xC0, STREAM_ID, session.session_id)
        assert 39 <= length <= 46
        assert (term_id, offset) == (first_term + n // per_term, (n % per_term) * 64)
    active = struct.unpack("<iBBhiiiiiiii", frames[setups[1]][0])[8]
    assert active == first_term + 1


def test_a_flood_reaches_the_destination_from_each_source(receiver: socket.socket) -> None:
    with ForgedHelloFlood(*receiver.getsockname(), ["127.0.0.2", "127.0.0.3"], seed=3) as flood:
        report = flood.run(0.01)
    assert report.hellos >= 16 and set(report.per_source) == {"127.0.0.2", "127.0.0.3"}
    seen = set()
    for _ in range(20):  # the first frames of both sources fit in the receive buffer
        data, (source, _port) = receiver.recvfrom(2048)
        seen.add(source)
        if len(seen) == 2:
            break
    assert seen == {"127.0.0.2", "127.0.0.3"}


@pytest.mark.parametrize("term_length", [0, 32 * 1024, 96 * 1024, -1])
def test_a_bad_term_length_is_refused(term_length: int) -> None:
    with pytest.raises(ValueError, match="power of two"):
        ForgedHelloFlood("127.0.0.1", 9, ["127.0.0.2"], term_length=term_length)


def test_no_sources_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one source"):
        ForgedHelloFlood("127.0.0.1", 9, [])


def test_a_source_address_this_host_does_not_have_is_refused() -> None:
    with pytest.raises(OSError):
        ForgedHelloFlood("127.0.0.1", 9, ["127.0.0.2", "192.0.2.1"])
