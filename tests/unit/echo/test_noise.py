"""Noise_NK_25519_ChaChaPoly_SHA256 (aeron_py.duologue.core.noise) over libsodium (aeron_py.crypto).

Known answers: the published test vector for this protocol name from the cacophony
project's ``vectors/cacophony.txt`` (the Haskell Noise implementation's vector file; the
noise-c project ships the same vector, identical values, in ``tests/vector/cacophony.txt``).
The hex values below are copied from that file.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from aeron_py import crypto
from aeron_py.duologue.core.noise import (
    MAX_MESSAGE_LEN,
    PROTOCOL_NAME,
    CipherState,
    NkInitiator,
    NkResponder,
    NoiseError,
    x25519_public_key,
)

pytestmark = [pytest.mark.timeout(30)]

H = bytes.fromhex
# cacophony vectors/cacophony.txt, protocol_name "Noise_NK_25519_ChaChaPoly_SHA256"
PROLOGUE = H("4a6f686e2047616c74")  # init_prologue == resp_prologue ("John Galt")
INIT_EPHEMERAL = H("893e28b9dc6ca8d611ab664754b8ceb7bac5117349a4439a6b0569da977c464a")
INIT_REMOTE_STATIC = H("31e0303fd6418d2f8c0e78b91f22e8caed0fbe48656dcf4767e4834f701b8f62")
RESP_STATIC = H("4a3acbfdb163dec651dfa3194dece676d437029c62a408b4c5ea9114246e4893")
RESP_EPHEMERAL = H("bbdb4cdbd309f1a1f2e1456967fe288cadd6f712d65dc7b7793d5e63da6b375b")
HANDSHAKE_HASH = H("2efa38a9c7c93ac98f3a097af25c2f58b9e7673787717bc27e98827118c2c1a5")
MESSAGES = [  # (payload, ciphertext); 0 and 1 are the handshake, then transport, alternating
    (H("4c756477696720766f6e204d69736573"),
     H("ca35def5ae56cec33dc2036731ab14896bc4c75dbb07a61f879f8e3afa4c79448134d00711fdb390a0d178fa008f6d47"
       "d2891e5ea18ae136c3b4c23ac384efb0")),
    (H("4d757272617920526f746862617264"),
     H("95ebc60d2b1fa672c1f46a8aa265ef51bfe38e7ccb39ec5be34069f1448088438ea16e3701bc0d77744f117bee2245"
       "1c9afa7f4cdbbcff00c04a8ee0913c88")),
    (H("462e20412e20486179656b"), H("a62de29ce27cb80245d440d986ed816c156e9d757d7008df2198b0")),
    (H("4361726c204d656e676572"), H("174a35f11c689f4530d7208618e0564ae12f2f50ba8eb4df5382ff")),
    (H("4a65616e2d426170746973746520536179"), H("337e475ebb8eae60f91974c4e455a5af38d1d8628d1803b160d60442874b0a1777")),
    (H("457567656e2042f6686d20766f6e2042617765726b"),
     H("047e80e060b7bb08b53c5a23dfe9920cae135b9d1dc6302fc475003062723700366346ac9d")),
]


def fixed(secret: bytes) -> Callable[[], tuple[bytes, bytes]]:
    """An ephemeral 'generator' that returns the vector's key pair (once)."""
    calls: list[int] = []

    def make() -> tuple[bytes, bytes]:
        assert not calls, "the ephemeral generator was called twice"
        calls.append(1)
        return x25519_public_key(crypto, secret), secret

    return make


def vector_pair() -> tuple[NkInitiator, NkResponder]:
    initiator = NkInitiator(INIT_REMOTE_STATIC, PROLOGUE, crypto=crypto, ephemeral=fixed(INIT_EPHEMERAL))
    responder = NkResponder((x25519_public_key(crypto, RESP_STATIC), RESP_STATIC), PROLOGUE,
                            crypto=crypto, ephemeral=fixed(RESP_EPHEMERAL))
    return initiator, responder


