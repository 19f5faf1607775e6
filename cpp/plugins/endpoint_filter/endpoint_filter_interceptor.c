/* The endpoint filter's interceptor: runs on the driver's agents (see endpoint_filter.h). */
#if defined(__linux__)
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "aeron_driver_context.h"
#include "aeron_publication_image.h"
#include "media/aeron_udp_channel_transport.h"
#include "media/aeron_udp_channel_transport_bindings.h"
#include "protocol/aeron_udp_protocol.h"
#include "util/aeron_error.h"

#include "endpoint_filter_internal.h"
#include "context_registry.h"
#include "transport_port.h"

/* One per driver agent that receives (receiver, sender, name resolver): its own thread. */
typedef struct aeron_py_filter_agent_stct
{
    aeron_py_endpoint_filter_t *filter;
    int slot;
    bool admits;                                    /* the receiver: new-session admission */
    aeron_py_admission_t admission;
}
aeron_py_filter_agent_t;

/* ---- helpers on the agent threads ---- */

static bool to_address(const struct sockaddr_storage *addr, uint8_t address[16])
{
    if (AF_INET == addr->ss_family)
    {
        memset(address, 0, 10);
        address[10] = 0xFF;
        address[11] = 0xFF;
        memcpy(address + 12, &((const struct sockaddr_in *)addr)->sin_addr, 4);
        return true;
    }
    if (AF_INET6 == addr->ss_family)
    {
        memcpy(address, &((const struct sockaddr_in6 *)addr)->sin6_addr, 16);
        return true;
    }
    return false;
}


static aeron_py_filter_table_t *table_acquire(aeron_py_endpoint_filter_t *filter, int slot)
{
    return aeron_py_hazard_swap_acquire(&filter->tables, slot);
}

static void table_release(aeron_py_endpoint_filter_t *filter, int slot)
{
    aeron_py_hazard_swap_release(&filter->tables, slot);
}

static void count_drop(aeron_py_endpoint_filter_t *filter, int reason)
{
    __atomic_fetch_add(filter->counters[reason], 1, __ATOMIC_SEQ_CST);
}

/* The local port a datagram arrived on, looked up at most once per datagram, when a rule needs it. */
typedef struct
{
    aeron_udp_channel_transport_t *transport;
    bool known;
    uint16_t port;
}
local_port_t;

static uint16_t local_port(local_port_t *local)
{
    if (!local->known)
    {
        local->port = aeron_py_transport_local_port(local->transport, AERON_PY_FILTER_CLIENTD_INDEX);
        local->known = true;
    }
    return local->port;
}

/* ---- the rules, in order: a drop reason, or -1 to pass ---- */

/* The rule table: blocklist, then the port's owner. `owned`: the local port has an owner. */
static int table_reason(aeron_py_filter_agent_t *agent, const uint8_t address[16], local_port_t *local, bool *owned)
{
    int reason = -1;
    aeron_py_filter_table_t *table = table_acquire(agent->filter, agent->slot);
    if (aeron_py_filter_table_blocks(table, address))
    {
        reason = AERON_PY_FILTER_BLOCKLIST;
    }
    else if (aeron_py_filter_table_has_owners(table))
    {
        const uint8_t *owner = aeron_py_filter_table_owner(table, local_port(local));
        *owned = NULL != owner;
        if (*owned && 0 != memcmp(owner, address, 16))
        {
            reason = AERON_PY_FILTER_PORT_OWNER;
        }
    }
    table_release(agent->filter, agent->slot);
    return reason;
}

/* A SETUP: the term length cap, then (receiver) new-session admission: the image caps on a port
 * without an owner, the large-term budget on any port. A drop for the term length is sampled. */
static int setup_reason(
    aeron_py_filter_agent_t *agent, const uint8_t *buffer, size_t length, const uint8_t address[16],
    local_port_t *local, bool owned)
{
    if (length < sizeof(aeron_setup_header_t) || AERON_HDR_TYPE_SETUP != ((const aeron_frame_header_t *)buffer)->type)
    {
        return -1;
    }
    const aeron_py_endpoint_filter_config_t *config = &agent->filter->config;
    aeron_setup_header_t setup;
    memcpy(&setup, buffer, sizeof(setup));
    int reason = -1;
    if (config->max_setup_term_length > 0 && setup.term_length > config->max_setup_term_length)
    {
        reason = AERON_PY_FILTER_SETUP_TERM_LENGTH;
    }
    else if (agent->admits)
    {
        reason = aeron_py_admission_on_setup(
            &agent->admission,
            aeron_py_admission_key(config, address),
            setup.session_id,
            setup.stream_id,
            local_port(local),
            owned,
            setup.term_length,
            aeron_py_monotonic_ns());
    }
    if (AERON_PY_FILTER_SETUP_TERM_LENGTH == reason || AERON_PY_FILTER_SOURCE_LARGE_TERMS == reason ||
        AERON_PY_FILTER_TOTAL_LARGE_TERMS == reason)
    {
        aeron_py_term_drop_sample_write(&agent->filter->term_drop, address, setup.term_length, reason);
    }
    return reason;
}

