/* Keepalive thinning: the outgoing interceptor described in keepalive_thinning.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "aeron_alloc.h"
#include "aeron_driver_context.h"
#include "concurrent/aeron_counters_manager.h"
#include "media/aeron_udp_channel_transport.h"
#include "media/aeron_udp_channel_transport_bindings.h"

#include "keepalive_frames.h"
#include "keepalive_table.h"
#include "keepalive_thinning.h"
#include "transport_port.h"

#define PORT_SLOT (1)   /* transport->interceptor_clientds slot caching the local port (the filter uses 0) */

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
    thinning_t *thinning;
    aeron_driver_context_t *context;
    aeron_py_keepalive_table_t table;
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
    aeron_py_keepalive_t k;
    if (aeron_py_keepalive_of(iov, iov_length, &k) && thins(state->thinning, transport) &&
        !aeron_py_keepalive_table_should_send(
            &state->table, transport, address, &k, state->context->nano_clock(), state->thinning->interval_ns))
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
    state->table.entries = NULL;
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
        aeron_py_keepalive_table_close(&state->table);
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
