/* Known-answer tests of the libsodium build linked into aeron_py (aeron_py_sodium, built by
 * vendor/libsodium/libsodium.cmake): the primitives the driver's secure transport and the
 * Noise NK handshake use, against the published vectors of their specifications:
 *
 *   X25519                      RFC 7748 section 6.1 (Alice's and Bob's keys, shared secret)
 *   ChaCha20-Poly1305 IETF AEAD RFC 8439 section 2.8.2
 *   XChaCha20-Poly1305 IETF     draft-irtf-cfrg-xchacha, appendix A (its AEAD test vector)
 *   HKDF-SHA256                 RFC 5869 appendix A.1 (extract, then expand)
 *   HMAC-SHA256                 RFC 4231 test case 2
 *   SHA-256                     FIPS 180-2 / RFC 6234: "abc"
 *
 * Each AEAD vector is also decrypted, and a ciphertext, tag or AD with one flipped bit must
 * be refused without writing any plaintext. */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <sodium.h>

#include "check.h"

/* Decodes `hex` (no separators) into `out`; returns the byte count, or 0 on a malformed string. */
static size_t unhex(const char *hex, uint8_t *out, size_t capacity)
{
    size_t length = strlen(hex);
    const char *end = NULL;
    size_t written = 0;
    if (length % 2 != 0 || length / 2 > capacity ||
        sodium_hex2bin(out, capacity, hex, length, NULL, &written, &end) != 0 || *end != '\0')
    {
        return 0;
    }
    return written;
}

/* True when `actual` (length bytes) is the bytes of `expected_hex`; prints both otherwise. */
static bool same_as_hex(const uint8_t *actual, size_t length, const char *expected_hex, const char *what)
{
    uint8_t expected[256];
    char printed[2 * sizeof(expected) + 1];
    if (unhex(expected_hex, expected, sizeof(expected)) != length)
    {
        fprintf(stderr, "%s: the expected value is not %zu bytes of hex\n", what, length);
        return false;
    }
    if (memcmp(actual, expected, length) == 0)
    {
        return true;
    }
    fprintf(stderr, "%s:\n  got      %s\n", what, sodium_bin2hex(printed, sizeof(printed), actual, length));
    fprintf(stderr, "  expected %s\n", expected_hex);
    return false;
}

/* ---- X25519, RFC 7748 section 6.1 --------------------------------------------------------- */
#define ALICE_SECRET "77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a"
#define ALICE_PUBLIC "8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"
#define BOB_SECRET "5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb"
#define BOB_PUBLIC "de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"
#define SHARED_SECRET "4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742"

static void x25519_rfc7748_keys_and_shared_secret(void)
{
    uint8_t alice[32], bob[32], alice_public[32], bob_public[32], shared[32];
    CHECK(unhex(ALICE_SECRET, alice, 32) == 32 && unhex(BOB_SECRET, bob, 32) == 32, "bad test key");
    CHECK(crypto_scalarmult_curve25519_base(alice_public, alice) == 0, "Alice's public key");
    CHECK(same_as_hex(alice_public, 32, ALICE_PUBLIC, "Alice's public key"), "X25519(a, 9)");
    CHECK(crypto_scalarmult_curve25519_base(bob_public, bob) == 0, "Bob's public key");
    CHECK(same_as_hex(bob_public, 32, BOB_PUBLIC, "Bob's public key"), "X25519(b, 9)");
    CHECK(crypto_scalarmult_curve25519(shared, alice, bob_public) == 0, "X25519(a, B)");
    CHECK(same_as_hex(shared, 32, SHARED_SECRET, "X25519(a, B)"), "Alice's shared secret");
    CHECK(crypto_scalarmult_curve25519(shared, bob, alice_public) == 0, "X25519(b, A)");
    CHECK(same_as_hex(shared, 32, SHARED_SECRET, "X25519(b, A)"), "Bob's shared secret");
}

static void x25519_refuses_the_all_zero_result(void)
{
    uint8_t zero_point[32] = { 0 }, out[32];
    uint8_t alice[32];
    CHECK(unhex(ALICE_SECRET, alice, 32) == 32, "bad test key");
    CHECK(crypto_scalarmult_curve25519(out, alice, zero_point) == -1, "a low-order point was accepted");
}

static void box_keypair_is_x25519(void)
{
    uint8_t public_key[crypto_box_PUBLICKEYBYTES], secret_key[crypto_box_SECRETKEYBYTES], derived[32];
    CHECK(crypto_box_keypair(public_key, secret_key) == 0, "crypto_box_keypair");
    CHECK(crypto_scalarmult_curve25519_base(derived, secret_key) == 0, "X25519(sk, 9)");
    CHECK(sodium_memcmp(derived, public_key, 32) == 0, "the keypair's public key is not X25519(sk, 9)");
}

/* ---- the two ChaCha20-Poly1305 AEADs: RFC 8439 2.8.2 and the XChaCha draft's appendix A ---- */
#define SUNSCREEN                                                                               \
    "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, " \
    "sunscreen would be it."
