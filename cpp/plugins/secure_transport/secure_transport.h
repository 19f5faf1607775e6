/* Secure transport: per-datagram authenticated encryption for chosen Aeron UDP sessions,
 * inside the embedded C media driver (a UDP channel interceptor, outgoing and incoming).
 *
 * For every secured session (see secure_keys.h for how sessions are named and keyed):
 *   - the driver that publishes seals each DATA, PAD, SETUP and RTTM datagram it sends, the
 *     driver that subscribes each SM, NAK, ERR, RSP_SETUP and RTTM (secure_frames.h: header
 *     in clear and authenticated, the rest encrypted, XChaCha20-Poly1305);
 *   - each side opens what it receives before the driver sees it, and drops, counting one
 *     reason each: a tag that does not verify (forged, flipped, wrong key), a counter already
 *     seen or too old (a replayed datagram; Aeron's own retransmits are sealed afresh), a
 *     datagram too short to be secured, and on a secured port anything no session opens;
 *   - plain sessions and channels pass untouched, side by side in the same driver.
 * Sealing adds AERON_PY_SECURE_OVERHEAD (40) bytes per datagram: a secured channel's mtu
 * must leave that room below the link's datagram size (the Python layer checks it).
 *
 * The interceptor sits at the tail of both chains (next to the socket): the endpoint filter and
 * keepalive thinning see plain frames. Keys live in an immutable table swapped atomically
 * (hazard_swap.h): driver agents take no lock, never allocate on a datagram's path, and never
 * call into Python. Key changes (add, rotate, remove) are made by one thread at a time. */
#ifndef AERON_PY_SECURE_TRANSPORT_H
#define AERON_PY_SECURE_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aeron_driver_context_stct aeron_driver_context_t;
typedef struct aeron_py_secure_transport_stct aeron_py_secure_transport_t;

/* The counters, in this order, in the driver's CnC file (type id below, key: int32 index). */
typedef enum aeron_py_secure_counter_en
{
    AERON_PY_SECURE_DROP_BAD_TAG = 0,
    AERON_PY_SECURE_DROP_UNKNOWN_SESSION = 1,
    AERON_PY_SECURE_DROP_REPLAY = 2,
    AERON_PY_SECURE_DROP_MALFORMED = 3,
    AERON_PY_SECURE_SEAL_REFUSED = 4,    /* too large to seal, or a key's counters used up: not sent */
    AERON_PY_SECURE_SEALED = 5,
    AERON_PY_SECURE_OPENED = 6,
    AERON_PY_SECURE_COUNTER_COUNT = 7
}
aeron_py_secure_counter_t;

#define AERON_PY_SECURE_COUNTER_TYPE_ID (9103)

/* Roles, as in secure_keys.h. */
#define AERON_PY_SECURE_ROLE_SEND (0)
#define AERON_PY_SECURE_ROLE_RECEIVE (1)

/* A new secure transport with no keys (not installed), or NULL with errno. */
aeron_py_secure_transport_t *aeron_py_secure_transport_create(void);

/* Registers it for `context` and appends its bindings to the tail of the context's outgoing
 * and incoming interceptors (before aeron_driver_init). The context frees the bindings. */
int aeron_py_secure_transport_install(aeron_py_secure_transport_t *secure, aeron_driver_context_t *context);

/* After aeron_driver_init, before aeron_driver_start: allocates the counters in the CnC file. */
int aeron_py_secure_transport_attach_counters(aeron_py_secure_transport_t *secure, aeron_driver_context_t *context);

/* After aeron_driver_close: copies the counters' values locally and unregisters the context. */
void aeron_py_secure_transport_detach(aeron_py_secure_transport_t *secure);

/* Frees it and wipes every key; only after detach (or if never installed). */
void aeron_py_secure_transport_delete(aeron_py_secure_transport_t *secure);

/* Installs the 32-byte session key of a session (RECEIVE: `port` is the local port the
 * subscription's channel is bound to, and becomes a secured port, or 0 for any local port
 * (a subscription whose port is chosen by the system); SEND: `port` is ignored).
 * For a session that has a key already this rotates: the new key seals from now on, and the
 * previous one still opens until forget_previous or the next rotation. 0, or -1 with errno
 * (EINVAL: bad role or port). */
int aeron_py_secure_transport_add(
    aeron_py_secure_transport_t *secure, int role, int32_t port, int32_t stream_id, int32_t session_id,
    const uint8_t key[32]);

/* Removes a session's keys (wiped once no driver agent uses them). ENOENT when absent. */
int aeron_py_secure_transport_remove(
    aeron_py_secure_transport_t *secure, int role, int32_t port, int32_t stream_id, int32_t session_id);

/* Stops opening with the key before the last rotation. ENOENT when the session is absent. */
int aeron_py_secure_transport_forget_previous(
    aeron_py_secure_transport_t *secure, int role, int32_t port, int32_t stream_id, int32_t session_id);

/* Marks a local port secured (every datagram to it that no session opens is dropped) or not. */
int aeron_py_secure_transport_set_port(aeron_py_secure_transport_t *secure, int32_t port, bool secured);

/* Sessions with keys installed now, and secured ports. */
size_t aeron_py_secure_transport_session_count(aeron_py_secure_transport_t *secure);
size_t aeron_py_secure_transport_port_count(aeron_py_secure_transport_t *secure);

int64_t aeron_py_secure_transport_count(const aeron_py_secure_transport_t *secure, aeron_py_secure_counter_t counter);
int32_t aeron_py_secure_transport_counter_id(
    const aeron_py_secure_transport_t *secure, aeron_py_secure_counter_t counter);
const char *aeron_py_secure_transport_counter_name(aeron_py_secure_counter_t counter);

#ifdef __cplusplus
}
#endif

#endif
