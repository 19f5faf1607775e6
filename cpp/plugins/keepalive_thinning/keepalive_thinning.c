/* Keepalive thinning: the outgoing interceptor described in keepalive_thinning.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "aeron_alloc.h"
#include "aeron_driver_context.h"
#include "concurrent/aeron_counters_manager.h"
#include "media/aeron_udp_channel_transport.h"
#include "media/aeron_udp_channel_transport_bindings.h"
#include "protocol/aeron_udp_protocol.h"

#include "keepalive_thinning.h"
#include "transport_port.h"

#define WAYS 4
#define PORT_SLOT (1)   /* transport->interceptor_clientds slot caching the local port (the filter uses 0) */
#define SETS (AERON_PY_THINNING_ENTRIES / WAYS)

/* The context's setting: the first member is Aeron's bindings, so the context frees the
 * whole allocation (aeron_free) when it closes, after its driver's agents stopped. */
typedef struct
{
    aeron_udp_channel_interceptor_bindings_t bindings;
    int64_t interval_ns;                            /* 0: thin nothing (yet) */
    uint16_t port_low;                              /* thin only transports bound in [low, high] */
    uint16_t port_high;
    int64_t local_thinned;
    int64_t *thinned;                               /* the CnC counter once attached */
}
thinning_t;

typedef struct
{
    const void *transport;                          /* NULL: the entry is free */
    uint8_t address[16];
    uint16_t port;
    int16_t type;                                   /* AERON_HDR_TYPE_DATA or _SM */
    uint8_t flags;
    int32_t session_id;
    int32_t stream_id;
    int32_t term_id;
    int32_t term_offset;
    int32_t window;
    int64_t last_sent_ns;
}
entry_t;

/* What a keepalive says: its key's session and stream, then what must go out when it changes. */
typedef struct
{
    int16_t type;
    uint8_t flags;
    int32_t session_id;
    int32_t stream_id;
    int32_t term_id;
    int32_t term_offset;
    int32_t window;
}
keepalive_t;

typedef struct
{
    thinning_t *thinning;
    aeron_driver_context_t *context;
    entry_t *entries;                               /* SETS x WAYS, on the first keepalive */
}
agent_state_t;

static void keepalive_thinning_marker(void)
{
}

static thinning_t *find(aeron_driver_context_t *context)
{
    const aeron_udp_channel_interceptor_bindings_t *b = aeron_driver_context_get_udp_channel_outgoing_interceptors(context);
    for (; NULL != b; b = b->meta_info.next_interceptor_bindings)
    {
        if (b->meta_info.source_symbol == keepalive_thinning_marker)
        {
            return (thinning_t *)b;
        }
    }
    return NULL;
}

static void key_address(const struct sockaddr_storage *addr, uint8_t address[16], uint16_t *port)
{
    memset(address, 0, 16);
    *port = 0;
    if (NULL == addr)
    {
        return;
    }
    if (AF_INET == addr->ss_family)
    {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)addr;
        memcpy(address + 12, &in4->sin_addr, 4);
        *port = in4->sin_port;
    }
    else if (AF_INET6 == addr->ss_family)
    {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
        memcpy(address, &in6->sin6_addr, 16);
        *port = in6->sin6_port;
    }
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

