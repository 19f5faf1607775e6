"""Decoding the Archive's recording events (aeron_py.archive.recording_events), without Aeron.

The bytes are written out by hand from the archive codecs' schema (101, little-endian): an
8-byte header (block length, template id, schema id, version), the fixed block, then
RecordingStarted's two length-prefixed ASCII strings. The Java Archive's own messages are
decoded in tests/integration/archive/test_recording_events.py.
"""
from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aeron_py.archive.recording_events import (
    RecordingEventError,
    RecordingProgress,
    RecordingStarted,
    RecordingStopped,
    decode_recording_event,
)

pytestmark = pytest.mark.timeout(60)

INT64 = st.integers(-(2**63), 2**63 - 1)
INT32 = st.integers(-(2**31), 2**31 - 1)
ASCII = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=200)


def header(block_length: int, template_id: int, schema_id: int = 101, version: int = 14) -> bytes:
    return struct.pack("<HHHH", block_length, template_id, schema_id, version)


def var_ascii(text: str) -> bytes:
    return struct.pack("<I", len(text)) + text.encode("ascii")


def started(recording_id: int, start: int, session: int, stream: int, channel: str, source: str,
            extra_block: bytes = b"") -> bytes:
    block = struct.pack("<qqii", recording_id, start, session, stream) + extra_block
    return header(len(block), 101) + block + var_ascii(channel) + var_ascii(source)


def test_known_answer_recording_stopped() -> None:
    wire = bytes.fromhex(
        "1800" "6700" "6500" "0e00"  # block 24, template 103, schema 101, version 14
        "0700000000000000"           # recording id 7
        "0000000000000000"           # start position 0
        "4000010000000000")          # stop position 65600
    assert decode_recording_event(wire) == RecordingStopped(7, 0, 65600)


def test_known_answer_recording_started() -> None:
    wire = bytes.fromhex(
        "1800" "6500" "6500" "0e00"
        "0300000000000000" "0001000000000000"  # recording 3, start position 256
        "efbeadde" "0a000000"                  # session 0xdeadbeef (negative as int32), stream 10
        "09000000") + b"aeron:ipc" + bytes.fromhex("0b000000") + b"aeron:ipc:1"
    assert decode_recording_event(wire) == RecordingStarted(3, 256, -559038737, 10, "aeron:ipc", "aeron:ipc:1")


@given(INT64, INT64, INT64)
def test_progress_and_stopped_round_trip(recording_id: int, start: int, position: int) -> None:
    block = struct.pack("<qqq", recording_id, start, position)
    assert decode_recording_event(header(24, 102) + block) == RecordingProgress(recording_id, start, position)
    assert decode_recording_event(memoryview(header(24, 103) + block)) == RecordingStopped(recording_id, start, position)


@given(INT64, INT64, INT32, INT32, ASCII, ASCII)
def test_started_round_trip(recording_id: int, start: int, session: int, stream: int, channel: str,
                            source: str) -> None:
    event = decode_recording_event(started(recording_id, start, session, stream, channel, source))
    assert event == RecordingStarted(recording_id, start, session, stream, channel, source)


def test_a_longer_block_of_a_newer_schema_is_skipped() -> None:
    wire = started(1, 0, 2, 3, "aeron:udp?endpoint=127.0.0.1:9000", "127.0.0.1:40000", extra_block=b"\x01" * 8)
    assert decode_recording_event(wire) == RecordingStarted(1, 0, 2, 3, "aeron:udp?endpoint=127.0.0.1:9000",
                                                            "127.0.0.1:40000")
    grown = header(32, 102) + struct.pack("<qqq", 1, 2, 3) + b"\xff" * 8
    assert decode_recording_event(grown) == RecordingProgress(1, 2, 3)


@pytest.mark.parametrize(("wire", "says"), [
    (b"", "shorter than its 8-byte header"),
    (header(24, 103)[:7], "shorter than its 8-byte header"),
    (header(24, 103, schema_id=1) + bytes(24), "schema 1"),
    (header(16, 24) + bytes(16), "template 24"),
    (header(24, 102) + bytes(23), "block of 24 bytes in a message of 31"),
    (header(16, 103) + bytes(16), "needs 24"),
    (header(24, 101) + bytes(24), "channel length at byte 32 past the end"),
    (header(24, 101) + bytes(24) + struct.pack("<I", 5) + b"abc", "channel of 5 bytes at byte 36"),
    (header(24, 101) + bytes(24) + var_ascii("ok") + struct.pack("<I", 2**31), "sourceIdentity of 2147483648"),
    (header(24, 101) + bytes(24) + struct.pack("<I", 2) + b"\xc3\xa9" + var_ascii(""), "channel at byte 36 is not ASCII"),
])
def test_bad_messages_say_what_and_where(wire: bytes, says: str) -> None:
    with pytest.raises(RecordingEventError) as bad:
        decode_recording_event(wire)
    assert says in str(bad.value)
    assert isinstance(bad.value, ValueError)


@given(st.binary(max_size=120))
def test_any_bytes_decode_or_raise_the_typed_error(wire: bytes) -> None:
    try:
        decode_recording_event(wire)
    except RecordingEventError:
        pass
