"""Cryptographic primitives from libsodium, linked into aeron_py's extension.

The building blocks of the Noise NK handshake and of the driver's per-packet authenticated
encryption, for Python code and tests: each function is one libsodium call (the module
``aeron_py._aeron.crypto``), re-exported here unchanged. Nothing here is hand-rolled
crypto, and there is no protocol: nonces, key schedules and transcripts are the caller's.

* :func:`x25519_keypair`, :func:`x25519`: X25519 key agreement (RFC 7748);
* :func:`aead_chacha20poly1305_ietf_encrypt` / ``_decrypt``: ChaCha20-Poly1305 (RFC 8439),
  32-byte key, 12-byte nonce that must never repeat under one key;
* :func:`aead_xchacha20poly1305_ietf_encrypt` / ``_decrypt``: XChaCha20-Poly1305
  (draft-irtf-cfrg-xchacha), 24-byte nonce, safe to pick at random;
* :func:`hmac_sha256`, :func:`sha256`, :func:`hkdf_sha256_extract`,
  :func:`hkdf_sha256_expand` (RFC 2104, FIPS 180-4, RFC 5869);
* :func:`random_bytes`: the system's random source.

Arguments are any contiguous bytes-like object (``bytes``, ``bytearray``, ``memoryview``);
each is copied before the work starts (the GIL is released during it), so changing a
``bytearray`` from another thread meanwhile cannot affect a result. A non-contiguous
``memoryview`` raises :class:`BufferError`. Every size is checked: a wrong key, nonce or
PRK size, an HKDF length out of range or a negative count raises :class:`ValueError`
naming the size expected; so does a ciphertext whose tag does not verify (the error says
so, and no plaintext is returned), and an X25519 result that is all zero (a low-order
public key).

>>> from aeron_py import crypto
>>> alice, bob = crypto.x25519_keypair(), crypto.x25519_keypair()
>>> crypto.x25519(alice[1], bob[0]) == crypto.x25519(bob[1], alice[0])
True
>>> key, nonce = crypto.random_bytes(32), crypto.random_bytes(24)
>>> sealed = crypto.aead_xchacha20poly1305_ietf_encrypt(key, nonce, b"hello", b"header")
>>> crypto.aead_xchacha20poly1305_ietf_decrypt(key, nonce, sealed, b"header")
b'hello'
"""
from __future__ import annotations

from ._aeron.crypto import (
    CHACHA20POLY1305_IETF_NONCE_BYTES,
    HKDF_SHA256_MAX_BYTES,
    KEY_BYTES,
    TAG_BYTES,
    XCHACHA20POLY1305_IETF_NONCE_BYTES,
    aead_chacha20poly1305_ietf_decrypt,
    aead_chacha20poly1305_ietf_encrypt,
    aead_xchacha20poly1305_ietf_decrypt,
    aead_xchacha20poly1305_ietf_encrypt,
    hkdf_sha256_expand,
    hkdf_sha256_extract,
    hmac_sha256,
    libsodium_version,
    random_bytes,
    sha256,
    x25519,
    x25519_keypair,
)

__all__ = [
    "CHACHA20POLY1305_IETF_NONCE_BYTES",
    "HKDF_SHA256_MAX_BYTES",
    "KEY_BYTES",
    "TAG_BYTES",
    "XCHACHA20POLY1305_IETF_NONCE_BYTES",
    "aead_chacha20poly1305_ietf_decrypt",
    "aead_chacha20poly1305_ietf_encrypt",
    "aead_xchacha20poly1305_ietf_decrypt",
    "aead_xchacha20poly1305_ietf_encrypt",
    "hkdf_sha256_expand",
    "hkdf_sha256_extract",
    "hmac_sha256",
    "libsodium_version",
    "random_bytes",
    "sha256",
    "x25519",
    "x25519_keypair",
]