#define AEAD_KEY "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
#define AEAD_AD "50515253c0c1c2c3c4c5c6c7"
#define IETF_NONCE "070000004041424344454647"
#define IETF_CIPHERTEXT_AND_TAG                                                                 \
    "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d6"                          \
    "3dbea45e8ca9671282fafb69da92728b1a71de0a9e060b2905d6a5b67ecd3b36"                          \
    "92ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc"                          \
    "3ff4def08e4b7a9de576d26586cec64b6116"                                                      \
    "1ae10b594f09e26a7e902ecbd0600691"
#define X_NONCE "404142434445464748494a4b4c4d4e4f5051525354555657"
#define X_CIPHERTEXT_AND_TAG                                                                    \
    "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb"                          \
    "731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452"                          \
    "2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9"                          \
    "21f9664c97637da9768812f615c68b13b52e"                                                      \
    "c0875924c1c7987947deafd8780acf49"

typedef int (*aead_encrypt_fn)(unsigned char *, unsigned long long *, const unsigned char *, unsigned long long,
    const unsigned char *, unsigned long long, const unsigned char *, const unsigned char *, const unsigned char *);
typedef int (*aead_decrypt_fn)(unsigned char *, unsigned long long *, unsigned char *, const unsigned char *,
    unsigned long long, const unsigned char *, unsigned long long, const unsigned char *, const unsigned char *);

typedef struct
{
    const char *name;
    aead_encrypt_fn encrypt;
    aead_decrypt_fn decrypt;
    const char *nonce_hex;
    size_t nonce_length;
    const char *expected_hex;
} aead_vector_t;

/* Decrypting `sealed` (with `ad`) must fail and release no plaintext: the output buffer
 * (0x55 before) holds only 0x55 or the zeros libsodium wipes it with. ('U', 0x55, is not in
 * the vectors' plaintext.) */
static bool refused(const aead_vector_t *v, const uint8_t *sealed, size_t sealed_length,
    const uint8_t *ad, size_t ad_length, const uint8_t *nonce, const uint8_t *key)
{
    uint8_t plain[256];
    unsigned long long plain_length = 0;
    memset(plain, 0x55, sizeof(plain));
    if (v->decrypt(plain, &plain_length, NULL, sealed, sealed_length, ad, ad_length, nonce, key) != -1)
    {
        return false;
    }
    for (size_t i = 0; i < sizeof(plain); i++)
    {
        if (plain[i] != 0x55 && plain[i] != 0)
        {
            return false;
        }
    }
    return true;
}

static void check_aead_vector(const aead_vector_t *v)
{
    const size_t text_length = sizeof(SUNSCREEN) - 1;
    uint8_t key[32], nonce[24], ad[12], sealed[256], opened[256];
    unsigned long long sealed_length = 0, opened_length = 0;
    CHECK(text_length == 114, "the plaintext is not the vectors' 114 bytes");
    CHECK(unhex(AEAD_KEY, key, sizeof(key)) == 32 && unhex(AEAD_AD, ad, sizeof(ad)) == 12, "bad test input");
    CHECK(unhex(v->nonce_hex, nonce, sizeof(nonce)) == v->nonce_length, "%s: bad nonce", v->name);

    CHECK(v->encrypt(sealed, &sealed_length, (const uint8_t *)SUNSCREEN, text_length, ad, sizeof(ad), NULL,
        nonce, key) == 0, "%s: encrypt", v->name);
    CHECK(sealed_length == text_length + 16, "%s: sealed length %llu", v->name, sealed_length);
    CHECK(same_as_hex(sealed, text_length + 16, v->expected_hex, v->name), "%s: ciphertext || tag", v->name);

    CHECK(v->decrypt(opened, &opened_length, NULL, sealed, sealed_length, ad, sizeof(ad), nonce, key) == 0,
        "%s: the vector does not decrypt", v->name);
    CHECK(opened_length == text_length && memcmp(opened, SUNSCREEN, text_length) == 0,
        "%s: decrypted to something else", v->name);

    sealed[0] ^= 0x01;  /* first ciphertext byte */
    CHECK(refused(v, sealed, sealed_length, ad, sizeof(ad), nonce, key), "%s: tampered ciphertext opened", v->name);
    sealed[0] ^= 0x01;
    sealed[sealed_length - 1] ^= 0x80;  /* last tag byte */
    CHECK(refused(v, sealed, sealed_length, ad, sizeof(ad), nonce, key), "%s: tampered tag opened", v->name);
    sealed[sealed_length - 1] ^= 0x80;
    ad[11] ^= 0x01;
    CHECK(refused(v, sealed, sealed_length, ad, sizeof(ad), nonce, key), "%s: tampered AD opened", v->name);
    ad[11] ^= 0x01;
    CHECK(refused(v, sealed, 15, ad, sizeof(ad), nonce, key), "%s: an input shorter than a tag opened", v->name);
}

