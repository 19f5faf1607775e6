/* Secure transport: lifecycle, key changes and counters (see secure_transport.h); the
 * interceptor is in secure_interceptor.c. */
#if defined(__linux__)
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "aeron_alloc.h"
#include "aeron_driver_context.h"
#include "concurrent/aeron_counters_manager.h"
#include "media/aeron_udp_channel_transport_bindings.h"

#include "context_registry.h"
#include "secure_transport_internal.h"

static const char *const counter_names[AERON_PY_SECURE_COUNTER_COUNT] = {
    "dropped: bad tag", "dropped: unknown session", "dropped: replay", "dropped: malformed",
    "seal refused", "sealed", "opened"
};

static void table_free(void *table)
{
    aeron_py_secure_table_delete(table);
}

/* ---- lifecycle (the owning thread) ---- */

aeron_py_secure_transport_t *aeron_py_secure_transport_create(void)
{
    if (sodium_init() < 0)
    {
        errno = ENOTSUP;
        return NULL;
    }
    aeron_py_secure_transport_t *secure = calloc(1, sizeof(aeron_py_secure_transport_t));
    aeron_py_secure_table_t *table = aeron_py_secure_table_empty();
    if (NULL == secure || NULL == table ||
        aeron_py_hazard_swap_init(&secure->tables, table, table_free, AERON_PY_SECURE_RECLAIM_WAIT_NS) < 0)
    {
        free(secure);
        aeron_py_secure_table_delete(table);
        errno = ENOMEM;
        return NULL;
    }
    for (int i = 0; i < AERON_PY_SECURE_COUNTER_COUNT; i++)
    {
        secure->counters[i] = &secure->local_counters[i];
        secure->counter_ids[i] = -1;
    }
    return secure;
}

/* Appends `bindings` to the tail of a chain (Aeron calls a chain's bindings in list order,
 * the last next to the socket); returns the chain's new head. */
static aeron_udp_channel_interceptor_bindings_t *append(
    aeron_udp_channel_interceptor_bindings_t *head, aeron_udp_channel_interceptor_bindings_t *bindings)
{
    if (NULL == head)
    {
        return bindings;
    }
    aeron_udp_channel_interceptor_bindings_t *last = head;
    while (NULL != last->meta_info.next_interceptor_bindings)
    {
        /* every bindings of a chain is a heap object the context owns (and frees): not const */
        last = (aeron_udp_channel_interceptor_bindings_t *)last->meta_info.next_interceptor_bindings;
    }
    last->meta_info.next_interceptor_bindings = bindings;
    return head;
}

static void name_bindings(aeron_udp_channel_interceptor_bindings_t *bindings)
{
    bindings->meta_info.name = "aeron_py_secure_transport";
    bindings->meta_info.type = "interceptor";
    bindings->meta_info.next_interceptor_bindings = NULL;
    bindings->meta_info.source_symbol = (void (*)(void))aeron_py_secure_transport_install;
}

int aeron_py_secure_transport_install(aeron_py_secure_transport_t *secure, aeron_driver_context_t *context)
{
    if (NULL != secure->context)
    {
        errno = EINVAL;
        return -1;
    }
    aeron_udp_channel_interceptor_bindings_t *outgoing = NULL;
    aeron_udp_channel_interceptor_bindings_t *incoming = NULL;
    if (aeron_alloc((void **)&outgoing, sizeof(*outgoing)) < 0 || aeron_alloc((void **)&incoming, sizeof(*incoming)) < 0)
    {
        aeron_free(outgoing);
        errno = ENOMEM;
        return -1;
    }
    if (aeron_py_context_registry_add(AERON_PY_REGISTRY_SECURE_TRANSPORT, context, secure) < 0)
    {
        const int error = errno;
        aeron_free(outgoing);
        aeron_free(incoming);
        errno = error;
        return -1;
    }
    secure->context = context;
    aeron_py_secure_outgoing_bindings_init(outgoing);
    aeron_py_secure_incoming_bindings_init(incoming);
    name_bindings(outgoing);
    name_bindings(incoming);
    aeron_driver_context_set_udp_channel_outgoing_interceptors(
        context, append(aeron_driver_context_get_udp_channel_outgoing_interceptors(context), outgoing));
    aeron_driver_context_set_udp_channel_incoming_interceptors(
        context, append(aeron_driver_context_get_udp_channel_incoming_interceptors(context), incoming));
    return 0;
}

