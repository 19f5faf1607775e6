"""Noise_NK_25519_ChaChaPoly_SHA256: the handshake of Echo secure mode (docs/spec/echo2.md §5).

The Noise Protocol Framework, revision 34 (noiseprotocol.org/noise.html), restricted to
one pattern::

    NK:
      <- s
      ...
      -> e, es
      <- e, ee

The initiator (the Echo client) knows the responder's (the server's) static public key
in advance; its own key is ephemeral.  After the second message both sides hold the
same two 32-byte keys from ``Split()`` (initiator -> responder first) and the same
handshake hash.

Sans-I/O and without a crypto library of its own: every primitive (X25519,
ChaCha20-Poly1305, HMAC-SHA256, SHA-256, key generation) is a call on the ``crypto``
object the caller passes in - in the application, :mod:`aeron_py.crypto` (libsodium
inside aeron_py's extension), which satisfies :class:`NoiseCrypto`.  The core cannot
import it itself (it would load the Aeron extension; ``tests/unit/test_layers.py``).
This module only composes the primitives as the Noise specification says: HKDF is the
specification's HMAC-based one, the ChaChaPoly nonce is 4 zero bytes and the 64-bit
little-endian counter.

A failed ``read_message`` (bad tag, short message, low-order key) raises
:class:`NoiseError` and leaves the object as it was, so it may be given another
message (a broadcast meant for another client).  Calls out of order raise too.

Secrets (static and ephemeral secret keys, chaining key, cipher keys) are held in
``bytearray`` and zeroed by :meth:`wipe` and after ``Split()``.  That is the limit of
what Python allows: the primitives return immutable ``bytes`` (DH results, HMAC
outputs, the split keys handed to the caller) whose memory is freed, not zeroed, and
the interpreter may have copied any value; do not rely on wiping against an attacker
who can read this process's memory.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Protocol

__all__ = ["BASEPOINT", "DH_LEN", "HASH_LEN", "KeyPairFactory", "MAX_MESSAGE_LEN", "NkInitiator", "NkResponder",
           "NoiseAuthenticationError", "NoiseCrypto", "NoiseError", "PROTOCOL_NAME", "TAG_LEN", "CipherState",
           "x25519_public_key"]

#: The full protocol name; exactly HASHLEN (32) bytes, so it is the initial ``h`` itself.
PROTOCOL_NAME = b"Noise_NK_25519_ChaChaPoly_SHA256"
DH_LEN = 32
HASH_LEN = 32
TAG_LEN = 16
#: Noise messages are at most 65535 bytes (revision 34, section 3).
MAX_MESSAGE_LEN = 65535
#: The X25519 base point (u = 9): ``x25519(secret, BASEPOINT)`` is the public key.
BASEPOINT = bytes([9]) + bytes(31)
_MAX_NONCE = 2**64 - 1  # reserved by the specification: never used to encrypt


class NoiseError(ValueError):
    """A Noise handshake or transport message failed, or the objects were misused."""


class NoiseAuthenticationError(NoiseError):
    """A ciphertext's tag did not verify: wrong key (e.g. the wrong server key), or modified."""


class NoiseCrypto(Protocol):
    """The primitives this module needs; :mod:`aeron_py.crypto` provides them."""

    def x25519_keypair(self) -> tuple[bytes, bytes]: ...  # (public, secret)
    def x25519(self, secret: bytes | bytearray, public: bytes | bytearray, /) -> bytes: ...
    def aead_chacha20poly1305_ietf_encrypt(self, key: bytes | bytearray, nonce: bytes | bytearray,
                                           plaintext: bytes | bytearray, ad: bytes | bytearray, /) -> bytes: ...
    def aead_chacha20poly1305_ietf_decrypt(self, key: bytes | bytearray, nonce: bytes | bytearray,
                                           ciphertext: bytes | bytearray, ad: bytes | bytearray, /) -> bytes: ...
    def hmac_sha256(self, key: bytes | bytearray, data: bytes | bytearray, /) -> bytes: ...
    def sha256(self, data: bytes | bytearray, /) -> bytes: ...


#: Makes an X25519 key pair ``(public, secret)``; injectable so tests can fix ephemerals.
KeyPairFactory = Callable[[], tuple[bytes, bytes | bytearray]]


def x25519_public_key(crypto: NoiseCrypto, secret: bytes | bytearray) -> bytes:
    """The X25519 public key of ``secret`` (scalar multiplication of the base point)."""
    return crypto.x25519(secret, BASEPOINT)