/* true: let this keepalive go out. */
static bool should_send(agent_state_t *state, const aeron_udp_channel_transport_t *transport,
                        const struct sockaddr_storage *addr, const keepalive_t *k)
{
    if (NULL == state->entries)
    {
        if (aeron_alloc((void **)&state->entries, sizeof(entry_t) * AERON_PY_THINNING_ENTRIES) < 0)
        {
            state->entries = NULL;
            return true;                            /* no table: thin nothing */
        }
    }
    uint8_t address[16];
    uint16_t port;
    key_address(addr, address, &port);
    uint64_t h = (uint64_t)(uintptr_t)transport;
    h = mix(h ^ ((uint64_t)(uint32_t)k->session_id << 32 | (uint32_t)k->stream_id) ^ ((uint64_t)(uint16_t)k->type << 17));
    uint64_t a0, a1;
    memcpy(&a0, address, 8);
    memcpy(&a1, address + 8, 8);
    h = mix(h ^ a0);
    h = mix(h ^ a1 ^ port);
    entry_t *set = &state->entries[(h % SETS) * WAYS];

    const int64_t now_ns = state->context->nano_clock();
    entry_t *slot = NULL;
    for (int i = 0; i < WAYS; i++)
    {
        entry_t *e = &set[i];
        if (e->transport == transport && e->type == k->type && e->session_id == k->session_id &&
            e->stream_id == k->stream_id && e->port == port && 0 == memcmp(e->address, address, 16))
        {
            if (e->term_id == k->term_id && e->term_offset == k->term_offset && e->window == k->window &&
                e->flags == k->flags && now_ns - e->last_sent_ns < state->thinning->interval_ns)
            {
                return false;
            }
            slot = e;
            break;
        }
    }
    if (NULL == slot)                               /* new key: a free way, else the stalest */
    {
        slot = &set[0];
        for (int i = 0; i < WAYS && NULL != slot->transport; i++)
        {
            if (NULL == set[i].transport || set[i].last_sent_ns < slot->last_sent_ns)
            {
                slot = &set[i];
            }
        }
        slot->transport = transport;
        memcpy(slot->address, address, 16);
        slot->port = port;
        slot->type = k->type;
        slot->session_id = k->session_id;
        slot->stream_id = k->stream_id;
    }
    slot->flags = k->flags;
    slot->term_id = k->term_id;
    slot->term_offset = k->term_offset;
    slot->window = k->window;
    slot->last_sent_ns = now_ns;
    return true;
}

/* A heartbeat or status message that may be thinned: true, `k` filled. Never END OF STREAM,
 * REVOKED or a status message asking for SETUP (a receiver that lost track of a stream). */
static bool keepalive_of(const struct iovec *iov, size_t iov_length, keepalive_t *k)
{
    if (1 != iov_length || iov[0].iov_len < sizeof(aeron_frame_header_t))
    {
        return false;
    }
    aeron_frame_header_t frame;
    memcpy(&frame, iov[0].iov_base, sizeof(frame));
    if (AERON_HDR_TYPE_DATA == frame.type && 0 == frame.frame_length && iov[0].iov_len == AERON_DATA_HEADER_LENGTH)
    {
        if (0 != (frame.flags & (AERON_DATA_HEADER_EOS_FLAG | AERON_DATA_HEADER_REVOKED_FLAG)))
        {
            return false;
        }
        aeron_data_header_t data;
        memcpy(&data, iov[0].iov_base, sizeof(data));
        *k = (keepalive_t){ AERON_HDR_TYPE_DATA, frame.flags, data.session_id, data.stream_id, data.term_id,
                            data.term_offset, 0 };
        return true;
    }
    if (AERON_HDR_TYPE_SM == frame.type && iov[0].iov_len >= sizeof(aeron_status_message_header_t))
    {
        if (0 != (frame.flags & (AERON_STATUS_MESSAGE_HEADER_EOS_FLAG | AERON_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG)))
        {
            return false;
        }
        aeron_status_message_header_t sm;
        memcpy(&sm, iov[0].iov_base, sizeof(sm));
        *k = (keepalive_t){ AERON_HDR_TYPE_SM, frame.flags, sm.session_id, sm.stream_id, sm.consumption_term_id,
                            sm.consumption_term_offset, sm.receiver_window };
        return true;
    }
    return false;
}


static bool thins(const thinning_t *thinning, aeron_udp_channel_transport_t *transport)
{
    if (thinning->interval_ns <= 0)
    {
        return false;
    }
    if (0 == thinning->port_low && UINT16_MAX == thinning->port_high)
    {
        return true;
    }
    const uint16_t port = aeron_py_transport_local_port(transport, PORT_SLOT);
    return thinning->port_low <= port && port <= thinning->port_high;
}

static int thinning_send(
    void *interceptor_state,
    aeron_udp_channel_outgoing_interceptor_t *delegate,
    aeron_udp_channel_transport_t *transport,
    struct sockaddr_storage *address,
    struct iovec *iov,
    size_t iov_length,
    int64_t *bytes_sent)
{
    agent_state_t *state = interceptor_state;
    keepalive_t k;
    if (keepalive_of(iov, iov_length, &k) && thins(state->thinning, transport) &&
        !should_send(state, transport, address, &k))
    {
        __atomic_fetch_add(state->thinning->thinned, 1, __ATOMIC_RELEASE);
        *bytes_sent += (int64_t)iov[0].iov_len;         /* as the transport reports a send */
        return 1;
    }
    return delegate->outgoing_send_func(
        delegate->interceptor_state, delegate->next_interceptor, transport, address, iov, iov_length, bytes_sent);
}