/* ---- the interceptor ---- */

static void filter_incoming(
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
    aeron_py_filter_agent_t *agent = interceptor_state;
    aeron_py_endpoint_filter_t *filter = agent->filter;
    uint8_t address[16];
    int reason = -1;

    if (NULL != filter && to_address(addr, address))
    {
        local_port_t local = { transport, false, 0 };
        bool owned = false;
        reason = table_reason(agent, address, &local, &owned);
        if (reason < 0)
        {
            reason = setup_reason(agent, buffer, length, address, &local, owned);
        }
    }

    if (reason >= 0)
    {
        count_drop(filter, reason);
        /* a flood keeps the driver out of its quiet mode (the receiver drains its sockets at
         * full speed, as without the bell) but wakes no application waiter */
        aeron_py_traffic_bell_touch(filter->bell, aeron_py_monotonic_ns());
        return;
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
    /* after the driver handled it: the data is in the log buffer when a waiter wakes */
    if (NULL != filter && aeron_py_traffic_is_application(buffer, length))
    {
        aeron_py_traffic_bell_ring(filter->bell, aeron_py_monotonic_ns());
    }
}

static int filter_image_notification(
    void *interceptor_state,
    aeron_udp_channel_transport_t *transport,
    aeron_publication_image_t *image,
    aeron_udp_channel_interceptor_notification_type_t type)
{
    aeron_py_filter_agent_t *agent = interceptor_state;
    if (NULL == agent->filter || !agent->admits)
    {
        return 0;
    }
    if (AERON_UDP_CHANNEL_INTERCEPTOR_REMOVE_NOTIFICATION == type)
    {
        aeron_py_admission_on_image_removed(&agent->admission, image);
        return 0;
    }
    uint8_t address[16];
    if (!to_address(&image->source_address, address))
    {
        return 0;
    }
    const uint16_t port = aeron_py_transport_local_port(transport, AERON_PY_FILTER_CLIENTD_INDEX);
    aeron_py_filter_table_t *table = table_acquire(agent->filter, agent->slot);
    const bool owned = NULL != aeron_py_filter_table_owner(table, port);
    table_release(agent->filter, agent->slot);
    aeron_py_admission_on_image_added(
        &agent->admission,
        image,
        aeron_py_admission_key(&agent->filter->config, address),
        image->session_id,
        image->stream_id,
        port,
        !owned,
        image->term_length,
        aeron_py_monotonic_ns());
    return 0;
}

static int filter_agent_init(
    void **interceptor_state, aeron_driver_context_t *context, aeron_udp_channel_transport_affinity_t affinity)
{
    aeron_py_filter_agent_t *agent = calloc(1, sizeof(aeron_py_filter_agent_t));
    if (NULL == agent)
    {
        AERON_SET_ERR(ENOMEM, "%s", "aeron_py endpoint filter: no memory for an agent's state");
        return -1;
    }
    /* NULL: pass everything (not ours) */
    agent->filter = aeron_py_context_registry_find(AERON_PY_REGISTRY_ENDPOINT_FILTER, context);
    if (NULL != agent->filter)
    {
        agent->slot = aeron_py_hazard_swap_add_reader(&agent->filter->tables);
        if (agent->slot < 0)
        {
            free(agent);
            AERON_SET_ERR(EINVAL, "aeron_py endpoint filter: more than %d agents", AERON_PY_HAZARD_MAX_READERS);
            return -1;
        }
        agent->admits = AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER == affinity &&
            aeron_py_admission_enabled(&agent->filter->config);
        if (agent->admits && aeron_py_admission_init(&agent->admission, &agent->filter->config) < 0)
        {
            free(agent);
            AERON_SET_ERR(ENOMEM, "%s", "aeron_py endpoint filter: no memory for admission state");
            return -1;
        }
    }
    *interceptor_state = agent;
    return 0;
}

static int filter_agent_close(void *interceptor_state)
{
    aeron_py_filter_agent_t *agent = interceptor_state;
    if (NULL != agent)
    {
        if (agent->admits)
        {
            aeron_py_admission_close(&agent->admission);
        }
        free(agent);
    }
    return 0;
}

void aeron_py_filter_bindings_init(aeron_udp_channel_interceptor_bindings_t *bindings)
{
    bindings->incoming_init_func = filter_agent_init;
    bindings->incoming_func = filter_incoming;
    bindings->incoming_close_func = filter_agent_close;
    bindings->incoming_image_notification_func = filter_image_notification;
}