int aeron_py_secure_transport_attach_counters(aeron_py_secure_transport_t *secure, aeron_driver_context_t *context)
{
    aeron_counters_manager_t *manager = context->counters_manager;
    if (NULL == manager)
    {
        errno = EINVAL;
        return -1;
    }
    for (int32_t i = 0; i < AERON_PY_SECURE_COUNTER_COUNT; i++)
    {
        char label[96];
        const int label_length = snprintf(label, sizeof(label), "aeron_py secure transport %s", counter_names[i]);
        const int32_t id = aeron_counters_manager_allocate(
            manager, AERON_PY_SECURE_COUNTER_TYPE_ID, (const uint8_t *)&i, sizeof(i), label, (size_t)label_length);
        if (id < 0)
        {
            errno = ENOSPC;
            return -1;
        }
        int64_t *address = aeron_counters_manager_addr(manager, id);
        __atomic_store_n(address, secure->local_counters[i], __ATOMIC_SEQ_CST);
        secure->counter_ids[i] = id;
        secure->counters[i] = address;
    }
    return 0;
}

void aeron_py_secure_transport_detach(aeron_py_secure_transport_t *secure)
{
    for (int i = 0; i < AERON_PY_SECURE_COUNTER_COUNT; i++)
    {
        if (secure->counters[i] != &secure->local_counters[i])
        {
            secure->local_counters[i] = __atomic_load_n(secure->counters[i], __ATOMIC_SEQ_CST);
            secure->counters[i] = &secure->local_counters[i];
        }
        secure->counter_ids[i] = -1;
    }
    if (NULL != secure->context)
    {
        aeron_py_context_registry_remove(AERON_PY_REGISTRY_SECURE_TRANSPORT, secure->context);
        secure->context = NULL;
    }
}

void aeron_py_secure_transport_delete(aeron_py_secure_transport_t *secure)
{
    if (NULL == secure)
    {
        return;
    }
    aeron_py_secure_transport_detach(secure);
    aeron_py_hazard_swap_close(&secure->tables);
    free(secure);
}

/* ---- key changes (one publisher at a time: the swap's lock) ---- */

typedef struct
{
    aeron_py_secure_session_t session;   /* identity, and for add: the new keys */
    bool forget_previous;
}
session_change_t;

static bool identity_ok(int role, int32_t port)
{
    return (AERON_PY_SECURE_ROLE_SEND == role || AERON_PY_SECURE_ROLE_RECEIVE == role) && port >= 0 &&
        port <= UINT16_MAX;
}

static aeron_py_secure_session_t identity(int role, int32_t port, int32_t stream_id, int32_t session_id)
{
    const aeron_py_secure_role_t r = AERON_PY_SECURE_ROLE_SEND == role ? AERON_PY_SECURE_SEND : AERON_PY_SECURE_RECEIVE;
    return (aeron_py_secure_session_t){
        r, AERON_PY_SECURE_SEND == r ? 0 : (uint16_t)port, stream_id, session_id, NULL, { NULL, NULL } };
}

/* add (rotating an existing key), remove (session.seal NULL) or forget the previous key */
static void *with_change(const void *current, void *clientd)
{
    const aeron_py_secure_table_t *table = current;
    session_change_t *change = clientd;
    aeron_py_secure_session_t next = change->session;
    const aeron_py_secure_session_t *old = aeron_py_secure_table_find(
        table, next.role, next.port, next.stream_id, next.session_id);
    if (change->forget_previous)
    {
        if (NULL == old)
        {
            errno = ENOENT;
            return NULL;
        }
        next = *old;
        next.open[1] = NULL;
    }
    else if (NULL != next.seal && NULL != old)
    {
        next.open[1] = old->open[0];   /* rotation: the previous key still opens */
    }
    aeron_py_secure_table_t *with_session = aeron_py_secure_table_with(table, &next);
    if (NULL == with_session || NULL == next.seal || AERON_PY_SECURE_RECEIVE != next.role || 0 == next.port ||
        aeron_py_secure_table_port_secured(with_session, next.port))
    {
        return with_session;
    }
    /* a port that receives a secured session is secured from then on (until set_port): once its
     * key is removed, the session's sealed datagrams are dropped, never handed on as data */
    aeron_py_secure_table_t *with_port = aeron_py_secure_table_with_port(with_session, next.port, true);
    aeron_py_secure_table_delete(with_session);
    return with_port;
}

