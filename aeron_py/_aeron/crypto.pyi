# Generated from the built extension by .ci/stubs (pybind11-stubgen + .ci/stub_fixups.py); do not edit by hand.
"""
libsodium's primitives, linked into the extension: X25519, the IETF ChaCha20-Poly1305 and XChaCha20-Poly1305 AEADs, HMAC-SHA256, SHA-256, HKDF-SHA256 and the system's random bytes. Use them through aeron_py.crypto.
"""
from __future__ import annotations
import typing
import typing_extensions
def aead_chacha20poly1305_ietf_decrypt(key: typing_extensions.Buffer, nonce: typing_extensions.Buffer, ciphertext: typing_extensions.Buffer, ad: typing_extensions.Buffer) -> bytes:
    """
    The plaintext of ciphertext || tag (RFC 8439); ValueError if the tag does not verify.
    """
def aead_chacha20poly1305_ietf_encrypt(key: typing_extensions.Buffer, nonce: typing_extensions.Buffer, plaintext: typing_extensions.Buffer, ad: typing_extensions.Buffer) -> bytes:
    """
    ChaCha20-Poly1305 (RFC 8439): ciphertext || 16-byte tag of plaintext, authenticating ad too. key: 32 bytes; nonce: 12 bytes, never reused with the same key.
    """
def aead_xchacha20poly1305_ietf_decrypt(key: typing_extensions.Buffer, nonce: typing_extensions.Buffer, ciphertext: typing_extensions.Buffer, ad: typing_extensions.Buffer) -> bytes:
    """
    The plaintext of ciphertext || tag (XChaCha20-Poly1305); ValueError if the tag does not verify.
    """
def aead_xchacha20poly1305_ietf_encrypt(key: typing_extensions.Buffer, nonce: typing_extensions.Buffer, plaintext: typing_extensions.Buffer, ad: typing_extensions.Buffer) -> bytes:
    """
    XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha): ciphertext || 16-byte tag of plaintext, authenticating ad too. key: 32 bytes; nonce: 24 bytes (random nonces are safe).
    """
def hkdf_sha256_expand(prk: typing_extensions.Buffer, info: typing_extensions.Buffer, length: typing.SupportsInt | typing.SupportsIndex) -> bytes:
    """
    HKDF-SHA256 expand (RFC 5869): length bytes (0 to 8160) of output keying material from a 32-byte prk and info.
    """
def hkdf_sha256_extract(salt: typing_extensions.Buffer, ikm: typing_extensions.Buffer) -> bytes:
    """
    HKDF-SHA256 extract (RFC 5869): the 32-byte PRK of ikm under salt (any length, may be empty).
    """
def hmac_sha256(key: typing_extensions.Buffer, data: typing_extensions.Buffer) -> bytes:
    """
    HMAC-SHA256 (RFC 2104) of data under a key of any length: 32 bytes.
    """
def libsodium_version() -> str:
    """
    The version of the libsodium linked in (sodium_version_string), e.g. '1.0.22'.
    """
def random_bytes(n: typing.SupportsInt | typing.SupportsIndex) -> bytes:
    """
    n bytes from the system's random source (randombytes_buf).
    """
def sha256(data: typing_extensions.Buffer) -> bytes:
    """
    SHA-256 of data: 32 bytes.
    """
def x25519(secret: typing_extensions.Buffer, public: typing_extensions.Buffer) -> bytes:
    """
    X25519(secret, public): the 32-byte shared secret (crypto_scalarmult_curve25519). ValueError if a key is not 32 bytes, or if the result is all zero (a low-order public key).
    """
def x25519_keypair() -> tuple[bytes, bytes]:
    """
    A new X25519 key pair (public, secret), 32 bytes each, from the system's random bytes (crypto_box_keypair).
    """
CHACHA20POLY1305_IETF_NONCE_BYTES: int = 12
HKDF_SHA256_MAX_BYTES: int = 8160
KEY_BYTES: int = 32
TAG_BYTES: int = 16
XCHACHA20POLY1305_IETF_NONCE_BYTES: int = 24