def handshake(initiator: NkInitiator, responder: NkResponder) -> None:
    assert responder.read_message(initiator.write_message(b"")) == b""
    assert initiator.read_message(responder.write_message(b"")) == b""


# ------------------------------------------------------------------ known answers


def test_the_vector_is_consistent_and_the_name_is_one_hash_long() -> None:
    assert x25519_public_key(crypto, RESP_STATIC) == INIT_REMOTE_STATIC
    assert PROTOCOL_NAME == b"Noise_NK_25519_ChaChaPoly_SHA256" and len(PROTOCOL_NAME) == 32


def test_known_answer_handshake_messages_hash_and_transport() -> None:
    initiator, responder = vector_pair()
    (p0, c0), (p1, c1) = MESSAGES[:2]
    assert initiator.write_message(p0) == c0
    assert responder.read_message(c0) == p0
    assert responder.write_message(p1) == c1
    assert initiator.read_message(c1) == p1
    assert initiator.is_complete and responder.is_complete
    assert initiator.handshake_hash == responder.handshake_hash == HANDSHAKE_HASH
    assert initiator.split_keys == responder.split_keys
    i_send, i_receive = initiator.transport()
    r_send, r_receive = responder.transport()
    for index, (payload, ciphertext) in enumerate(MESSAGES[2:]):
        send, receive = (i_send, r_receive) if index % 2 == 0 else (r_send, i_receive)
        assert send.encrypt_with_ad(b"", payload) == ciphertext, f"transport message {index + 2}"
        assert receive.decrypt_with_ad(b"", ciphertext) == payload
    assert (i_send.nonce, r_send.nonce) == (2, 2)


def test_split_key_order_is_initiator_to_responder_first() -> None:
    initiator, responder = vector_pair()
    handshake(initiator, responder)
    k1, k2 = initiator.split_keys
    assert k1 != k2 and len(k1) == len(k2) == 32
    sealed = initiator.transport()[0].encrypt_with_ad(b"", b"x")
    assert CipherState(crypto, k1).decrypt_with_ad(b"", sealed) == b"x"
    with pytest.raises(NoiseError):
        CipherState(crypto, k2).decrypt_with_ad(b"", sealed)


# ------------------------------------------------------------- failures


@pytest.mark.parametrize("message", [0, 1])
def test_tampering_with_any_byte_fails(message: int) -> None:
    initiator, responder = vector_pair()
    first = initiator.write_message(b"")
    if message == 1:
        responder.read_message(first)
        original = responder.write_message(b"")
        reader: NkInitiator | NkResponder = initiator
    else:
        original, reader = first, responder
    for index in range(len(original)):
        for flip in (0x01, 0x80):
            tampered = bytearray(original)
            tampered[index] ^= flip
            with pytest.raises(NoiseError):
                reader.read_message(bytes(tampered))
    # a failed read leaves the reader as it was: the genuine message still works
    assert reader.read_message(original) == b""


def test_a_wrong_server_key_fails_at_the_responder_on_message_1() -> None:
    other_public, _ = crypto.x25519_keypair()
    initiator = NkInitiator(other_public, PROLOGUE, crypto=crypto)
    _, responder = vector_pair()
    with pytest.raises(NoiseError, match="authentication failed"):
        responder.read_message(initiator.write_message(b""))


def test_a_wrong_server_key_fails_at_the_initiator_on_message_2() -> None:
    # the client expects the vector's server; an impostor (another key pair) answers with a
    # message 2 it could make, one of its own handshake
    initiator = NkInitiator(INIT_REMOTE_STATIC, PROLOGUE, crypto=crypto)
    initiator.write_message(b"")
    impostor_keys = crypto.x25519_keypair()
    impostor = NkResponder(impostor_keys, PROLOGUE, crypto=crypto)
    impostor.read_message(NkInitiator(impostor_keys[0], PROLOGUE, crypto=crypto).write_message(b""))
    with pytest.raises(NoiseError, match="authentication failed"):
        initiator.read_message(impostor.write_message(b""))
    assert not initiator.is_complete