int aeron_py_secure_transport_add(
    aeron_py_secure_transport_t *secure, int role, int32_t port, int32_t stream_id, int32_t session_id,
    const uint8_t key[32])
{
    if (!identity_ok(role, port) || NULL == key)
    {
        errno = EINVAL;
        return -1;
    }
    uint8_t to_receiver[AERON_PY_SECURE_KEY_LENGTH];
    uint8_t to_sender[AERON_PY_SECURE_KEY_LENGTH];
    if (aeron_py_secure_derive(key, to_receiver, to_sender) < 0)
    {
        return -1;
    }
    const bool sends = AERON_PY_SECURE_ROLE_SEND == role;
    session_change_t change = { identity(role, port, stream_id, session_id), false };
    change.session.seal = aeron_py_seal_key_create(sends ? to_receiver : to_sender);
    change.session.open[0] = aeron_py_open_key_create(sends ? to_sender : to_receiver);
    sodium_memzero(to_receiver, sizeof(to_receiver));
    sodium_memzero(to_sender, sizeof(to_sender));
    int result = -1;
    if (NULL != change.session.seal && NULL != change.session.open[0])
    {
        result = aeron_py_hazard_swap_update(&secure->tables, with_change, &change);
    }
    const int error = errno;
    aeron_py_seal_key_release(change.session.seal);      /* the table holds its own references */
    aeron_py_open_key_release(change.session.open[0]);
    errno = error;
    return result;
}

/* remove (forget_previous false) or forget the previous key of one session */
static int change_session(
    aeron_py_secure_transport_t *secure, int role, int32_t port, int32_t stream_id, int32_t session_id,
    bool forget_previous)
{
    if (!identity_ok(role, port))
    {
        errno = EINVAL;
        return -1;
    }
    session_change_t change = { identity(role, port, stream_id, session_id), forget_previous };
    return aeron_py_hazard_swap_update(&secure->tables, with_change, &change);
}

int aeron_py_secure_transport_remove(
    aeron_py_secure_transport_t *secure, int role, int32_t port, int32_t stream_id, int32_t session_id)
{
    return change_session(secure, role, port, stream_id, session_id, false);
}

int aeron_py_secure_transport_forget_previous(
    aeron_py_secure_transport_t *secure, int role, int32_t port, int32_t stream_id, int32_t session_id)
{
    return change_session(secure, role, port, stream_id, session_id, true);
}

typedef struct
{
    uint16_t port;
    bool secured;
}
port_change_t;

static void *with_port(const void *current, void *clientd)
{
    const port_change_t *change = clientd;
    return aeron_py_secure_table_with_port(current, change->port, change->secured);
}

int aeron_py_secure_transport_set_port(aeron_py_secure_transport_t *secure, int32_t port, bool secured)
{
    if (port <= 0 || port > UINT16_MAX)
    {
        errno = EINVAL;
        return -1;
    }
    port_change_t change = { (uint16_t)port, secured };
    return aeron_py_hazard_swap_update(&secure->tables, with_port, &change);
}

/* ---- reading (any thread) ---- */

static size_t table_size(aeron_py_secure_transport_t *secure, bool ports)
{
    pthread_mutex_lock(&secure->tables.publish_lock);   /* the current table cannot be freed meanwhile */
    const aeron_py_secure_table_t *table = atomic_load(&secure->tables.current);
    const size_t size = ports ? table->port_count : table->session_count;
    pthread_mutex_unlock(&secure->tables.publish_lock);
    return size;
}

size_t aeron_py_secure_transport_session_count(aeron_py_secure_transport_t *secure)
{
    return table_size(secure, false);
}

size_t aeron_py_secure_transport_port_count(aeron_py_secure_transport_t *secure)
{
    return table_size(secure, true);
}

int64_t aeron_py_secure_transport_count(const aeron_py_secure_transport_t *secure, aeron_py_secure_counter_t counter)
{
    return __atomic_load_n(secure->counters[counter], __ATOMIC_SEQ_CST);
}

int32_t aeron_py_secure_transport_counter_id(
    const aeron_py_secure_transport_t *secure, aeron_py_secure_counter_t counter)
{
    return secure->counter_ids[counter];
}

const char *aeron_py_secure_transport_counter_name(aeron_py_secure_counter_t counter)
{
    return counter >= 0 && counter < AERON_PY_SECURE_COUNTER_COUNT ? counter_names[counter] : "unknown";
}
