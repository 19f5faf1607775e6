"""aeron_py.crypto (the extension's libsodium primitives): the published known-answer
vectors, and misuse. No driver is involved; the file sits with the bindings tests so that
the sanitizer job (.ci/sanitize) runs the binding code under ASan+UBSan too.

Vectors: X25519, RFC 7748 6.1; ChaCha20-Poly1305, RFC 8439 2.8.2; XChaCha20-Poly1305,
draft-irtf-cfrg-xchacha appendix A (AEAD vector); HKDF-SHA256, RFC 5869 A.1; HMAC-SHA256, RFC 4231 case 2;
SHA-256 of "abc" (FIPS 180-2). The same vectors run in C: tests/c/test_sodium_kat.c.
"""
from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aeron_py import crypto

pytestmark = pytest.mark.timeout(60)

ALICE_SECRET = bytes.fromhex("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")
ALICE_PUBLIC = bytes.fromhex("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a")
BOB_SECRET = bytes.fromhex("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")
BOB_PUBLIC = bytes.fromhex("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f")
SHARED = bytes.fromhex("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742")
BASE_POINT = bytes([9]) + bytes(31)

SUNSCREEN = (b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, "
             b"sunscreen would be it.")
AEAD_KEY = bytes(range(0x80, 0xA0))
AEAD_AD = bytes.fromhex("50515253c0c1c2c3c4c5c6c7")
IETF_NONCE = bytes.fromhex("070000004041424344454647")
IETF_SEALED = bytes.fromhex(
    "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"
    "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"
    "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"
    "3ff4def08e4b7a9de576d26586cec64b6116"
    "1ae10b594f09e26a7e902ecbd0600691")
X_NONCE = bytes.fromhex("404142434445464748494a4b4c4d4e4f5051525354555657")
X_SEALED = bytes.fromhex(
    "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb"
    "731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452"
    "2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"
    "21f9664c97637da9768812f615c68b13b52e"
    "c0875924c1c7987947deafd8780acf49")

Seal = Callable[[bytes, bytes, bytes, bytes], bytes]
# (name, encrypt, decrypt, nonce of the vector, sealed vector)
AEADS = [
    pytest.param(crypto.aead_chacha20poly1305_ietf_encrypt, crypto.aead_chacha20poly1305_ietf_decrypt,
                 IETF_NONCE, IETF_SEALED, id="chacha20poly1305_ietf-rfc8439"),
    pytest.param(crypto.aead_xchacha20poly1305_ietf_encrypt, crypto.aead_xchacha20poly1305_ietf_decrypt,
                 X_NONCE, X_SEALED, id="xchacha20poly1305_ietf-draft"),
]


def test_the_pinned_libsodium_is_linked() -> None:
    assert crypto.libsodium_version() == "1.0.22"
    assert (crypto.KEY_BYTES, crypto.TAG_BYTES) == (32, 16)
    assert (crypto.CHACHA20POLY1305_IETF_NONCE_BYTES, crypto.XCHACHA20POLY1305_IETF_NONCE_BYTES) == (12, 24)
    assert crypto.HKDF_SHA256_MAX_BYTES == 255 * 32


# ---- known answers -----------------------------------------------------------------------
def test_x25519_rfc7748() -> None:
    assert crypto.x25519(ALICE_SECRET, BASE_POINT) == ALICE_PUBLIC
    assert crypto.x25519(BOB_SECRET, BASE_POINT) == BOB_PUBLIC
    assert crypto.x25519(ALICE_SECRET, BOB_PUBLIC) == SHARED
    assert crypto.x25519(BOB_SECRET, ALICE_PUBLIC) == SHARED


@pytest.mark.parametrize("encrypt, decrypt, nonce, sealed", AEADS)
def test_aead_vector(encrypt: Seal, decrypt: Seal, nonce: bytes, sealed: bytes) -> None:
    assert len(SUNSCREEN) == 114
    assert encrypt(AEAD_KEY, nonce, SUNSCREEN, AEAD_AD) == sealed
    assert decrypt(AEAD_KEY, nonce, sealed, AEAD_AD) == SUNSCREEN


