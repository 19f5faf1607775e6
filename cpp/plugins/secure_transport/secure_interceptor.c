/* The secure transport's interceptor: runs on the driver's sender and receiver agents (see
 * secure_transport.h). The sender agent plays the SEND role of every session (it sends a
 * publication's frames and receives its status messages and NAKs), the receiver agent the
 * RECEIVE role; other agents (the conductor's name resolver) pass everything. */
#if defined(__linux__)
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <sodium.h>

#include "aeron_driver_context.h"
#include "media/aeron_udp_channel_transport.h"
#include "media/aeron_udp_channel_transport_bindings.h"
#include "util/aeron_error.h"

#include "context_registry.h"
#include "secure_transport_internal.h"
#include "transport_port.h"

/* One per driver agent and direction (Aeron inits the outgoing and incoming chains apart). */
typedef struct aeron_py_secure_agent_stct
{
    aeron_py_secure_transport_t *secure;   /* NULL: pass everything */
    int slot;
    aeron_py_secure_role_t role;
    uint8_t sends_to;                      /* the AERON_PY_SECURE_TO_* direction this role seals */
    uint8_t receives_from;                 /* ... and opens */
    uint8_t *buffer;                       /* outgoing: sealed datagrams; incoming: one opened datagram */
    size_t buffer_capacity;
    struct iovec *iov;                     /* outgoing: the datagrams handed on */
    size_t iov_capacity;
}
aeron_py_secure_agent_t;

/* ---- outgoing: seal ---- */

static int reserve(aeron_py_secure_agent_t *agent, size_t bytes, size_t datagrams)
{
    if (bytes > agent->buffer_capacity)
    {
        uint8_t *grown = realloc(agent->buffer, bytes);   /* only while a channel's sends grow */
        if (NULL == grown)
        {
            return -1;
        }
        agent->buffer = grown;
        agent->buffer_capacity = bytes;
    }
    if (datagrams > agent->iov_capacity)
    {
        struct iovec *grown = realloc(agent->iov, datagrams * sizeof(struct iovec));
        if (NULL == grown)
        {
            return -1;
        }
        agent->iov = grown;
        agent->iov_capacity = datagrams;
    }
    return 0;
}

static const aeron_py_secure_session_t *find_session(
    aeron_py_secure_agent_t *agent, const aeron_py_secure_table_t *table, aeron_udp_channel_transport_t *transport,
    const aeron_py_secure_frame_t *frame, uint8_t direction)
{
    if (0 == table->session_count || 0 == (frame->directions & direction))
    {
        return NULL;
    }
    if (AERON_PY_SECURE_SEND == agent->role)
    {
        return aeron_py_secure_table_find(table, agent->role, 0, frame->stream_id, frame->session_id);
    }
    /* a receiving session keyed on this port, else one keyed on any port (0) */
    const uint16_t port = aeron_py_transport_local_port(transport, AERON_PY_SECURE_PORT_SLOT);
    const aeron_py_secure_session_t *session = aeron_py_secure_table_find(
        table, agent->role, port, frame->stream_id, frame->session_id);
    return NULL != session ? session :
        aeron_py_secure_table_find(table, agent->role, 0, frame->stream_id, frame->session_id);
}

/* Seals what belongs to a secured session into agent->iov; the count handed on (a datagram
 * that cannot be sealed ends the batch there: never sent in clear), or -1 (no memory). */
static ssize_t seal_batch(
    aeron_py_secure_agent_t *agent, const aeron_py_secure_table_t *table, aeron_udp_channel_transport_t *transport,
    const struct iovec *iov, size_t iov_length, size_t *sealed_count)
{
    size_t bytes = 0;
    for (size_t i = 0; i < iov_length; i++)
    {
        bytes += iov[i].iov_len + AERON_PY_SECURE_OVERHEAD;
    }
    if (reserve(agent, bytes, iov_length) < 0)
    {
        return -1;
    }
    uint8_t *out = agent->buffer;
    for (size_t i = 0; i < iov_length; i++)
    {
        agent->iov[i] = iov[i];
        aeron_py_secure_frame_t frame;
        const uint8_t *datagram = iov[i].iov_base;
        if (!aeron_py_secure_frame_parse(datagram, iov[i].iov_len, &frame))
        {
            continue;
        }
        const aeron_py_secure_session_t *session = find_session(agent, table, transport, &frame, agent->sends_to);
        if (NULL == session)
        {
            continue;
        }
        const uint64_t counter = aeron_py_seal_key_next(session->seal);
        if (0 == counter || aeron_py_secure_seal(
            &frame, datagram, iov[i].iov_len, session->seal->key, session->seal->salt, counter, out) < 0)
        {
            aeron_py_secure_count(agent->secure, AERON_PY_SECURE_SEAL_REFUSED);
            return (ssize_t)i;
        }
        agent->iov[i].iov_base = out;
        agent->iov[i].iov_len += AERON_PY_SECURE_OVERHEAD;
        out += agent->iov[i].iov_len;
        (*sealed_count)++;
        aeron_py_secure_count(agent->secure, AERON_PY_SECURE_SEALED);
    }
    return (ssize_t)iov_length;
}