def _wipe(*buffers: bytearray) -> None:
    for buffer in buffers:
        buffer[:] = bytes(len(buffer))


def _dh(crypto: NoiseCrypto, secret: bytes | bytearray, public: bytes | bytearray) -> bytearray:
    try:
        return bytearray(crypto.x25519(secret, public))
    except ValueError as error:
        raise NoiseError(f"Diffie-Hellman failed: {error}") from None


class CipherState:
    """Noise ``CipherState``: a key (or none) and a 64-bit nonce counter."""

    def __init__(self, crypto: NoiseCrypto, key: bytes | bytearray | None = None) -> None:
        self._crypto = crypto
        self._key = bytearray(key) if key is not None else None
        self.nonce = 0

    def copy(self) -> CipherState:
        clone = CipherState(self._crypto, self._key)
        clone.nonce = self.nonce
        return clone

    def has_key(self) -> bool:
        return self._key is not None

    def _nonce12(self) -> bytes:
        if self.nonce >= _MAX_NONCE:
            raise NoiseError("the nonce is exhausted (2**64 - 1 messages): this CipherState is spent")
        return bytes(4) + self.nonce.to_bytes(8, "little")

    def encrypt_with_ad(self, ad: bytes | bytearray, plaintext: bytes | bytearray) -> bytes:
        """``EncryptWithAd``: AEAD under the key and nonce ``n`` (then ``n += 1``), or the plaintext."""
        if self._key is None:
            return bytes(plaintext)
        sealed = self._crypto.aead_chacha20poly1305_ietf_encrypt(self._key, self._nonce12(), plaintext, ad)
        self.nonce += 1
        return sealed

    def decrypt_with_ad(self, ad: bytes | bytearray, ciphertext: bytes | bytearray) -> bytes:
        """``DecryptWithAd``; NoiseError (and no change to ``n``) if the tag does not verify."""
        if self._key is None:
            return bytes(ciphertext)
        try:
            plain = self._crypto.aead_chacha20poly1305_ietf_decrypt(self._key, self._nonce12(), ciphertext, ad)
        except ValueError:
            raise NoiseAuthenticationError("authentication failed: the message was not made with this key "
                             "(modified, forged, or encrypted to someone else)") from None
        self.nonce += 1
        return plain

    def wipe(self) -> None:
        if self._key is not None:
            _wipe(self._key)
            self._key = None


class _SymmetricState:
    """Noise ``SymmetricState``: chaining key ``ck``, handshake hash ``h`` and a CipherState."""

    def __init__(self, crypto: NoiseCrypto, ck: bytes | bytearray, h: bytes, cipher: CipherState) -> None:
        self._crypto = crypto
        self.ck = bytearray(ck)
        self.h = h
        self.cipher = cipher

    @classmethod
    def initialize(cls, crypto: NoiseCrypto, protocol_name: bytes) -> _SymmetricState:
        if len(protocol_name) <= HASH_LEN:
            h = protocol_name + bytes(HASH_LEN - len(protocol_name))
        else:
            h = crypto.sha256(protocol_name)
        return cls(crypto, h, h, CipherState(crypto))

    def copy(self) -> _SymmetricState:
        return _SymmetricState(self._crypto, self.ck, self.h, self.cipher.copy())

    def _hkdf2(self, ikm: bytes | bytearray) -> tuple[bytearray, bytearray]:
        """The specification's ``HKDF(ck, ikm, 2)``: HMAC-SHA256 extract, then two blocks."""
        hmac = self._crypto.hmac_sha256
        temp_key = bytearray(hmac(self.ck, ikm))
        output1 = bytearray(hmac(temp_key, b"\x01"))
        output2 = bytearray(hmac(temp_key, output1 + b"\x02"))
        _wipe(temp_key)
        return output1, output2

    def mix_key(self, ikm: bytes | bytearray) -> None:
        new_ck, temp_k = self._hkdf2(ikm)
        _wipe(self.ck)
        self.ck = new_ck
        self.cipher.wipe()
        self.cipher = CipherState(self._crypto, temp_k)
        _wipe(temp_k)

    def mix_hash(self, data: bytes | bytearray) -> None:
        self.h = self._crypto.sha256(self.h + bytes(data))

    def encrypt_and_hash(self, plaintext: bytes | bytearray) -> bytes:
        ciphertext = self.cipher.encrypt_with_ad(self.h, plaintext)
        self.mix_hash(ciphertext)
        return ciphertext

    def decrypt_and_hash(self, ciphertext: bytes | bytearray) -> bytes:
        plaintext = self.cipher.decrypt_with_ad(self.h, ciphertext)
        self.mix_hash(ciphertext)
        return plaintext

    def split(self) -> tuple[bytes, bytes]:
        """``Split()``: the initiator -> responder key, then the responder -> initiator key."""
        k1, k2 = self._hkdf2(b"")
        keys = (bytes(k1), bytes(k2))
        _wipe(k1, k2)
        self.wipe()
        return keys

    def wipe(self) -> None:
        _wipe(self.ck)
        self.cipher.wipe()