def test_hkdf_sha256_rfc5869_a1() -> None:
    prk = crypto.hkdf_sha256_extract(bytes(range(13)), b"\x0b" * 22)
    assert prk == bytes.fromhex("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5")
    assert crypto.hkdf_sha256_expand(prk, bytes(range(0xF0, 0xFA)), 42) == bytes.fromhex(
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")


def test_hmac_sha256_rfc4231_case_2() -> None:
    assert crypto.hmac_sha256(b"Jefe", b"what do ya want for nothing?") == bytes.fromhex(
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")


def test_sha256_abc() -> None:
    assert crypto.sha256(b"abc") == bytes.fromhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")


# ---- keys and random bytes ---------------------------------------------------------------
def test_keypair_is_x25519_and_agrees() -> None:
    public, secret = crypto.x25519_keypair()
    assert len(public) == len(secret) == 32 and crypto.x25519(secret, BASE_POINT) == public
    peer_public, peer_secret = crypto.x25519_keypair()
    assert crypto.x25519(secret, peer_public) == crypto.x25519(peer_secret, public)


def test_random_bytes() -> None:
    assert crypto.random_bytes(0) == b""
    draws = {crypto.random_bytes(32) for _ in range(8)}
    assert len(draws) == 8 and all(len(d) == 32 for d in draws)


# ---- misuse --------------------------------------------------------------------------------
@pytest.mark.parametrize("secret, public, expected", [
    (ALICE_SECRET[:31], BOB_PUBLIC, "secret must be 32 bytes, not 31 bytes"),
    (ALICE_SECRET, BOB_PUBLIC + b"\0", "public must be 32 bytes, not 33 bytes"),
    (b"", BOB_PUBLIC, "secret must be 32 bytes, not 0 bytes"),
])
def test_x25519_wrong_sizes(secret: bytes, public: bytes, expected: str) -> None:
    with pytest.raises(ValueError, match=expected):
        crypto.x25519(secret, public)


@pytest.mark.parametrize("point", [bytes(32), bytes([1]) + bytes(31)], ids=["zero", "one"])
def test_x25519_low_order_public_key(point: bytes) -> None:
    with pytest.raises(ValueError, match="low-order"):
        crypto.x25519(ALICE_SECRET, point)


@pytest.mark.parametrize("encrypt, decrypt, nonce, sealed", AEADS)
def test_aead_wrong_key_and_nonce_sizes(encrypt: Seal, decrypt: Seal, nonce: bytes, sealed: bytes) -> None:
    n = len(nonce)
    for function, text in ((encrypt, SUNSCREEN), (decrypt, sealed)):
        with pytest.raises(ValueError, match="key must be 32 bytes, not 16 bytes"):
            function(AEAD_KEY[:16], nonce, text, AEAD_AD)
        with pytest.raises(ValueError, match=f"nonce must be {n} bytes, not {n - 1} bytes"):
            function(AEAD_KEY, nonce[:-1], text, AEAD_AD)
        with pytest.raises(ValueError, match=f"nonce must be {n} bytes, not {n + 1} bytes"):
            function(AEAD_KEY, nonce + b"\0", text, AEAD_AD)
    with pytest.raises(ValueError, match="ciphertext must be at least the 16-byte tag, not 15 bytes"):
        decrypt(AEAD_KEY, nonce, sealed[:15], AEAD_AD)


def _flipped(data: bytes, index: int) -> bytes:
    out = bytearray(data)
    out[index] ^= 0x01
    return bytes(out)


@pytest.mark.parametrize("encrypt, decrypt, nonce, sealed", AEADS)
def test_aead_tampering_is_refused(encrypt: Seal, decrypt: Seal, nonce: bytes, sealed: bytes) -> None:
    other_key = _flipped(AEAD_KEY, 0)
    cases = [
        (AEAD_KEY, nonce, _flipped(sealed, 0), AEAD_AD),  # ciphertext
        (AEAD_KEY, nonce, _flipped(sealed, len(sealed) - 1), AEAD_AD),  # tag
        (AEAD_KEY, nonce, sealed, _flipped(AEAD_AD, 3)),  # associated data
        (AEAD_KEY, nonce, sealed, b""),  # associated data left out
        (AEAD_KEY, _flipped(nonce, 0), sealed, AEAD_AD),  # nonce
        (other_key, nonce, sealed, AEAD_AD),  # key
        (AEAD_KEY, nonce, sealed[:-1], AEAD_AD),  # truncated
    ]
    for key, n, text, ad in cases:
        with pytest.raises(ValueError, match="authentication failed"):
            decrypt(key, n, text, ad)


def test_hkdf_and_random_bytes_ranges() -> None:
    prk = bytes(32)
    with pytest.raises(ValueError, match="prk must be 32 bytes, not 31 bytes"):
        crypto.hkdf_sha256_expand(prk[:31], b"", 32)
    with pytest.raises(ValueError, match="length must be 0 to 8160 bytes"):
        crypto.hkdf_sha256_expand(prk, b"", 8161)
    with pytest.raises(ValueError, match="length must be 0 to 8160 bytes"):
        crypto.hkdf_sha256_expand(prk, b"", -1)
    assert len(crypto.hkdf_sha256_expand(prk, b"", 8160)) == 8160
    assert crypto.hkdf_sha256_expand(prk, b"", 0) == b""
    with pytest.raises(ValueError, match="n must be 0 or more bytes, not -1"):
        crypto.random_bytes(-1)


def test_bytes_like_inputs_give_the_same_results() -> None:
    key, nonce = bytearray(AEAD_KEY), memoryview(X_NONCE)
    padded = b"xx" + SUNSCREEN + b"yy"
    plaintext = memoryview(padded)[2:-2]  # a contiguous slice
    assert crypto.aead_xchacha20poly1305_ietf_encrypt(key, nonce, plaintext, bytearray(AEAD_AD)) == X_SEALED
    assert crypto.aead_xchacha20poly1305_ietf_decrypt(key, nonce, bytearray(X_SEALED), memoryview(AEAD_AD)) == SUNSCREEN
    assert crypto.x25519(bytearray(ALICE_SECRET), memoryview(BOB_PUBLIC)) == SHARED
    assert crypto.sha256(memoryview(b"xabcx")[1:4]) == crypto.sha256(b"abc")
    assert crypto.hmac_sha256(bytearray(b"Jefe"), memoryview(b"what do ya want for nothing?")) == \
        crypto.hmac_sha256(b"Jefe", b"what do ya want for nothing?")


def test_non_buffers_and_non_contiguous_views_are_refused() -> None:
    with pytest.raises(TypeError):
        crypto.sha256("abc")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        crypto.x25519(None, BOB_PUBLIC)  # type: ignore[arg-type]
    with pytest.raises(BufferError):
        crypto.sha256(memoryview(b"abcdef")[::2])


def test_inputs_are_copied_before_the_work() -> None:
    # the result belongs to the input as it was at the call; the caller's buffer is untouched
    key = bytearray(AEAD_KEY)
    sealed = crypto.aead_chacha20poly1305_ietf_encrypt(key, IETF_NONCE, SUNSCREEN, AEAD_AD)
    assert key == AEAD_KEY and sealed == IETF_SEALED


@settings(max_examples=50, deadline=None)
@given(plaintext=st.binary(max_size=300), ad=st.binary(max_size=40), flip=st.integers(min_value=0))
def test_aead_round_trip_and_any_flipped_bit_fails(plaintext: bytes, ad: bytes, flip: int) -> None:
    key, nonce = crypto.random_bytes(32), crypto.random_bytes(24)
    sealed = crypto.aead_xchacha20poly1305_ietf_encrypt(key, nonce, plaintext, ad)
    assert len(sealed) == len(plaintext) + crypto.TAG_BYTES
    assert crypto.aead_xchacha20poly1305_ietf_decrypt(key, nonce, sealed, ad) == plaintext
    bad = bytearray(sealed)
    bad[flip % len(bad)] ^= 1 << (flip % 8)
    with pytest.raises(ValueError, match="authentication failed"):
        crypto.aead_xchacha20poly1305_ietf_decrypt(key, nonce, bytes(bad), ad)