static void chacha20poly1305_ietf_rfc8439_2_8_2(void)
{
    const aead_vector_t v = { "ChaCha20-Poly1305 IETF (RFC 8439 2.8.2)", crypto_aead_chacha20poly1305_ietf_encrypt,
        crypto_aead_chacha20poly1305_ietf_decrypt, IETF_NONCE, crypto_aead_chacha20poly1305_ietf_NPUBBYTES,
        IETF_CIPHERTEXT_AND_TAG };
    CHECK(crypto_aead_chacha20poly1305_ietf_NPUBBYTES == 12, "nonce size");
    check_aead_vector(&v);
}

static void xchacha20poly1305_ietf_draft_appendix_a(void)
{
    const aead_vector_t v = { "XChaCha20-Poly1305 IETF (draft-irtf-cfrg-xchacha appendix A)",
        crypto_aead_xchacha20poly1305_ietf_encrypt, crypto_aead_xchacha20poly1305_ietf_decrypt, X_NONCE,
        crypto_aead_xchacha20poly1305_ietf_NPUBBYTES, X_CIPHERTEXT_AND_TAG };
    CHECK(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES == 24, "nonce size");
    check_aead_vector(&v);
}

/* ---- HKDF-SHA256 (RFC 5869 A.1), HMAC-SHA256 (RFC 4231 case 2), SHA-256 ("abc") ------------ */
static void hkdf_sha256_rfc5869_a_1(void)
{
    uint8_t ikm[22], salt[13], info[10], prk[crypto_kdf_hkdf_sha256_KEYBYTES], okm[42];
    memset(ikm, 0x0b, sizeof(ikm));
    CHECK(unhex("000102030405060708090a0b0c", salt, sizeof(salt)) == 13, "bad salt");
    CHECK(unhex("f0f1f2f3f4f5f6f7f8f9", info, sizeof(info)) == 10, "bad info");
    CHECK(crypto_kdf_hkdf_sha256_extract(prk, salt, sizeof(salt), ikm, sizeof(ikm)) == 0, "extract");
    CHECK(same_as_hex(prk, sizeof(prk), "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
        "HKDF-SHA256 PRK"), "PRK");
    CHECK(crypto_kdf_hkdf_sha256_expand(okm, sizeof(okm), (const char *)info, sizeof(info), prk) == 0, "expand");
    CHECK(same_as_hex(okm, sizeof(okm),
        "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
        "HKDF-SHA256 OKM"), "OKM");
    CHECK(crypto_kdf_hkdf_sha256_expand(okm, crypto_kdf_hkdf_sha256_BYTES_MAX + 1, NULL, 0, prk) == -1,
        "an output longer than 255 blocks was not refused");
}

static void hmac_sha256_rfc4231_case_2(void)
{
    static const char key[] = "Jefe", data[] = "what do ya want for nothing?";
    uint8_t mac[crypto_auth_hmacsha256_BYTES];
    crypto_auth_hmacsha256_state state;
    CHECK(crypto_auth_hmacsha256_init(&state, (const uint8_t *)key, sizeof(key) - 1) == 0, "init");
    CHECK(crypto_auth_hmacsha256_update(&state, (const uint8_t *)data, sizeof(data) - 1) == 0, "update");
    CHECK(crypto_auth_hmacsha256_final(&state, mac) == 0, "final");
    CHECK(same_as_hex(mac, sizeof(mac), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
        "HMAC-SHA256"), "RFC 4231 test case 2");
}

static void sha256_abc(void)
{
    uint8_t digest[crypto_hash_sha256_BYTES];
    CHECK(crypto_hash_sha256(digest, (const uint8_t *)"abc", 3) == 0, "crypto_hash_sha256");
    CHECK(same_as_hex(digest, sizeof(digest), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        "SHA-256(abc)"), "SHA-256 of \"abc\"");
}

/* ---- the library itself ------------------------------------------------------------------- */
static void init_version_random_and_helpers(void)
{
    uint8_t a[32] = { 0 }, b[32] = { 0 };
    CHECK(strcmp(sodium_version_string(), "1.0.22") == 0, "libsodium %s, not the pinned 1.0.22",
        sodium_version_string());
    CHECK(sodium_init() == 1, "a second sodium_init() did not say 'already initialised'");
    randombytes_buf(a, sizeof(a));
    randombytes_buf(b, sizeof(b));
    CHECK(!sodium_is_zero(a, sizeof(a)) && sodium_memcmp(a, b, sizeof(a)) != 0, "randombytes_buf looks stuck");
    sodium_memzero(a, sizeof(a));
    CHECK(sodium_is_zero(a, sizeof(a)), "sodium_memzero left bytes");
}

int main(void)
{
    check_program = "test_sodium_kat";
    if (sodium_init() < 0)
    {
        fprintf(stderr, "sodium_init() failed\n");
        return 1;
    }
    RUN(x25519_rfc7748_keys_and_shared_secret);
    RUN(x25519_refuses_the_all_zero_result);
    RUN(box_keypair_is_x25519);
    RUN(chacha20poly1305_ietf_rfc8439_2_8_2);
    RUN(xchacha20poly1305_ietf_draft_appendix_a);
    RUN(hkdf_sha256_rfc5869_a_1);
    RUN(hmac_sha256_rfc4231_case_2);
    RUN(sha256_abc);
    RUN(init_version_random_and_helpers);
    return check_summary();
}