class _Stage(Enum):
    WRITE_1 = "write message 1"
    READ_1 = "read message 1"
    WRITE_2 = "write message 2"
    READ_2 = "read message 2"
    DONE = "done"
    WIPED = "wiped"


class _NkParty:
    """What the initiator and the responder share: the state machine and the results."""

    _role = "party"

    def __init__(self, crypto: NoiseCrypto, prologue: bytes, responder_static_public: bytes,
                 ephemeral: KeyPairFactory | None, first: _Stage) -> None:
        if len(responder_static_public) != DH_LEN:
            raise NoiseError(f"the server's static public key must be {DH_LEN} bytes, "
                             f"not {len(responder_static_public)}")
        self._crypto = crypto
        self._make_ephemeral = ephemeral if ephemeral is not None else crypto.x25519_keypair
        self._symmetric = _SymmetricState.initialize(crypto, PROTOCOL_NAME)
        self._symmetric.mix_hash(prologue)
        self._symmetric.mix_hash(responder_static_public)  # pre-message "<- s"
        self._stage = first
        self._keys: tuple[bytes, bytes] | None = None
        self._re = b""  # the peer's ephemeral public key, once read
        self._handshake_hash: bytes | None = None

    def _expect(self, stage: _Stage, call: str) -> None:
        if self._stage is not stage:
            raise NoiseError(f"{self._role}: {call} is not allowed now (the handshake is at: {self._stage.value})")

    def _new_ephemeral(self) -> tuple[bytes, bytearray]:
        public, secret = self._make_ephemeral()
        if len(public) != DH_LEN or len(secret) != DH_LEN:
            raise NoiseError(f"the ephemeral key generator must return two {DH_LEN}-byte keys")
        return bytes(public), bytearray(secret)

    @staticmethod
    def _split_message(message: bytes | bytearray) -> tuple[bytes, bytes]:
        if len(message) > MAX_MESSAGE_LEN:
            raise NoiseError(f"a Noise message is at most {MAX_MESSAGE_LEN} bytes, not {len(message)}")
        if len(message) < DH_LEN + TAG_LEN:
            raise NoiseError(f"a handshake message is at least {DH_LEN + TAG_LEN} bytes "
                             f"(key and tag), not {len(message)}")
        return bytes(message[:DH_LEN]), bytes(message[DH_LEN:])

    @staticmethod
    def _check_payload(payload: bytes | bytearray) -> None:
        if DH_LEN + len(payload) + TAG_LEN > MAX_MESSAGE_LEN:
            raise NoiseError(f"payload of {len(payload)} bytes makes the message longer than {MAX_MESSAGE_LEN}")

    def _finish(self) -> None:
        self._handshake_hash = self._symmetric.h
        self._keys = self._symmetric.split()
        self._stage = _Stage.DONE

    @property
    def is_complete(self) -> bool:
        return self._stage is _Stage.DONE

    @property
    def split_keys(self) -> tuple[bytes, bytes]:
        """``Split()``'s two keys: (initiator -> responder, responder -> initiator)."""
        if self._keys is None:
            raise NoiseError(f"{self._role}: no keys before the handshake is complete")
        return self._keys

    @property
    def handshake_hash(self) -> bytes:
        """The final ``h``: the same on both sides, a unique name for this handshake."""
        if self._handshake_hash is None:
            raise NoiseError(f"{self._role}: no handshake hash before the handshake is complete")
        return self._handshake_hash

    def transport(self) -> tuple[CipherState, CipherState]:
        """Noise transport CipherStates for this side: (send, receive)."""
        k1, k2 = self.split_keys
        send, receive = (k1, k2) if self._role == "initiator" else (k2, k1)
        return CipherState(self._crypto, send), CipherState(self._crypto, receive)

    def wipe(self) -> None:
        """Zero the secrets still held (see the module's note on what this cannot reach)."""
        self._symmetric.wipe()
        self._wipe_own()
        self._keys = None
        self._stage = _Stage.WIPED

    def _wipe_own(self) -> None:
        raise NotImplementedError

    def _write(self, payload: bytes | bytearray, static_public: bytes | None) -> tuple[bytes, bytearray]:
        """``e`` then one DH (with ``static_public``, else with the peer's ephemeral), then the payload.

        Works on a copy of the symmetric state, committed only on success; returns the
        message and the new ephemeral secret (which the caller owns).
        """
        self._check_payload(payload)
        e_public, e_secret = self._new_ephemeral()
        trial = self._symmetric.copy()
        try:
            trial.mix_hash(e_public)
            shared = _dh(self._crypto, e_secret, static_public if static_public is not None else self._re)
            trial.mix_key(shared)
            _wipe(shared)
            message = e_public + trial.encrypt_and_hash(payload)
        except NoiseError:
            trial.wipe()
            _wipe(e_secret)
            raise
        self._commit(trial)
        return message, e_secret

    def _read(self, message: bytes | bytearray, secret: bytearray) -> bytes:
        """The peer's ``e``, one DH of ``secret`` with it, then the payload (all or nothing)."""
        re_public, sealed = self._split_message(message)
        trial = self._symmetric.copy()
        try:
            trial.mix_hash(re_public)
            shared = _dh(self._crypto, secret, re_public)
            trial.mix_key(shared)
            _wipe(shared)
            payload = trial.decrypt_and_hash(sealed)
        except NoiseError:
            trial.wipe()
            raise
        self._commit(trial)
        self._re = re_public
        return payload

    def _commit(self, trial: _SymmetricState) -> None:
        self._symmetric.wipe()
        self._symmetric = trial


