/* Session keys and the table that finds them (see secure_keys.h). */
#include "secure_keys.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

static const char TO_RECEIVER_INFO[] = "aeron_py secure transport v1: to receiver";
static const char TO_SENDER_INFO[] = "aeron_py secure transport v1: to sender";

int aeron_py_secure_derive(
    const uint8_t session_key[AERON_PY_SECURE_KEY_LENGTH],
    uint8_t to_receiver[AERON_PY_SECURE_KEY_LENGTH],
    uint8_t to_sender[AERON_PY_SECURE_KEY_LENGTH])
{
    if (0 != crypto_kdf_hkdf_sha256_expand(
        to_receiver, AERON_PY_SECURE_KEY_LENGTH, TO_RECEIVER_INFO, sizeof(TO_RECEIVER_INFO) - 1, session_key) ||
        0 != crypto_kdf_hkdf_sha256_expand(
        to_sender, AERON_PY_SECURE_KEY_LENGTH, TO_SENDER_INFO, sizeof(TO_SENDER_INFO) - 1, session_key))
    {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

/* ---- keys ---- */

aeron_py_seal_key_t *aeron_py_seal_key_create(const uint8_t key[AERON_PY_SECURE_KEY_LENGTH])
{
    aeron_py_seal_key_t *seal = calloc(1, sizeof(aeron_py_seal_key_t));
    if (NULL == seal)
    {
        errno = ENOMEM;
        return NULL;
    }
    atomic_init(&seal->references, 1);
    atomic_init(&seal->next_counter, 1);
    memcpy(seal->key, key, AERON_PY_SECURE_KEY_LENGTH);
    randombytes_buf(seal->salt, sizeof(seal->salt));
    return seal;
}

aeron_py_open_key_t *aeron_py_open_key_create(const uint8_t key[AERON_PY_SECURE_KEY_LENGTH])
{
    aeron_py_open_key_t *open = calloc(1, sizeof(aeron_py_open_key_t));
    if (NULL == open)
    {
        errno = ENOMEM;
        return NULL;
    }
    atomic_init(&open->references, 1);
    memcpy(open->key, key, AERON_PY_SECURE_KEY_LENGTH);
    return open;
}

void aeron_py_seal_key_release(aeron_py_seal_key_t *key)
{
    if (NULL != key && 1 == atomic_fetch_sub(&key->references, 1))
    {
        sodium_memzero(key, sizeof(*key));
        free(key);
    }
}

void aeron_py_open_key_release(aeron_py_open_key_t *key)
{
    if (NULL != key && 1 == atomic_fetch_sub(&key->references, 1))
    {
        sodium_memzero(key, sizeof(*key));
        free(key);
    }
}

uint64_t aeron_py_seal_key_next(aeron_py_seal_key_t *key)
{
    uint64_t counter = atomic_load(&key->next_counter);
    do
    {
        if (UINT64_MAX == counter)
        {
            return 0;   /* used up: the session needs a new key (never reached at any real rate) */
        }
    }
    while (!atomic_compare_exchange_weak(&key->next_counter, &counter, counter + 1));
    return counter;
}

static void hold(const aeron_py_secure_session_t *session)
{
    atomic_fetch_add(&session->seal->references, 1);
    for (int i = 0; i < 2; i++)
    {
        if (NULL != session->open[i])
        {
            atomic_fetch_add(&session->open[i]->references, 1);
        }
    }
}

static void release(const aeron_py_secure_session_t *session)
{
    aeron_py_seal_key_release(session->seal);
    aeron_py_open_key_release(session->open[0]);
    aeron_py_open_key_release(session->open[1]);
}

/* ---- tables ---- */

static int compare_identity(const aeron_py_secure_session_t *a, const aeron_py_secure_session_t *b)
{
    const int64_t by[4][2] = {
        { a->role, b->role }, { a->port, b->port }, { a->stream_id, b->stream_id }, { a->session_id, b->session_id } };
    for (int i = 0; i < 4; i++)
    {
        if (by[i][0] != by[i][1])
        {
            return by[i][0] < by[i][1] ? -1 : 1;
        }
    }
    return 0;
}

static void table_free(aeron_py_secure_table_t *table)
{
    free(table->sessions);
    free(table->ports);
    free(table);
}

static aeron_py_secure_table_t *table_allocate(size_t session_count, size_t port_count)
{
    aeron_py_secure_table_t *table = calloc(1, sizeof(aeron_py_secure_table_t));
    aeron_py_secure_session_t *sessions = calloc(session_count + 1, sizeof(aeron_py_secure_session_t));
    uint16_t *ports = calloc(port_count + 1, sizeof(uint16_t));
    if (NULL == table || NULL == sessions || NULL == ports)
    {
        free(table);
        free(sessions);
        free(ports);
        errno = ENOMEM;
        return NULL;
    }
    table->sessions = sessions;
    table->ports = ports;
    return table;
}

aeron_py_secure_table_t *aeron_py_secure_table_empty(void)
{
    return table_allocate(0, 0);
}

void aeron_py_secure_table_delete(aeron_py_secure_table_t *table)
{
    if (NULL == table)
    {
        return;
    }
    for (size_t i = 0; i < table->session_count; i++)
    {
        release(&table->sessions[i]);
    }
    table_free(table);
}

/* The copy's sessions reference their keys from now on. */
static aeron_py_secure_table_t *table_hold(aeron_py_secure_table_t *table)
{
    for (size_t i = 0; i < table->session_count; i++)
    {
        hold(&table->sessions[i]);
    }
    return table;
}

aeron_py_secure_table_t *aeron_py_secure_table_with(
    const aeron_py_secure_table_t *table, const aeron_py_secure_session_t *session)
{
    const bool removing = NULL == session->seal;
    aeron_py_secure_table_t *next = table_allocate(table->session_count + 1, table->port_count);
    if (NULL == next)
    {
        return NULL;
    }
    bool placed = removing;
    bool found = false;
    for (size_t i = 0; i < table->session_count; i++)
    {
        const aeron_py_secure_session_t *current = &table->sessions[i];
        const int order = compare_identity(current, session);
        if (order > 0 && !placed)
        {
            next->sessions[next->session_count++] = *session;
            placed = true;
        }
        if (0 == order)
        {
            found = true;   /* replaced by `session` (placed in order) or removed */
        }
        else
        {
            next->sessions[next->session_count++] = *current;
        }
    }
    if (!placed)
    {
        next->sessions[next->session_count++] = *session;
    }
    if (removing && !found)
    {
        table_free(next);
        errno = ENOENT;
        return NULL;
    }
    memcpy(next->ports, table->ports, table->port_count * sizeof(uint16_t));
    next->port_count = table->port_count;
    return table_hold(next);
}

aeron_py_secure_table_t *aeron_py_secure_table_with_port(
    const aeron_py_secure_table_t *table, uint16_t port, bool secured)
{
    aeron_py_secure_table_t *next = table_allocate(table->session_count, table->port_count + 1);
    if (NULL == next)
    {
        return NULL;
    }
    memcpy(next->sessions, table->sessions, table->session_count * sizeof(aeron_py_secure_session_t));
    next->session_count = table->session_count;
    for (size_t i = 0; i < table->port_count; i++)   /* sorted; `port` is placed in order */
    {
        if (secured && table->ports[i] > port && (0 == i || table->ports[i - 1] <= port))
        {
            next->ports[next->port_count++] = port;
        }
        if (table->ports[i] != port)
        {
            next->ports[next->port_count++] = table->ports[i];
        }
    }
    if (secured && (0 == table->port_count || table->ports[table->port_count - 1] <= port))
    {
        next->ports[next->port_count++] = port;
    }
    return table_hold(next);
}

const aeron_py_secure_session_t *aeron_py_secure_table_find(
    const aeron_py_secure_table_t *table, aeron_py_secure_role_t role, uint16_t port, int32_t stream_id,
    int32_t session_id)
{
    const aeron_py_secure_session_t key = {
        role, AERON_PY_SECURE_SEND == role ? 0 : port, stream_id, session_id, NULL, { NULL, NULL } };
    size_t low = 0;
    size_t high = table->session_count;
    while (low < high)
    {
        const size_t middle = low + (high - low) / 2;
        const int order = compare_identity(&table->sessions[middle], &key);
        if (0 == order)
        {
            return &table->sessions[middle];
        }
        if (order < 0)
        {
            low = middle + 1;
        }
        else
        {
            high = middle;
        }
    }
    return NULL;
}

bool aeron_py_secure_table_port_secured(const aeron_py_secure_table_t *table, uint16_t port)
{
    size_t low = 0;
    size_t high = table->port_count;
    while (low < high)
    {
        const size_t middle = low + (high - low) / 2;
        if (table->ports[middle] == port)
        {
            return true;
        }
        if (table->ports[middle] < port)
        {
            low = middle + 1;
        }
        else
        {
            high = middle;
        }
    }
    return false;
}
