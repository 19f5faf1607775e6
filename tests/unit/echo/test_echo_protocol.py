"""Wire-format tests for aeron_py.duologue.core.protocol (docs/spec/echo2.md §1, §2)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aeron_py.duologue.core.protocol import (
    ERROR_BAD_MESSAGE_DUOLOGUE,
    STREAM_ID,
    Connect,
    Echoed,
    Ignored,
    Reason,
    Rejected,
    crypt,
    decode,
    format_connect,
    format_echo,
    format_error,
    format_hello,
    java_trim,
    parse_duologue_reply,
    parse_echo,
    parse_hello,
    parse_initial_reply,
    session_from_crypt,
    split_source_identity,
)

pytestmark = pytest.mark.timeout(60)

TERMINATORS = "\n\r\u0085\u2028\u2029"
u32 = st.integers(0, 2**32 - 1)
i32 = st.integers(-(2**31), 2**31 - 1)
ports = st.integers(1, 65535)


def test_constants() -> None:
    assert STREAM_ID == 541388802
    assert [r.value for r in Reason] == [
        "bad message", "server full", "too many connections for IP address"]
    assert ERROR_BAD_MESSAGE_DUOLOGUE == b"ERROR bad message"


def test_guide_worked_example() -> None:
    assert crypt(0x611786D9, 1938340545) == 0x129F3C18
    assert session_from_crypt(0x611786D9, 0x129F3C18) == 1938340545
    assert format_connect(-555798973, 9010, 9011, 0x129F3C18) == b"-555798973 CONNECT 9010 9011 129F3C18"


def test_session_from_crypt_is_signed() -> None:
    assert session_from_crypt(0, 0xFFFFFFFF) == -1
    assert session_from_crypt(0, 0x80000000) == -(2**31)
    assert crypt(0, -1) == 0xFFFFFFFF


@pytest.mark.parametrize("bad", [-1, 2**32, True])
def test_crypt_rejects_out_of_range_key(bad: int) -> None:
    with pytest.raises(ValueError, match="key"):
        crypt(bad, 1)


def test_decode_replaces_invalid_utf8() -> None:
    assert decode(b"a\xffb") == "a\ufffdb"


def test_java_trim_strips_control_chars_only() -> None:
    assert java_trim("\x00\t x y \x1f\x20") == "x y"
    assert java_trim("\u2028x\u00a0") == "\u2028x\u00a0"


# ------------------------------------------------------------------ HELLO


@pytest.mark.parametrize(("message", "key"), [
    (b"HELLO 611786D9", 0x611786D9),
    (b"HELLO 0", 0),
    (b"HELLO FFFFFFFF", 0xFFFFFFFF),
    (b"HELLO 000000001", 1),
])
def test_parse_hello_accepts(message: bytes, key: int) -> None:
    assert parse_hello(message) == key


@pytest.mark.parametrize("message", [
    b"HELLO 611786d9", b"hello 611786D9", b"HELLO  611786D9", b" HELLO 1", b"HELLO 1 ",
    b"HELLO 1\n", b"HELLO\t1", b"HELLO", b"HELLO ", b"HELLO 100000000", b"HELLO 0x1F",
    b"HELO 1", b"ECHO 1", "HELLO ١٢".encode(), "HELLO ＡＢ".encode(), b"HELLO \xff", b"",
])
def test_parse_hello_rejects(message: bytes) -> None:
    assert parse_hello(message) is None


@given(u32)
def test_hello_round_trip(key: int) -> None:
    message = format_hello(key)
    assert re.fullmatch(rb"HELLO [0-9A-F]{1,8}", message)
    assert parse_hello(message) == key


@given(st.integers(2**32, 2**96))
def test_hello_above_32_bits_is_bad(key: int) -> None:
    assert parse_hello(f"HELLO {key:X}".encode()) is None


@given(st.text())
def test_parse_hello_matches_oracle(tail: str) -> None:
    valid = bool(tail) and all(c in "0123456789ABCDEF" for c in tail) and int(tail, 16) < 2**32
    expected = int(tail, 16) if valid else None
    assert parse_hello(("HELLO " + tail).encode()) == expected


@pytest.mark.parametrize("bad", [-1, 2**32, False])
def test_format_hello_rejects_bad_key(bad: int) -> None:
    with pytest.raises(ValueError, match="key"):
        format_hello(bad)


# ------------------------------------------------------- CONNECT / ERROR


def test_format_connect_hex_is_unpadded_uppercase() -> None:
    assert format_connect(7, 1, 65535, 0xA) == b"7 CONNECT 1 65535 A"
    assert format_connect(-1, 9010, 9011, 0xABCDEF01) == b"-1 CONNECT 9010 9011 ABCDEF01"


@pytest.mark.parametrize(("args", "word"), [
    ((2**31, 1, 2, 3), "initial session"), ((1, 0, 2, 3), "data port"),
    ((1, 1, 65536, 3), "control port"), ((1, 1, 2, -1), "crypt"), ((1, 1, 2, 2**32), "crypt"),
])
def test_format_connect_validates(args: tuple[int, int, int, int], word: str) -> None:
    with pytest.raises(ValueError, match=word):
        format_connect(*args)


def test_format_error_every_reason() -> None:
    assert format_error(-5, Reason.BAD_MESSAGE) == b"-5 ERROR bad message"
    assert format_error(5, Reason.SERVER_FULL) == b"5 ERROR server full"
    assert format_error(0, Reason.TOO_MANY_FOR_IP) == b"0 ERROR too many connections for IP address"
    with pytest.raises(ValueError):
        format_error(1, "not a reason")  # type: ignore[arg-type]


# --------------------------------------------------------------- ECHO


@pytest.mark.parametrize(("message", "payload"), [
    (b"ECHO ", b""),
    (b"ECHO hello world", b"hello world"),
    ("ECHO héllo ✓ 𝄞".encode(), "héllo ✓ 𝄞".encode()),
    (b"ECHO a\x00b", b"a\x00b"),
    (b"ECHO a\tb", b"a\tb"),
    (b"ECHO ECHO ", b"ECHO "),
    (b"ECHO \xff\xfe", b"\xff\xfe"),  # invalid UTF-8 still matches (U+FFFD), echoed verbatim
])
def test_parse_echo_accepts(message: bytes, payload: bytes) -> None:
    assert parse_echo(message) == payload


@pytest.mark.parametrize("message", [
    b"ECHO", b"ECHOx", b"echo x", b" ECHO x", b"ECHO a\rb", b"ECHO a\n", b"ECHO \n",
    "ECHO a\u0085".encode(), "ECHO a\u2028b".encode(), "ECHO \u2029".encode(), b"",
    b"HELLO 1",
])
def test_parse_echo_rejects(message: bytes) -> None:
    assert parse_echo(message) is None


@given(st.text())
def test_parse_echo_accepts_exactly_strings_without_java_terminators(text: str) -> None:
    expected = None if any(c in TERMINATORS for c in text) else text.encode()
    assert parse_echo(format_echo(text.encode())) == expected


@given(st.binary(max_size=64))
def test_parse_echo_on_arbitrary_bytes(data: bytes) -> None:
    text = decode(data)
    valid = text.startswith("ECHO ") and not any(c in TERMINATORS for c in text[5:])
    assert parse_echo(data) == (data[5:] if valid else None)


# ------------------------------------------------- client-side parsers


def test_initial_reply_connect_for_us() -> None:
    reply = parse_initial_reply(b"-555798973 CONNECT 9010 9011 129F3C18", -555798973)
    assert reply == Connect(9010, 9011, 0x129F3C18)


def test_initial_reply_is_java_trimmed() -> None:
    assert parse_initial_reply(b"-5  CONNECT 1 2 A \t\x00", -5) == Connect(1, 2, 10)
    assert parse_initial_reply(b"-5 ERROR  server full ", -5) == Rejected(" server full")


@pytest.mark.parametrize(("message", "why"), [
    (b"-6 CONNECT 1 2 A", "another session"),
    (b"+5 CONNECT 1 2 A", "another session"),
    (b"05 CONNECT 1 2 A", "another session"),
    (b" 5 CONNECT 1 2 A", "another session"),
    (b"5", "no session prefix"),
    (b"5 CONNECT 1 2 a", "unrecognised"),
    (b"5 CONNECT 1 2", "unrecognised"),
    (b"5 ERROR", "unrecognised"),
    (b"5 ERROR ", "unrecognised"),
    ("5 ERROR a\u2028b".encode(), "unrecognised"),
    (b"5 HELLO 1", "unrecognised"),
    (b"5 CONNECT 70000 2 A", "port"),
    (b"5 CONNECT 0 2 A", "port"),
    (b"5 CONNECT 1 " + b"9" * 5000 + b" A", "port"),
    (b"5 CONNECT 1 2 1FFFFFFFF", "32 bits"),
])
def test_initial_reply_ignored(message: bytes, why: str) -> None:
    reply = parse_initial_reply(message, 5)
    assert isinstance(reply, Ignored)
    assert why in reply.why
    assert reply.text == decode(message)


@given(i32, ports, ports, u32)
def test_connect_round_trip(sid: int, data_port: int, control_port: int, value: int) -> None:
    message = format_connect(sid, data_port, control_port, value)
    assert parse_initial_reply(message, sid) == Connect(data_port, control_port, value)
    other = sid + 1 if sid < 2**31 - 1 else sid - 1
    assert isinstance(parse_initial_reply(message, other), Ignored)


@given(i32, st.sampled_from(list(Reason)))
def test_error_round_trip(sid: int, reason: Reason) -> None:
    assert parse_initial_reply(format_error(sid, reason), sid) == Rejected(reason.value)


def test_duologue_reply_parser() -> None:
    assert parse_duologue_reply(b"ECHO abc") == Echoed(b"abc")
    assert parse_duologue_reply(b"ECHO ") == Echoed(b"")
    assert parse_duologue_reply(ERROR_BAD_MESSAGE_DUOLOGUE) == Rejected("bad message")
    for other in (b"ECHO", b"ERROR", b"5 ERROR bad message", b"ECHO a\rb", b"nonsense"):
        assert isinstance(parse_duologue_reply(other), Ignored), other


# ------------------------------------------------------------- crypt


@given(u32, i32)
def test_crypt_involution_from_session(key: int, session: int) -> None:
    value = crypt(key, session)
    assert 0 <= value < 2**32
    assert session_from_crypt(key, value) == session


@given(u32, u32)
def test_crypt_involution_from_crypt(key: int, value: int) -> None:
    assert crypt(key, session_from_crypt(key, value)) == value


# ----------------------------------------------------- source identity


@pytest.mark.parametrize(("identity", "expected"), [
    ("127.0.0.1:40123", ("127.0.0.1", 40123)),
    ("[::1]:9000", ("::1", 9000)),
    ("[2001:db8::1]:1", ("2001:db8::1", 1)),
    ("::1:65535", ("::1", 65535)),
    ("[fe80::1%eth0]:5", ("fe80::1%eth0", 5)),
])
def test_split_source_identity(identity: str, expected: tuple[str, int]) -> None:
    assert split_source_identity(identity) == expected


@pytest.mark.parametrize("identity", [
    "127.0.0.1", ":40123", "127.0.0.1:", "127.0.0.1:abc", "127.0.0.1:0", "127.0.0.1:65536",
    "127.0.0.1:" + "9" * 5000, "[::1:9000", "::1]:9000", "[]:9000", "aeron:ipc",
    "example.com:80", "1.2.3.4:+80", "1.2.3.4:٨٠",
])
def test_split_source_identity_rejects(identity: str) -> None:
    with pytest.raises(ValueError) as info:
        split_source_identity(identity)
    assert repr(identity) in str(info.value)
