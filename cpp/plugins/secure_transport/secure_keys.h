/* The key material of secured sessions and the immutable table that finds it.
 *
 * A secured session is one Aeron stream (stream id + session id) between a publication's
 * driver (role SEND) and a subscription's driver (role RECEIVE), sharing one 32-byte session
 * key. From it each side derives two keys with HKDF-SHA256 (RFC 5869, expand only: the session
 * key is already uniform): one seals the frames flowing to the receiver (DATA, PAD, SETUP,
 * RTTM), the other the frames flowing to the sender (SM, NAK, ERR, RSP_SETUP, RTTM). So each
 * key seals frames of one direction only, sealed by one driver only.
 *
 * A seal key carries a random 16-byte salt, drawn when it is made, and a 64-bit counter that
 * every seal takes the next value of (atomically). An open key carries the replay window of
 * the datagrams it opened. Both are reference counted and shared by every table version that
 * holds them, so a key is never copied while in use: a counter never restarts under the same
 * salt, a window is never forked. Their bytes are wiped when the last reference goes.
 *
 * Tables are immutable once built (publishers build the next one; hazard_swap.h swaps them).
 * RECEIVE sessions are found by (local port, stream id, session id), then by (0, stream id,
 * session id) (keyed on any port), SEND sessions by (stream id, session id): a driver's
 * secured publications have distinct session ids.
 * Ports listed as secured drop every datagram that no RECEIVE session opens. */
#ifndef AERON_PY_SECURE_KEYS_H
#define AERON_PY_SECURE_KEYS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "secure_frames.h"

typedef enum aeron_py_secure_role_en
{
    AERON_PY_SECURE_SEND = 0,      /* this driver publishes the session */
    AERON_PY_SECURE_RECEIVE = 1    /* this driver subscribes to it */
}
aeron_py_secure_role_t;

typedef struct aeron_py_seal_key_stct
{
    atomic_int references;
    _Atomic uint64_t next_counter;        /* starts at 1 */
    uint8_t key[AERON_PY_SECURE_KEY_LENGTH];
    uint8_t salt[AERON_PY_SECURE_SALT_LENGTH];
}
aeron_py_seal_key_t;

typedef struct aeron_py_open_key_stct
{
    atomic_int references;
    uint8_t key[AERON_PY_SECURE_KEY_LENGTH];
    aeron_py_replay_window_t window;      /* one writer: the agent that opens with this key */
}
aeron_py_open_key_t;

typedef struct aeron_py_secure_session_stct
{
    aeron_py_secure_role_t role;
    uint16_t port;              /* RECEIVE: the local port; SEND: 0 */
    int32_t stream_id;
    int32_t session_id;
    aeron_py_seal_key_t *seal;
    aeron_py_open_key_t *open[2];   /* the current key, and the one before a rotation (or NULL) */
}
aeron_py_secure_session_t;

typedef struct aeron_py_secure_table_stct
{
    size_t session_count;
    aeron_py_secure_session_t *sessions;   /* sorted by (role, port, stream id, session id) */
    size_t port_count;
    uint16_t *ports;                        /* secured ports, sorted */
}
aeron_py_secure_table_t;

/* Derives the two direction keys of a session key: `to_receiver` seals DATA/SETUP/PAD/RTTM,
 * `to_sender` seals SM/NAK/ERR/RSP_SETUP/RTTM. 0, or -1. */
int aeron_py_secure_derive(
    const uint8_t session_key[AERON_PY_SECURE_KEY_LENGTH],
    uint8_t to_receiver[AERON_PY_SECURE_KEY_LENGTH],
    uint8_t to_sender[AERON_PY_SECURE_KEY_LENGTH]);

/* New keys with one reference (a fresh random salt for a seal key), or NULL (ENOMEM). */
aeron_py_seal_key_t *aeron_py_seal_key_create(const uint8_t key[AERON_PY_SECURE_KEY_LENGTH]);
aeron_py_open_key_t *aeron_py_open_key_create(const uint8_t key[AERON_PY_SECURE_KEY_LENGTH]);
void aeron_py_seal_key_release(aeron_py_seal_key_t *key);
void aeron_py_open_key_release(aeron_py_open_key_t *key);

/* The next counter of a seal key; 0 when its 2^64 - 1 counters are used up. */
uint64_t aeron_py_seal_key_next(aeron_py_seal_key_t *key);

/* An empty table, or NULL (ENOMEM). */
aeron_py_secure_table_t *aeron_py_secure_table_empty(void);

/* Frees a table and releases the keys it holds. NULL is fine. */
void aeron_py_secure_table_delete(aeron_py_secure_table_t *table);

/* A copy of `table` with `session` put in (replacing one with the same identity) or taken
 * out (`session->seal == NULL`: remove; ENOENT when absent), its keys referenced by the copy;
 * NULL with errno set. */
aeron_py_secure_table_t *aeron_py_secure_table_with(
    const aeron_py_secure_table_t *table, const aeron_py_secure_session_t *session);

/* A copy of `table` with `port` secured or not; NULL with errno set. */
aeron_py_secure_table_t *aeron_py_secure_table_with_port(
    const aeron_py_secure_table_t *table, uint16_t port, bool secured);

/* The session of this identity (port ignored for SEND), or NULL. */
const aeron_py_secure_session_t *aeron_py_secure_table_find(
    const aeron_py_secure_table_t *table, aeron_py_secure_role_t role, uint16_t port, int32_t stream_id,
    int32_t session_id);

bool aeron_py_secure_table_port_secured(const aeron_py_secure_table_t *table, uint16_t port);

#endif