static int thinning_init(void **interceptor_state, aeron_driver_context_t *context,
                         aeron_udp_channel_transport_affinity_t affinity)
{
    (void)affinity;
    agent_state_t *state = NULL;
    if (aeron_alloc((void **)&state, sizeof(agent_state_t)) < 0)
    {
        return -1;
    }
    state->thinning = find(context);
    state->context = context;
    state->entries = NULL;
    if (NULL == state->thinning)
    {
        aeron_free(state);
        return -1;
    }
    *interceptor_state = state;
    return 0;
}

static int thinning_close(void *interceptor_state)
{
    agent_state_t *state = interceptor_state;
    if (NULL != state)
    {
        aeron_free(state->entries);
        aeron_free(state);
    }
    return 0;
}

static thinning_t *find_or_install(aeron_driver_context_t *context)
{
    thinning_t *thinning = find(context);
    if (NULL != thinning)
    {
        return thinning;
    }
    if (aeron_alloc((void **)&thinning, sizeof(thinning_t)) < 0)
    {
        errno = ENOMEM;
        return NULL;
    }
    thinning->interval_ns = 0;
    thinning->port_low = 0;
    thinning->port_high = UINT16_MAX;
    thinning->local_thinned = 0;
    thinning->thinned = &thinning->local_thinned;
    aeron_udp_channel_interceptor_bindings_t *b = &thinning->bindings;
    b->outgoing_init_func = thinning_init;
    b->outgoing_send_func = thinning_send;
    b->outgoing_close_func = thinning_close;
    b->meta_info.name = "aeron_py_keepalive_thinning";
    b->meta_info.type = "interceptor";
    b->meta_info.next_interceptor_bindings = aeron_driver_context_get_udp_channel_outgoing_interceptors(context);
    b->meta_info.source_symbol = keepalive_thinning_marker;
    aeron_driver_context_set_udp_channel_outgoing_interceptors(context, b);
    return thinning;
}

int aeron_py_driver_context_set_keepalive_interval(aeron_driver_context_t *context, int64_t interval_ns)
{
    if (NULL == context || interval_ns <= 0)
    {
        errno = EINVAL;
        return -1;
    }
    thinning_t *thinning = find_or_install(context);
    if (NULL == thinning)
    {
        return -1;
    }
    thinning->interval_ns = interval_ns;
    return 0;
}

int aeron_py_driver_context_set_keepalive_ports(aeron_driver_context_t *context, int32_t low, int32_t high)
{
    if (NULL == context || low < 0 || high > UINT16_MAX || low > high)
    {
        errno = EINVAL;
        return -1;
    }
    thinning_t *thinning = find_or_install(context);
    if (NULL == thinning)
    {
        return -1;
    }
    thinning->port_low = (uint16_t)low;
    thinning->port_high = (uint16_t)high;
    return 0;
}

int64_t aeron_py_driver_context_keepalive_interval(aeron_driver_context_t *context)
{
    thinning_t *thinning = NULL == context ? NULL : find(context);
    return NULL == thinning ? 0 : thinning->interval_ns;
}

int aeron_py_keepalive_thinning_attach_counter(aeron_driver_context_t *context)
{
    thinning_t *thinning = find(context);
    if (NULL == thinning || thinning->interval_ns <= 0)
    {
        return 0;
    }
    aeron_counters_manager_t *manager = context->counters_manager;
    static const char label[] = "aeron_py keepalives thinned";
    const int32_t id = NULL == manager ? -1 : aeron_counters_manager_allocate(
        manager, AERON_PY_THINNING_COUNTER_TYPE_ID, NULL, 0, label, sizeof(label) - 1);
    if (id < 0)
    {
        errno = ENOSPC;
        return -1;
    }
    int64_t *address = aeron_counters_manager_addr(manager, id);
    __atomic_store_n(address, __atomic_load_n(&thinning->local_thinned, __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    __atomic_store_n(&thinning->thinned, address, __ATOMIC_RELEASE);
    return 0;
}