def test_a_different_prologue_fails() -> None:
    public, secret = crypto.x25519_keypair()
    initiator = NkInitiator(public, b"aeron_py echo2 secure v1", crypto=crypto)
    responder = NkResponder((public, secret), b"aeron_py echo2 secure v2", crypto=crypto)
    with pytest.raises(NoiseError):
        responder.read_message(initiator.write_message())


@pytest.mark.parametrize("low_order", [bytes(32), bytes([1]) + bytes(31)])
def test_a_low_order_public_key_is_refused(low_order: bytes) -> None:
    _, responder = vector_pair()
    with pytest.raises(NoiseError, match="Diffie-Hellman"):
        responder.read_message(low_order + bytes(16))
    initiator = NkInitiator(low_order, PROLOGUE, crypto=crypto)
    with pytest.raises(NoiseError, match="Diffie-Hellman"):
        initiator.write_message()


def test_short_and_long_messages_are_refused() -> None:
    initiator, responder = vector_pair()
    message = initiator.write_message(b"")
    for short in (b"", message[:32], message[:47]):
        with pytest.raises(NoiseError, match="at least 48"):
            responder.read_message(short)
    with pytest.raises(NoiseError, match="at most 65535"):
        responder.read_message(bytes(MAX_MESSAGE_LEN + 1))
    with pytest.raises(NoiseError, match="longer than 65535"):
        NkInitiator(INIT_REMOTE_STATIC, b"", crypto=crypto).write_message(bytes(MAX_MESSAGE_LEN))


def test_calls_out_of_order_are_refused() -> None:
    initiator, responder = vector_pair()
    with pytest.raises(NoiseError, match="read_message is not allowed"):
        initiator.read_message(bytes(64))
    with pytest.raises(NoiseError, match="write_message is not allowed"):
        responder.write_message()
    with pytest.raises(NoiseError, match="no keys"):
        _ = initiator.split_keys
    with pytest.raises(NoiseError, match="no handshake hash"):
        _ = responder.handshake_hash
    message = initiator.write_message()
    with pytest.raises(NoiseError, match="write_message is not allowed"):
        initiator.write_message()
    responder.read_message(message)
    with pytest.raises(NoiseError, match="read_message is not allowed"):
        responder.read_message(message)
    initiator.read_message(responder.write_message())
    with pytest.raises(NoiseError, match="not allowed"):
        initiator.read_message(message)


def test_a_static_key_pair_that_does_not_match_is_refused() -> None:
    public, _ = crypto.x25519_keypair()
    _, secret = crypto.x25519_keypair()
    with pytest.raises(NoiseError, match="does not belong"):
        NkResponder((public, secret), b"", crypto=crypto)
    with pytest.raises(NoiseError, match="32 bytes"):
        NkInitiator(public[:31], b"", crypto=crypto)


def test_random_handshakes_agree_and_wipe_clears_the_keys() -> None:
    for _ in range(5):
        server = crypto.x25519_keypair()
        initiator = NkInitiator(server[0], b"p", crypto=crypto)
        responder = NkResponder(server, b"p", crypto=crypto)
        handshake(initiator, responder)
        assert initiator.split_keys == responder.split_keys
        assert initiator.handshake_hash == responder.handshake_hash
        initiator.wipe()
        with pytest.raises(NoiseError, match="no keys"):
            _ = initiator.split_keys
        with pytest.raises(NoiseError, match="not allowed"):
            initiator.write_message()


def test_cipher_state_nonce_is_counted_and_exhausts() -> None:
    cipher = CipherState(crypto, bytes(32))
    assert CipherState(crypto).encrypt_with_ad(b"ad", b"plain") == b"plain"  # no key: identity
    cipher.nonce = 2**64 - 2
    cipher.encrypt_with_ad(b"", b"last")
    with pytest.raises(NoiseError, match="exhausted"):
        cipher.encrypt_with_ad(b"", b"one too many")
