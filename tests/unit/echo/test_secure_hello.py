"""Echo secure mode's messages and handshakes (docs/spec/echo2.md §5), without Aeron.

aeron_py.duologue.core.secure_hello (wire format) and .secure_handshake (the two sides), with
libsodium's primitives from aeron_py.crypto.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aeron_py import crypto
from aeron_py.duologue.core.noise import NkInitiator, NoiseError
from aeron_py.duologue.core.protocol import Ignored, Rejected, format_hello, parse_hello, parse_initial_reply
from aeron_py.duologue.core.secure_handshake import (
    Refused,
    SecureClientHandshake,
    SecureConnected,
    SecureServerHandshake,
    read_server_key_reply,
)
from aeron_py.duologue.core.secure_hello import (
    MAX_SECURE_MESSAGE,
    PROLOGUE,
    BadHello,
    ConnectSecure,
    HelloKey,
    HelloSecure,
    PlainHello,
    SecureConnectPayload,
    ServerKey,
    b64url_decode,
    b64url_encode,
    format_connect_payload,
    format_connect_secure,
    format_hello_key,
    format_hello_secure,
    format_server_key,
    parse_connect_payload,
    parse_secure_hello,
    parse_secure_reply,
)

pytestmark = [pytest.mark.timeout(30)]

SID = -555798973
PAYLOAD = SecureConnectPayload(9010, 9011, 1938340545, -7)


@pytest.fixture
def server_keys() -> tuple[bytes, bytes]:
    return crypto.x25519_keypair()


def run_handshake(server_keys: tuple[bytes, bytes]) -> tuple[SecureConnected, object]:
    client = SecureClientHandshake(server_keys[0], crypto=crypto)
    server = SecureServerHandshake(SID, server_keys, crypto=crypto)
    assert server.receive_hello(client.hello()) is None
    broadcast, server_keys_out = server.connect(PAYLOAD)
    connected = client.receive(broadcast, SID)
    assert isinstance(connected, SecureConnected)
    return connected, server_keys_out


# ------------------------------------------------------------------ base64url


@given(st.binary(max_size=100))
def test_b64url_round_trip_without_padding(data: bytes) -> None:
    text = b64url_encode(data)
    assert "=" not in text and "+" not in text and "/" not in text
    assert b64url_decode(text) == data


@pytest.mark.parametrize("text", ["AAA=", "A", "AB+/", "AB C", "AB\n", "AÉ", "AB", "AAB"])
def test_b64url_refuses_padding_other_alphabets_and_stray_bits(text: str) -> None:
    # "AB" and "AAB" have non-zero unused bits: not what an encoder produces
    assert b64url_decode(text) is None


# -------------------------------------------------------- client -> server


def test_hello_secure_format_and_parse() -> None:
    message1 = bytes(range(48))
    data = format_hello_secure(message1)
    assert data == b"HELLO-SECURE " + b64url_encode(message1).encode()
    assert len(data) == 13 + 64
    assert parse_secure_hello(data) == HelloSecure(message1)
    assert parse_secure_hello(b"HELLO-KEY") == HelloKey()
    assert parse_secure_hello(format_hello(0x611786D9)) == PlainHello(0x611786D9)
    assert format_hello_key() == b"HELLO-KEY"


@pytest.mark.parametrize("data", [
    b"", b"HELLO", b"HELLO-KEY ", b" HELLO-KEY", b"hello-key", b"HELLO-SECURE", b"HELLO-SECURE ",
    b"HELLO-SECURE  " + b"A" * 64, b"HELLO-SECURE " + b"A" * 64 + b" ",  # no trimming
    b"HELLO-SECURE " + b"A" * 63 + b"=",  # padding
    b"HELLO-SECURE " + b"A" * 60,  # 45 bytes, not 48
    b"HELLO-SECURE " + b"A" * 68,  # 51 bytes: a payload, which v1 does not have
    b"HELLO-SECURE " + b"A" * (MAX_SECURE_MESSAGE * 2),  # over-long
    b"HELLO-SECURE " + "Ä".encode() * 32,
])
def test_bad_hellos(data: bytes) -> None:
    assert isinstance(parse_secure_hello(data), BadHello)


def test_a_plain_server_answers_hello_secure_as_a_bad_message() -> None:
    # the rule a secure client relies on to say "not in secure mode" (spec §1: whole match)
    assert parse_hello(format_hello_secure(bytes(48))) is None
    assert parse_hello(format_hello_key()) is None


# -------------------------------------------------------- server -> clients


def test_connect_payload_round_trip_and_bounds() -> None:
    assert format_connect_payload(PAYLOAD) == b"CONNECT 9010 9011 1938340545 -7"
    assert parse_connect_payload(format_connect_payload(PAYLOAD)) == PAYLOAD
    extreme = SecureConnectPayload(65535, 1, -(2**31), 2**31 - 1)
    assert parse_connect_payload(format_connect_payload(extreme)) == extreme
    for bad in [b"CONNECT 0 1 2 3", b"CONNECT 65536 1 2 3", b"CONNECT 1 2 3 3", b"CONNECT 1 2 -0 3",
                b"CONNECT 01 2 3 4", b"CONNECT 1 2 2147483648 3", b"CONNECT 1 2 3 4 ", b"CONNECT 1 2 3"]:
        assert parse_connect_payload(bad) is None, bad
    with pytest.raises(ValueError, match="differ"):
        SecureConnectPayload(1, 2, 5, 5)


def test_client_parses_its_broadcasts_only() -> None:
    message2 = bytes(range(80))
    connect = format_connect_secure(SID, message2)
    assert connect.startswith(f"{SID} CONNECT-SECURE ".encode())
    assert parse_secure_reply(connect, SID) == ConnectSecure(message2)
    assert isinstance(parse_secure_reply(connect, SID + 1), Ignored)
    key = format_server_key(SID, bytes(range(32)))
    assert parse_secure_reply(key, SID) == ServerKey(bytes(range(32)))
    assert parse_secure_reply(f"{SID} ERROR server full".encode(), SID) == Rejected("server full")
    for bad in [f"{SID} CONNECT-SECURE {b64url_encode(bytes(47))}", f"{SID} CONNECT-SECURE {b64url_encode(bytes(200))}",
                f"{SID} CONNECT-SECURE AAA=", f"{SID} SERVER-KEY {b64url_encode(bytes(31))}", f"{SID} CONNECT 1 2 3",
                f"{SID} CONNECT-SECURE " + "A" * MAX_SECURE_MESSAGE]:
        assert isinstance(parse_secure_reply(bad.encode(), SID), Ignored), bad


# ------------------------------------------------------------ the handshake


def test_handshake_gives_both_sides_the_same_keys_mapped_to_sessions(server_keys: tuple[bytes, bytes]) -> None:
    connected, server_side = run_handshake(server_keys)
    assert (connected.data_port, connected.control_port) == (9010, 9011)
    assert connected.keys == server_side
    keys = connected.keys
    assert (keys.client_session, keys.server_session) == (-7, 1938340545)
    assert keys.by_session() == {-7: keys.client_send_key, 1938340545: keys.server_send_key}
    assert keys.client_send_key != keys.server_send_key and len(keys.client_send_key) == 32 and len(keys.handshake_hash) == 32
    assert "client_send_key" not in repr(keys).split("client_session")[0] and keys.client_send_key.hex() not in repr(keys)


def test_split_order_client_publication_gets_the_first_key(server_keys: tuple[bytes, bytes]) -> None:
    fixed_e = crypto.x25519_keypair()
    client = SecureClientHandshake(server_keys[0], crypto=crypto, ephemeral=lambda: fixed_e)
    twin = NkInitiator(server_keys[0], PROLOGUE, crypto=crypto, ephemeral=lambda: fixed_e)
    server = SecureServerHandshake(SID, server_keys, crypto=crypto)
    hello = client.hello()
    assert hello == format_hello_secure(twin.write_message(b""))
    assert server.receive_hello(hello) is None
    broadcast, keys = server.connect(PAYLOAD)
    twin.read_message(b64url_decode(broadcast.decode().split(" ")[2]) or b"")
    assert keys.client_send_key == twin.split_keys[0] and keys.server_send_key == twin.split_keys[1]


def test_server_answers_key_requests_plain_hellos_and_bad_messages(server_keys: tuple[bytes, bytes]) -> None:
    def answer(data: bytes) -> bytes:
        reply = SecureServerHandshake(SID, server_keys, crypto=crypto).receive_hello(data)
        assert reply is not None
        return reply.message
    assert answer(b"HELLO-KEY") == f"{SID} SERVER-KEY {b64url_encode(server_keys[0])}".encode()
    assert answer(b"HELLO 611786D9") == f"{SID} ERROR secure mode required".encode()
    assert answer(b"HELLO-SECURE !") == f"{SID} ERROR bad message".encode()
    low_order = format_hello_secure(bytes(48))
    assert answer(low_order) == f"{SID} ERROR bad message".encode()


def test_a_client_with_the_wrong_server_key_is_told_so(server_keys: tuple[bytes, bytes]) -> None:
    client = SecureClientHandshake(crypto.x25519_keypair()[0], crypto=crypto)
    server = SecureServerHandshake(SID, server_keys, crypto=crypto)
    reply = server.receive_hello(client.hello())
    assert reply is not None and reply.message == f"{SID} ERROR wrong server key".encode()
    refused = client.receive(reply.message, SID)
    assert isinstance(refused, Refused) and "not its key" in refused.explanation
    with pytest.raises(NoiseError, match="after receive_hello"):
        SecureServerHandshake(SID, server_keys, crypto=crypto).connect(PAYLOAD)


def test_a_secure_client_says_a_plain_server_is_not_in_secure_mode(server_keys: tuple[bytes, bytes]) -> None:
    client = SecureClientHandshake(server_keys[0], crypto=crypto)
    client.hello()
    refused = client.receive(f"{SID} ERROR bad message".encode(), SID)
    assert isinstance(refused, Refused) and refused.reason == "bad message"
    assert "not in secure mode" in refused.explanation
    assert "not in secure mode" in str(read_server_key_reply(f"{SID} ERROR bad message".encode(), SID))


def test_a_plain_client_reads_secure_mode_required_as_a_rejection() -> None:
    assert parse_initial_reply(f"{SID} ERROR secure mode required".encode(), SID) == Rejected("secure mode required")


def test_a_connect_secure_for_another_handshake_is_ignored_then_ours_works(server_keys: tuple[bytes, bytes]) -> None:
    client = SecureClientHandshake(server_keys[0], crypto=crypto)
    other = SecureClientHandshake(server_keys[0], crypto=crypto)
    server_for_other = SecureServerHandshake(SID, server_keys, crypto=crypto)  # same initial session id
    assert server_for_other.receive_hello(other.hello()) is None
    server = SecureServerHandshake(SID, server_keys, crypto=crypto)
    assert server.receive_hello(client.hello()) is None
    others_broadcast, _ = server_for_other.connect(PAYLOAD)
    assert isinstance(client.receive(others_broadcast, SID), Ignored)
    ours, _ = server.connect(PAYLOAD)
    assert isinstance(client.receive(ours, SID), SecureConnected)
    with pytest.raises(NoiseError, match="before it is connected"):
        client.receive(ours, SID)


def test_tampered_connect_secure_never_connects(server_keys: tuple[bytes, bytes]) -> None:
    client = SecureClientHandshake(server_keys[0], crypto=crypto)
    server = SecureServerHandshake(SID, server_keys, crypto=crypto)
    assert server.receive_hello(client.hello()) is None
    broadcast, _ = server.connect(PAYLOAD)
    message2 = b64url_decode(broadcast.decode().split(" ")[2])
    assert message2 is not None
    for index in range(len(message2)):
        tampered = bytearray(message2)
        tampered[index] ^= 0x01
        assert isinstance(client.receive(format_connect_secure(SID, bytes(tampered)), SID), Ignored)
    assert isinstance(client.receive(broadcast, SID), SecureConnected)


def test_tofu_key_request(server_keys: tuple[bytes, bytes]) -> None:
    reply = SecureServerHandshake(SID, server_keys, crypto=crypto).receive_hello(format_hello_key())
    assert reply is not None
    assert read_server_key_reply(reply.message, SID) == ServerKey(server_keys[0])
    assert isinstance(read_server_key_reply(reply.message, SID + 1), Ignored)


def test_misuse_is_refused(server_keys: tuple[bytes, bytes]) -> None:
    client = SecureClientHandshake(server_keys[0], crypto=crypto)
    with pytest.raises(NoiseError, match="answer to hello"):
        client.receive(b"x", SID)
    client.hello()
    with pytest.raises(NoiseError, match="not allowed"):
        client.hello()
    server = SecureServerHandshake(SID, server_keys, crypto=crypto)
    assert server.receive_hello(SecureClientHandshake(server_keys[0], crypto=crypto).hello()) is None
    with pytest.raises(NoiseError, match="takes one HELLO-SECURE"):
        server.receive_hello(SecureClientHandshake(server_keys[0], crypto=crypto).hello())
    server.wipe()
    with pytest.raises(NoiseError):
        server.connect(PAYLOAD)