static int secure_send(
    void *interceptor_state,
    aeron_udp_channel_outgoing_interceptor_t *delegate,
    aeron_udp_channel_transport_t *transport,
    struct sockaddr_storage *address,
    struct iovec *iov,
    size_t iov_length,
    int64_t *bytes_sent)
{
    aeron_py_secure_agent_t *agent = interceptor_state;
    if (NULL == agent->secure)
    {
        return delegate->outgoing_send_func(
            delegate->interceptor_state, delegate->next_interceptor, transport, address, iov, iov_length, bytes_sent);
    }
    aeron_py_hazard_swap_t *tables = &agent->secure->tables;
    const aeron_py_secure_table_t *table = aeron_py_hazard_swap_acquire(tables, agent->slot);
    size_t sealed = 0;
    const ssize_t handed_on = seal_batch(agent, table, transport, iov, iov_length, &sealed);
    aeron_py_hazard_swap_release(tables, agent->slot);
    if (handed_on < 0)
    {
        AERON_SET_ERR(ENOMEM, "%s", "aeron_py secure transport: no memory to seal a batch");
        return -1;
    }
    if (0 == handed_on)
    {
        return 0;
    }
    int64_t sent_bytes = 0;
    const int result = delegate->outgoing_send_func(
        delegate->interceptor_state, delegate->next_interceptor, transport, address, agent->iov,
        (size_t)handed_on, &sent_bytes);
    /* Aeron counts the bytes it asked to send, not the seals' overhead (of those sent) */
    const size_t sent = result < 0 ? 0 : (size_t)result < (size_t)handed_on ? (size_t)result : (size_t)handed_on;
    for (size_t i = 0; i < sent && sealed > 0; i++)
    {
        if (agent->iov[i].iov_base != iov[i].iov_base)
        {
            sent_bytes -= AERON_PY_SECURE_OVERHEAD;
        }
    }
    *bytes_sent += sent_bytes > 0 ? sent_bytes : 0;
    return result;
}

/* ---- incoming: open ---- */

/* Opens `buffer` with the session's current key, else the one before the last rotation, into
 * agent->buffer: its plain length, or -(1 + a drop counter). */
static int64_t open_datagram(
    aeron_py_secure_agent_t *agent, const aeron_py_secure_session_t *session, const aeron_py_secure_frame_t *frame,
    const uint8_t *buffer, size_t length)
{
    const uint64_t counter = aeron_py_secure_counter(frame, buffer, length);
    if (0 == counter)
    {
        return -(1 + AERON_PY_SECURE_DROP_MALFORMED);
    }
    bool stale = false;
    for (int i = 0; i < 2; i++)
    {
        aeron_py_open_key_t *key = session->open[i];
        if (NULL == key)
        {
            continue;
        }
        if (!aeron_py_replay_window_allows(&key->window, counter))
        {
            stale = true;
            continue;
        }
        const int64_t opened = aeron_py_secure_open(frame, buffer, length, key->key, agent->buffer);
        if (opened >= 0)
        {
            aeron_py_replay_window_mark(&key->window, counter);
            return opened;
        }
    }
    return -(1 + (stale ? AERON_PY_SECURE_DROP_REPLAY : AERON_PY_SECURE_DROP_BAD_TAG));
}

/* What to hand on: the plain length in agent->buffer, -1 to pass `buffer` as it is, or
 * -(2 + a drop counter). */
static int64_t classify_incoming(
    aeron_py_secure_agent_t *agent, aeron_udp_channel_transport_t *transport, const uint8_t *buffer, size_t length)
{
    aeron_py_hazard_swap_t *tables = &agent->secure->tables;
    const aeron_py_secure_table_t *table = aeron_py_hazard_swap_acquire(tables, agent->slot);
    int64_t verdict = -1;
    aeron_py_secure_frame_t frame;
    const bool session_frame = aeron_py_secure_frame_parse(buffer, length, &frame);
    const aeron_py_secure_session_t *session = session_frame ?
        find_session(agent, table, transport, &frame, agent->receives_from) : NULL;
    if (NULL != session)
    {
        const int64_t opened = open_datagram(agent, session, &frame, buffer, length);
        verdict = opened >= 0 ? opened : opened - 1;
    }
    else if (AERON_PY_SECURE_RECEIVE == agent->role && table->port_count > 0 &&
        aeron_py_secure_table_port_secured(table, aeron_py_transport_local_port(transport, AERON_PY_SECURE_PORT_SLOT)))
    {
        verdict = -(2 + (session_frame ? AERON_PY_SECURE_DROP_UNKNOWN_SESSION : AERON_PY_SECURE_DROP_MALFORMED));
    }
    aeron_py_hazard_swap_release(tables, agent->slot);
    return verdict;
}

