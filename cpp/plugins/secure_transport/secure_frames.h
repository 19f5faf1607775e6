/* The secure transport's wire format and the two things it does to one datagram: seal it
 * (authenticated encryption) and open it (verify, then decrypt). Pure functions over buffers:
 * no tables, no threads, no Aeron state; libsodium's XChaCha20-Poly1305 (IETF) underneath.
 *
 * A secured datagram is the plain one with its first frame's fixed header left in clear:
 *
 *   | clear header (H bytes) | ciphertext of the rest (L - H) | tag (16) | nonce (24) |
 *
 * L is the plain datagram's length (every frame of a datagram that batches several DATA
 * frames is in the encrypted rest), H the fixed header length of the first frame's type
 * (aeron_py_secure_frame_parse), the tag authenticates the clear header as associated data
 * together with the ciphertext. The nonce is the sealing key's 16-byte salt followed by its
 * 64-bit counter, big-endian: docs/security/secure-transport.md argues why a (key, nonce) pair
 * never repeats. A secured datagram is AERON_PY_SECURE_OVERHEAD bytes longer than the plain one.
 */
#ifndef AERON_PY_SECURE_FRAMES_H
#define AERON_PY_SECURE_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AERON_PY_SECURE_KEY_LENGTH (32)
#define AERON_PY_SECURE_SALT_LENGTH (16)
#define AERON_PY_SECURE_TAG_LENGTH (16)
#define AERON_PY_SECURE_NONCE_LENGTH (24)
#define AERON_PY_SECURE_OVERHEAD (AERON_PY_SECURE_TAG_LENGTH + AERON_PY_SECURE_NONCE_LENGTH)
/* The largest UDP payload over IPv4 (65,535 - 20 - 8): a secured datagram never exceeds it. */
#define AERON_PY_SECURE_MAX_DATAGRAM (65507)

/* Which way a frame type flows within one session (bits: RTTM flows both ways). */
#define AERON_PY_SECURE_TO_RECEIVER (1u)   /* DATA, PAD, SETUP, RTTM: from the publication's side */
#define AERON_PY_SECURE_TO_SENDER (2u)     /* SM, NAK, ERR, RSP_SETUP, RTTM: from the subscription's side */

/* The first frame of a datagram, as far as the secure transport needs it. */
typedef struct aeron_py_secure_frame_stct
{
    int16_t type;
    uint8_t directions;      /* AERON_PY_SECURE_TO_* bits */
    uint32_t clear_length;   /* H: the fixed header, left in clear and authenticated */
    int32_t session_id;
    int32_t stream_id;
}
aeron_py_secure_frame_t;

/* Fills `frame` when the datagram starts with a frame of a type that belongs to a session
 * (DATA, PAD, SETUP, SM, NAK, ERR, RTTM, RSP_SETUP) and is at least that type's fixed header
 * long; false for every other datagram (name resolution, extensions, runts). */
bool aeron_py_secure_frame_parse(const uint8_t *datagram, size_t length, aeron_py_secure_frame_t *frame);

/* Seals `datagram` (`length` bytes, first frame `frame`) into `out`, which must hold
 * length + AERON_PY_SECURE_OVERHEAD bytes (and not overlap the datagram). 0, or -1 when the
 * sealed datagram would exceed AERON_PY_SECURE_MAX_DATAGRAM. */
int aeron_py_secure_seal(
    const aeron_py_secure_frame_t *frame,
    const uint8_t *datagram,
    size_t length,
    const uint8_t key[AERON_PY_SECURE_KEY_LENGTH],
    const uint8_t salt[AERON_PY_SECURE_SALT_LENGTH],
    uint64_t counter,
    uint8_t *out);

/* The counter in a secured datagram's nonce, or 0 when `length` is too short to be one
 * (counters start at 1). Read before opening, for the replay check. */
uint64_t aeron_py_secure_counter(const aeron_py_secure_frame_t *frame, const uint8_t *sealed, size_t length);

/* Opens a secured datagram into `out` (room for `length` bytes, not overlapping `sealed`):
 * the plain datagram, whose length it returns; -1 when the tag does not verify (or the
 * datagram is too short to be secured). `sealed` is left unchanged either way. */
int64_t aeron_py_secure_open(
    const aeron_py_secure_frame_t *frame,
    const uint8_t *sealed,
    size_t length,
    const uint8_t key[AERON_PY_SECURE_KEY_LENGTH],
    uint8_t *out);

/* Replay protection: the counters of the last AERON_PY_REPLAY_WINDOW datagrams opened with a
 * key. One writer (the driver agent that opens with that key). */
#define AERON_PY_REPLAY_WINDOW (1024)

typedef struct aeron_py_replay_window_stct
{
    uint64_t highest;                                  /* 0: nothing opened yet */
    uint64_t seen[AERON_PY_REPLAY_WINDOW / 64];        /* bit (counter % WINDOW) */
}
aeron_py_replay_window_t;

/* True when `counter` may be new: above the highest, or within the window and not seen. */
bool aeron_py_replay_window_allows(const aeron_py_replay_window_t *window, uint64_t counter);

/* Records `counter` as opened (call only after the tag verified). */
void aeron_py_replay_window_mark(aeron_py_replay_window_t *window, uint64_t counter);

#endif
