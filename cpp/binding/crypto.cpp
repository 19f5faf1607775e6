// aeron_py._aeron.crypto: libsodium's primitives (vendor/libsodium, linked statically with
// hidden symbols), for the Noise NK handshake and for testing the driver's secure transport
// from Python. Binding code only: each function is one libsodium call, no protocol.
//
// Inputs are any C-contiguous bytes-like object (bytes, bytearray, memoryview, ...), copied
// into memory this code owns, so the GIL is released around libsodium's work without anyone
// able to change an input meanwhile; the copies are wiped (sodium_memzero) when they go, as
// any of them may be a key. Outputs are new bytes objects written before anyone else can see
// them. Every size is checked: a ValueError names the size expected.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <sodium.h>

#include "gil.hpp"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace py = pybind11;

namespace aeron_py {

namespace {

constexpr size_t KEY_BYTES = 32;  // X25519 keys and results, the AEAD keys, HKDF's PRK, SHA-256
constexpr size_t TAG_BYTES = crypto_aead_chacha20poly1305_ietf_ABYTES;
static_assert(TAG_BYTES == crypto_aead_xchacha20poly1305_ietf_ABYTES, "both AEADs have 16-byte tags");
static_assert(crypto_scalarmult_curve25519_BYTES == KEY_BYTES && crypto_scalarmult_curve25519_SCALARBYTES == KEY_BYTES &&
                  crypto_aead_chacha20poly1305_ietf_KEYBYTES == KEY_BYTES &&
                  crypto_aead_xchacha20poly1305_ietf_KEYBYTES == KEY_BYTES &&
                  crypto_kdf_hkdf_sha256_KEYBYTES == KEY_BYTES && crypto_hash_sha256_BYTES == KEY_BYTES &&
                  crypto_auth_hmacsha256_BYTES == KEY_BYTES,
              "every key, PRK and digest here is 32 bytes");

// A copy of a bytes-like argument, wiped when it goes.
class Copy {
public:
    explicit Copy(const py::buffer &source) {
        Py_buffer view;
        if (PyObject_GetBuffer(source.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
        const auto *begin = static_cast<const unsigned char *>(view.buf);
        try {
            bytes_.assign(begin, begin + view.len);
        } catch (...) {
            PyBuffer_Release(&view);
            throw;
        }
        PyBuffer_Release(&view);
    }
    ~Copy() {
        if (!bytes_.empty()) sodium_memzero(bytes_.data(), bytes_.size());
    }
    Copy(const Copy &) = delete;
    Copy &operator=(const Copy &) = delete;

    // Never null, even when empty: libsodium may pass it on to memcpy.
    const unsigned char *data() const { return bytes_.empty() ? &empty_ : bytes_.data(); }
    size_t size() const { return bytes_.size(); }

private:
    static constexpr unsigned char empty_ = 0;
    std::vector<unsigned char> bytes_;
};

[[noreturn]] void wrong_size(const char *function, const char *what, const std::string &expected, size_t got) {
    throw py::value_error(std::string(function) + ": " + what + " must be " + expected + ", not " +
                          std::to_string(got) + " bytes");
}

void expect_size(const Copy &value, size_t size, const char *function, const char *what) {
    if (value.size() != size) wrong_size(function, what, std::to_string(size) + " bytes", value.size());
}

// A new bytes object of `size` bytes, to be written (through data()) before it is shared.
class Output {
public:
    explicit Output(size_t size)
        : bytes_(py::reinterpret_steal<py::bytes>(PyBytes_FromStringAndSize(nullptr, static_cast<Py_ssize_t>(size)))) {
        if (!bytes_) throw py::error_already_set();
    }
    unsigned char *data() { return reinterpret_cast<unsigned char *>(PyBytes_AS_STRING(bytes_.ptr())); }
    py::bytes take() { return std::move(bytes_); }

private:
    py::bytes bytes_;
};

std::pair<py::bytes, py::bytes> x25519_keypair() {
    Output public_key(KEY_BYTES), secret_key(KEY_BYTES);
    {
        ReleasedGil released;
        crypto_box_keypair(public_key.data(), secret_key.data());  // crypto_box's keys are X25519's
    }
    return {public_key.take(), secret_key.take()};
}

py::bytes x25519(const py::buffer &secret_key, const py::buffer &public_key) {
    const Copy secret(secret_key), peer(public_key);
    expect_size(secret, KEY_BYTES, "x25519", "secret");
    expect_size(peer, KEY_BYTES, "x25519", "public");
    Output shared(KEY_BYTES);
    int rc;
    {
        ReleasedGil released;
        rc = crypto_scalarmult_curve25519(shared.data(), secret.data(), peer.data());
    }
    if (rc != 0)
        throw py::value_error("x25519: the shared secret is all zero: the public key is a low-order point, "
                              "not a usable X25519 public key");
    return shared.take();
}

// One of libsodium's two IETF ChaCha20-Poly1305 AEADs: same signatures, different nonce size.
struct Aead {
    const char *encrypt_name;
    const char *decrypt_name;
    size_t nonce_bytes;
    size_t message_max;
    int (*encrypt)(unsigned char *, unsigned long long *, const unsigned char *, unsigned long long,
                   const unsigned char *, unsigned long long, const unsigned char *, const unsigned char *,
                   const unsigned char *);
    int (*decrypt)(unsigned char *, unsigned long long *, unsigned char *, const unsigned char *, unsigned long long,
                   const unsigned char *, unsigned long long, const unsigned char *, const unsigned char *);
};

const Aead CHACHA20POLY1305_IETF{
    "aead_chacha20poly1305_ietf_encrypt", "aead_chacha20poly1305_ietf_decrypt",
    crypto_aead_chacha20poly1305_ietf_NPUBBYTES, crypto_aead_chacha20poly1305_ietf_MESSAGEBYTES_MAX,
    crypto_aead_chacha20poly1305_ietf_encrypt, crypto_aead_chacha20poly1305_ietf_decrypt};
const Aead XCHACHA20POLY1305_IETF{
    "aead_xchacha20poly1305_ietf_encrypt", "aead_xchacha20poly1305_ietf_decrypt",
    crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, crypto_aead_xchacha20poly1305_ietf_MESSAGEBYTES_MAX,
    crypto_aead_xchacha20poly1305_ietf_encrypt, crypto_aead_xchacha20poly1305_ietf_decrypt};

py::bytes aead_encrypt(const Aead &aead, const py::buffer &key_, const py::buffer &nonce_,
                       const py::buffer &plaintext_, const py::buffer &ad_) {
    const Copy key(key_), nonce(nonce_), plaintext(plaintext_), ad(ad_);
    expect_size(key, KEY_BYTES, aead.encrypt_name, "key");
    expect_size(nonce, aead.nonce_bytes, aead.encrypt_name, "nonce");
    if (plaintext.size() > aead.message_max)
        wrong_size(aead.encrypt_name, "plaintext", "at most " + std::to_string(aead.message_max) + " bytes",
                   plaintext.size());
    Output sealed(plaintext.size() + TAG_BYTES);
    {
        ReleasedGil released;
        aead.encrypt(sealed.data(), nullptr, plaintext.data(), plaintext.size(), ad.data(), ad.size(), nullptr,
                     nonce.data(), key.data());
    }
    return sealed.take();
}

py::bytes aead_decrypt(const Aead &aead, const py::buffer &key_, const py::buffer &nonce_,
                       const py::buffer &ciphertext_, const py::buffer &ad_) {
    const Copy key(key_), nonce(nonce_), ciphertext(ciphertext_), ad(ad_);
    expect_size(key, KEY_BYTES, aead.decrypt_name, "key");
    expect_size(nonce, aead.nonce_bytes, aead.decrypt_name, "nonce");
    if (ciphertext.size() < TAG_BYTES)
        wrong_size(aead.decrypt_name, "ciphertext", "at least the " + std::to_string(TAG_BYTES) + "-byte tag",
                   ciphertext.size());
    Output opened(ciphertext.size() - TAG_BYTES);
    int rc;
    {
        ReleasedGil released;
        rc = aead.decrypt(opened.data(), nullptr, nullptr, ciphertext.data(), ciphertext.size(), ad.data(), ad.size(),
                          nonce.data(), key.data());
    }
    if (rc != 0)
        throw py::value_error(std::string(aead.decrypt_name) +
                              ": authentication failed: the tag does not match this key, nonce, associated data "
                              "and ciphertext (one of them is wrong, or the message was modified)");
    return opened.take();
}

py::bytes hmac_sha256(const py::buffer &key_, const py::buffer &data_) {
    const Copy key(key_), data(data_);
    Output mac(crypto_auth_hmacsha256_BYTES);
    {
        ReleasedGil released;
        crypto_auth_hmacsha256_state state;
        crypto_auth_hmacsha256_init(&state, key.data(), key.size());
        crypto_auth_hmacsha256_update(&state, data.data(), data.size());
        crypto_auth_hmacsha256_final(&state, mac.data());  // wipes the state
    }
    return mac.take();
}

py::bytes sha256(const py::buffer &data_) {
    const Copy data(data_);
    Output digest(crypto_hash_sha256_BYTES);
    {
        ReleasedGil released;
        crypto_hash_sha256(digest.data(), data.data(), data.size());
    }
    return digest.take();
}

py::bytes hkdf_sha256_extract(const py::buffer &salt_, const py::buffer &ikm_) {
    const Copy salt(salt_), ikm(ikm_);
    Output prk(crypto_kdf_hkdf_sha256_KEYBYTES);
    {
        ReleasedGil released;
        crypto_kdf_hkdf_sha256_extract(prk.data(), salt.data(), salt.size(), ikm.data(), ikm.size());
    }
    return prk.take();
}

py::bytes hkdf_sha256_expand(const py::buffer &prk_, const py::buffer &info_, long long length) {
    const Copy prk(prk_), info(info_);
    expect_size(prk, crypto_kdf_hkdf_sha256_KEYBYTES, "hkdf_sha256_expand", "prk");
    if (length < 0 || static_cast<unsigned long long>(length) > crypto_kdf_hkdf_sha256_BYTES_MAX)
        throw py::value_error("hkdf_sha256_expand: length must be 0 to " +
                              std::to_string(crypto_kdf_hkdf_sha256_BYTES_MAX) + " bytes (255 SHA-256 blocks), not " +
                              std::to_string(length));
    Output okm(static_cast<size_t>(length));
    {
        ReleasedGil released;
        crypto_kdf_hkdf_sha256_expand(okm.data(), static_cast<size_t>(length),
                                      reinterpret_cast<const char *>(info.data()), info.size(), prk.data());
    }
    return okm.take();
}

py::bytes random_bytes(long long n) {
    if (n < 0) throw py::value_error("random_bytes: n must be 0 or more bytes, not " + std::to_string(n));
    Output out(static_cast<size_t>(n));
    {
        ReleasedGil released;
        randombytes_buf(out.data(), static_cast<size_t>(n));
    }
    return out.take();
}

}  // namespace

void init_crypto(py::module_ &parent) {
    if (sodium_init() < 0) throw std::runtime_error("libsodium: sodium_init() failed");
    py::module_ m = parent.def_submodule(
        "crypto", "libsodium's primitives, linked into the extension: X25519, the IETF ChaCha20-Poly1305 and "
                  "XChaCha20-Poly1305 AEADs, HMAC-SHA256, SHA-256, HKDF-SHA256 and the system's random bytes. "
                  "Use them through aeron_py.crypto.");
    // importable by its dotted name too (import aeron_py._aeron.crypto; stubtest does)
    py::module_::import("sys").attr("modules")[m.attr("__name__")] = m;

    m.attr("KEY_BYTES") = KEY_BYTES;
    m.attr("TAG_BYTES") = TAG_BYTES;
    m.attr("CHACHA20POLY1305_IETF_NONCE_BYTES") = static_cast<size_t>(crypto_aead_chacha20poly1305_ietf_NPUBBYTES);
    m.attr("XCHACHA20POLY1305_IETF_NONCE_BYTES") = static_cast<size_t>(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES);
    m.attr("HKDF_SHA256_MAX_BYTES") = static_cast<size_t>(crypto_kdf_hkdf_sha256_BYTES_MAX);

    m.def("libsodium_version", [] { return std::string(sodium_version_string()); },
          "The version of the libsodium linked in (sodium_version_string), e.g. '1.0.22'.");
    m.def("x25519_keypair", &x25519_keypair,
          "A new X25519 key pair (public, secret), 32 bytes each, from the system's random bytes "
          "(crypto_box_keypair).");
    m.def("x25519", &x25519, py::arg("secret"), py::arg("public"),
          "X25519(secret, public): the 32-byte shared secret (crypto_scalarmult_curve25519). ValueError if a key "
          "is not 32 bytes, or if the result is all zero (a low-order public key).");
    m.def(
        "aead_chacha20poly1305_ietf_encrypt",
        [](const py::buffer &key, const py::buffer &nonce, const py::buffer &plaintext, const py::buffer &ad) {
            return aead_encrypt(CHACHA20POLY1305_IETF, key, nonce, plaintext, ad);
        },
        py::arg("key"), py::arg("nonce"), py::arg("plaintext"), py::arg("ad"),
        "ChaCha20-Poly1305 (RFC 8439): ciphertext || 16-byte tag of plaintext, authenticating ad too. "
        "key: 32 bytes; nonce: 12 bytes, never reused with the same key.");
    m.def(
        "aead_chacha20poly1305_ietf_decrypt",
        [](const py::buffer &key, const py::buffer &nonce, const py::buffer &ciphertext, const py::buffer &ad) {
            return aead_decrypt(CHACHA20POLY1305_IETF, key, nonce, ciphertext, ad);
        },
        py::arg("key"), py::arg("nonce"), py::arg("ciphertext"), py::arg("ad"),
        "The plaintext of ciphertext || tag (RFC 8439); ValueError if the tag does not verify.");
    m.def(
        "aead_xchacha20poly1305_ietf_encrypt",
        [](const py::buffer &key, const py::buffer &nonce, const py::buffer &plaintext, const py::buffer &ad) {
            return aead_encrypt(XCHACHA20POLY1305_IETF, key, nonce, plaintext, ad);
        },
        py::arg("key"), py::arg("nonce"), py::arg("plaintext"), py::arg("ad"),
        "XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha): ciphertext || 16-byte tag of plaintext, authenticating "
        "ad too. key: 32 bytes; nonce: 24 bytes (random nonces are safe).");
    m.def(
        "aead_xchacha20poly1305_ietf_decrypt",
        [](const py::buffer &key, const py::buffer &nonce, const py::buffer &ciphertext, const py::buffer &ad) {
            return aead_decrypt(XCHACHA20POLY1305_IETF, key, nonce, ciphertext, ad);
        },
        py::arg("key"), py::arg("nonce"), py::arg("ciphertext"), py::arg("ad"),
        "The plaintext of ciphertext || tag (XChaCha20-Poly1305); ValueError if the tag does not verify.");
    m.def("hmac_sha256", &hmac_sha256, py::arg("key"), py::arg("data"),
          "HMAC-SHA256 (RFC 2104) of data under a key of any length: 32 bytes.");
    m.def("sha256", &sha256, py::arg("data"), "SHA-256 of data: 32 bytes.");
    m.def("hkdf_sha256_extract", &hkdf_sha256_extract, py::arg("salt"), py::arg("ikm"),
          "HKDF-SHA256 extract (RFC 5869): the 32-byte PRK of ikm under salt (any length, may be empty).");
    m.def("hkdf_sha256_expand", &hkdf_sha256_expand, py::arg("prk"), py::arg("info"), py::arg("length"),
          "HKDF-SHA256 expand (RFC 5869): length bytes (0 to 8160) of output keying material from a 32-byte "
          "prk and info.");
    m.def("random_bytes", &random_bytes, py::arg("n"), "n bytes from the system's random source (randombytes_buf).");
}

}  // namespace aeron_py