static void secure_incoming(
    void *interceptor_state,
    aeron_udp_channel_incoming_interceptor_t *delegate,
    aeron_udp_channel_transport_t *transport,
    void *receiver_clientd,
    void *endpoint_clientd,
    void *destination_clientd,
    uint8_t *buffer,
    size_t length,
    struct sockaddr_storage *addr,
    struct timespec *media_timestamp)
{
    aeron_py_secure_agent_t *agent = interceptor_state;
    const int64_t verdict = NULL == agent->secure ? -1 : classify_incoming(agent, transport, buffer, length);
    if (verdict < -1)
    {
        aeron_py_secure_count(agent->secure, (aeron_py_secure_counter_t)(-verdict - 2));
        return;
    }
    if (verdict >= 0)
    {
        aeron_py_secure_count(agent->secure, AERON_PY_SECURE_OPENED);
        buffer = agent->buffer;
        length = (size_t)verdict;
    }
    delegate->incoming_func(
        delegate->interceptor_state,
        delegate->next_interceptor,
        transport,
        receiver_clientd,
        endpoint_clientd,
        destination_clientd,
        buffer,
        length,
        addr,
        media_timestamp);
}

/* ---- agents ---- */

static int agent_init(
    void **interceptor_state, aeron_driver_context_t *context, aeron_udp_channel_transport_affinity_t affinity,
    bool incoming)
{
    aeron_py_secure_agent_t *agent = calloc(1, sizeof(aeron_py_secure_agent_t));
    if (NULL == agent)
    {
        AERON_SET_ERR(ENOMEM, "%s", "aeron_py secure transport: no memory for an agent's state");
        return -1;
    }
    const bool sender = AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_SENDER == affinity;
    const bool receiver = AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER == affinity;
    agent->secure = sender || receiver ?
        aeron_py_context_registry_find(AERON_PY_REGISTRY_SECURE_TRANSPORT, context) : NULL;
    if (NULL != agent->secure)
    {
        agent->role = sender ? AERON_PY_SECURE_SEND : AERON_PY_SECURE_RECEIVE;
        agent->sends_to = sender ? AERON_PY_SECURE_TO_RECEIVER : AERON_PY_SECURE_TO_SENDER;
        agent->receives_from = sender ? AERON_PY_SECURE_TO_SENDER : AERON_PY_SECURE_TO_RECEIVER;
        agent->slot = aeron_py_hazard_swap_add_reader(&agent->secure->tables);
        if (agent->slot < 0 || (incoming && reserve(agent, AERON_PY_SECURE_MAX_DATAGRAM, 0) < 0))
        {
            free(agent->buffer);
            free(agent);
            AERON_SET_ERR(ENOMEM, "%s", "aeron_py secure transport: no reader slot or buffer for an agent");
            return -1;
        }
    }
    *interceptor_state = agent;
    return 0;
}

static int outgoing_init(void **state, aeron_driver_context_t *context, aeron_udp_channel_transport_affinity_t affinity)
{
    return agent_init(state, context, affinity, false);
}

static int incoming_init(void **state, aeron_driver_context_t *context, aeron_udp_channel_transport_affinity_t affinity)
{
    return agent_init(state, context, affinity, true);
}

static int agent_close(void *interceptor_state)
{
    aeron_py_secure_agent_t *agent = interceptor_state;
    if (NULL != agent)
    {
        if (NULL != agent->buffer)
        {
            sodium_memzero(agent->buffer, agent->buffer_capacity);   /* it held plaintext */
        }
        free(agent->buffer);
        free(agent->iov);
        free(agent);
    }
    return 0;
}

void aeron_py_secure_outgoing_bindings_init(aeron_udp_channel_interceptor_bindings_t *bindings)
{
    bindings->outgoing_init_func = outgoing_init;
    bindings->outgoing_send_func = secure_send;
    bindings->outgoing_close_func = agent_close;
}

void aeron_py_secure_incoming_bindings_init(aeron_udp_channel_interceptor_bindings_t *bindings)
{
    bindings->incoming_init_func = incoming_init;
    bindings->incoming_func = secure_incoming;
    bindings->incoming_close_func = agent_close;
}