class NkInitiator(_NkParty):
    """The client's side: writes message 1 (``-> e, es``), reads message 2 (``<- e, ee``)."""

    _role = "initiator"

    def __init__(self, server_static_public: bytes, prologue: bytes, *, crypto: NoiseCrypto,
                 ephemeral: KeyPairFactory | None = None) -> None:
        super().__init__(crypto, prologue, bytes(server_static_public), ephemeral, _Stage.WRITE_1)
        self._rs = bytes(server_static_public)
        self._e_secret = bytearray()

    def write_message(self, payload: bytes | bytearray = b"") -> bytes:
        """Message 1: ``e``, ``es``, then the payload encrypted (and authenticated)."""
        self._expect(_Stage.WRITE_1, "write_message")
        message, self._e_secret = self._write(payload, self._rs)
        self._stage = _Stage.READ_2
        return message

    def read_message(self, message: bytes | bytearray) -> bytes:
        """Message 2: the server's ``e``, ``ee``, then the payload; returns the payload."""
        self._expect(_Stage.READ_2, "read_message")
        payload = self._read(message, self._e_secret)
        _wipe(self._e_secret)
        self._finish()
        return payload

    def _wipe_own(self) -> None:
        _wipe(self._e_secret)


class NkResponder(_NkParty):
    """The server's side: reads message 1, writes message 2."""

    _role = "responder"

    def __init__(self, static_keypair: tuple[bytes, bytes | bytearray], prologue: bytes, *,
                 crypto: NoiseCrypto, ephemeral: KeyPairFactory | None = None) -> None:
        public, secret = static_keypair
        if len(secret) != DH_LEN:
            raise NoiseError(f"the server's static secret key must be {DH_LEN} bytes, not {len(secret)}")
        if x25519_public_key(crypto, secret) != bytes(public):
            raise NoiseError("the server's static public key does not belong to its secret key")
        super().__init__(crypto, prologue, bytes(public), ephemeral, _Stage.READ_1)
        self._s_secret = bytearray(secret)

    def read_message(self, message: bytes | bytearray) -> bytes:
        """Message 1: the client's ``e``, ``es``, then the payload; returns the payload."""
        self._expect(_Stage.READ_1, "read_message")
        payload = self._read(message, self._s_secret)
        self._stage = _Stage.WRITE_2
        return payload

    def write_message(self, payload: bytes | bytearray = b"") -> bytes:
        """Message 2: ``e``, ``ee``, then the payload encrypted; completes the handshake."""
        self._expect(_Stage.WRITE_2, "write_message")
        message, e_secret = self._write(payload, None)
        _wipe(e_secret, self._s_secret)
        self._finish()
        return message

    def _wipe_own(self) -> None:
        _wipe(self._s_secret)
