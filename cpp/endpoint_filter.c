/* Endpoint filter: the interceptor, its lifecycle and its drop counters (see endpoint_filter.h). */
#if defined(__linux__)
#define _GNU_SOURCE
#endif

#include "endpoint_filter.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "aeron_alloc.h"
#include "aeron_driver_context.h"
#include "aeron_publication_image.h"
#include "concurrent/aeron_counters_manager.h"
#include "media/aeron_udp_channel_transport.h"
#include "media/aeron_udp_channel_transport_bindings.h"
#include "protocol/aeron_udp_protocol.h"
#include "util/aeron_error.h"

#include "endpoint_filter_admission.h"
#include "endpoint_filter_table.h"

#define AERON_PY_FILTER_MAX_AGENTS (8)
#define AERON_PY_FILTER_MAX_DRIVERS (64)
#define AERON_PY_FILTER_CLIENTD_INDEX (0)   /* transport slot caching the local port */
#define AERON_PY_FILTER_RECLAIM_WAIT_NS (INT64_C(1000000000))

static const char *const reason_names[AERON_PY_FILTER_REASON_COUNT] = {
    "blocklist", "port owner", "setup term length", "setup rate", "source images", "total images",
    "source table full"
};

struct aeron_py_endpoint_filter_stct
{
    aeron_py_endpoint_filter_config_t config;
    _Atomic(aeron_py_filter_table_t *) table;
    _Atomic(aeron_py_filter_table_t *) hazards[AERON_PY_FILTER_MAX_AGENTS];
    atomic_int agent_count;
    pthread_mutex_t publish_lock;
    aeron_py_filter_table_t *retired;              /* tables still named by a hazard after the wait */
    int64_t *counters[AERON_PY_FILTER_REASON_COUNT];
    int32_t counter_ids[AERON_PY_FILTER_REASON_COUNT];
    int64_t local_counters[AERON_PY_FILTER_REASON_COUNT];
    aeron_driver_context_t *context;
};

/* One per driver agent that receives (receiver, sender, name resolver): its own thread. */
typedef struct aeron_py_filter_agent_stct
{
    aeron_py_endpoint_filter_t *filter;
    int slot;
    bool admits;                                    /* the receiver: new-session admission */
    aeron_py_admission_t admission;
}
aeron_py_filter_agent_t;

/* ---- which filter belongs to which driver context (init funcs only get the context) ---- */

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static aeron_py_endpoint_filter_t *registry[AERON_PY_FILTER_MAX_DRIVERS];

static aeron_py_endpoint_filter_t *registry_find(const aeron_driver_context_t *context)
{
    aeron_py_endpoint_filter_t *found = NULL;
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < AERON_PY_FILTER_MAX_DRIVERS && NULL == found; i++)
    {
        if (NULL != registry[i] && registry[i]->context == context)
        {
            found = registry[i];
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return found;
}

static int registry_set(aeron_py_endpoint_filter_t *old_value, aeron_py_endpoint_filter_t *new_value)
{
    int result = -1;
    pthread_mutex_lock(&registry_lock);
    for (int i = 0; i < AERON_PY_FILTER_MAX_DRIVERS && result < 0; i++)
    {
        if (registry[i] == old_value)
        {
            registry[i] = new_value;
            result = 0;
        }
    }
    pthread_mutex_unlock(&registry_lock);
    return result;
}

/* ---- helpers on the agent threads ---- */

static int64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * INT64_C(1000000000) + ts.tv_nsec;
}

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

/* The transport's bound port, cached in its interceptor slot (reset by transport init). */
static uint16_t local_port(aeron_udp_channel_transport_t *transport)
{
    uintptr_t cached = (uintptr_t)transport->interceptor_clientds[AERON_PY_FILTER_CLIENTD_INDEX];
    if (0 != cached)
    {
        return (uint16_t)(cached & 0xFFFF);
    }
    struct sockaddr_storage bound;
    socklen_t bound_length = sizeof(bound);
    uint16_t port = 0;
    if (0 == getsockname(transport->fd, (struct sockaddr *)&bound, &bound_length))
    {
        port = AF_INET == bound.ss_family ?
            ntohs(((struct sockaddr_in *)&bound)->sin_port) : ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
    }
    transport->interceptor_clientds[AERON_PY_FILTER_CLIENTD_INDEX] = (void *)(UINT64_C(0x10000) | port);
    return port;
}

static aeron_py_filter_table_t *table_acquire(aeron_py_endpoint_filter_t *filter, int slot)
{
    aeron_py_filter_table_t *table;
    do
    {
        table = atomic_load(&filter->table);
        atomic_store(&filter->hazards[slot], table);
    }
    while (table != atomic_load(&filter->table));
    return table;
}

static void table_release(aeron_py_endpoint_filter_t *filter, int slot)
{
    atomic_store(&filter->hazards[slot], NULL);
}

static void count_drop(aeron_py_endpoint_filter_t *filter, int reason)
{
    __atomic_fetch_add(filter->counters[reason], 1, __ATOMIC_SEQ_CST);
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
        bool port_known = false, owned = false;
        uint16_t port = 0;
        aeron_py_filter_table_t *table = table_acquire(filter, agent->slot);
        if (aeron_py_filter_table_blocks(table, address))
        {
            reason = AERON_PY_FILTER_BLOCKLIST;
        }
        else if (aeron_py_filter_table_has_owners(table))
        {
            port = local_port(transport);
            port_known = true;
            const uint8_t *owner = aeron_py_filter_table_owner(table, port);
            owned = NULL != owner;
            if (owned && 0 != memcmp(owner, address, 16))
            {
                reason = AERON_PY_FILTER_PORT_OWNER;
            }
        }
        table_release(filter, agent->slot);

        if (reason < 0 && length >= sizeof(aeron_setup_header_t) &&
            AERON_HDR_TYPE_SETUP == ((const aeron_frame_header_t *)buffer)->type)
        {
            aeron_setup_header_t setup;
            memcpy(&setup, buffer, sizeof(setup));
            if (filter->config.max_setup_term_length > 0 && setup.term_length > filter->config.max_setup_term_length)
            {
                reason = AERON_PY_FILTER_SETUP_TERM_LENGTH;
            }
            else if (agent->admits && !owned)
            {
                reason = aeron_py_admission_on_setup(
                    &agent->admission,
                    aeron_py_admission_key(&filter->config, address),
                    setup.session_id,
                    setup.stream_id,
                    port_known ? port : local_port(transport),
                    monotonic_ns());
            }
        }
    }

    if (reason >= 0)
    {
        count_drop(filter, reason);
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
    const uint16_t port = local_port(transport);
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
        monotonic_ns());
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
    agent->filter = registry_find(context);  /* NULL: pass everything (not ours) */
    if (NULL != agent->filter)
    {
        agent->slot = atomic_fetch_add(&agent->filter->agent_count, 1);
        if (agent->slot >= AERON_PY_FILTER_MAX_AGENTS)
        {
            free(agent);
            AERON_SET_ERR(EINVAL, "aeron_py endpoint filter: more than %d agents", AERON_PY_FILTER_MAX_AGENTS);
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

/* ---- lifecycle (the owning Python thread) ---- */

aeron_py_endpoint_filter_t *aeron_py_endpoint_filter_create(const aeron_py_endpoint_filter_config_t *config)
{
    if (config->max_setup_term_length < 0 || config->max_images_per_source < 0 || config->max_images_total < 0 ||
        config->ipv4_prefix < 0 || config->ipv4_prefix > 32 || config->ipv6_prefix < 0 || config->ipv6_prefix > 128 ||
        config->max_sources <= 0 || config->max_pending <= 0 || config->pending_timeout_ns <= 0 ||
        (config->setup_rate > 0 && config->setup_burst < 1.0))
    {
        errno = EINVAL;
        return NULL;
    }
    aeron_py_endpoint_filter_t *filter = calloc(1, sizeof(aeron_py_endpoint_filter_t));
    aeron_py_filter_table_t *table = aeron_py_filter_table_create(NULL, 0, NULL, 0);
    if (NULL == filter || NULL == table)
    {
        free(filter);
        aeron_py_filter_table_delete(table);
        errno = ENOMEM;
        return NULL;
    }
    filter->config = *config;
    atomic_init(&filter->table, table);
    for (int i = 0; i < AERON_PY_FILTER_MAX_AGENTS; i++)
    {
        atomic_init(&filter->hazards[i], NULL);
    }
    atomic_init(&filter->agent_count, 0);
    pthread_mutex_init(&filter->publish_lock, NULL);
    for (int i = 0; i < AERON_PY_FILTER_REASON_COUNT; i++)
    {
        filter->counters[i] = &filter->local_counters[i];
        filter->counter_ids[i] = -1;
    }
    return filter;
}

int aeron_py_endpoint_filter_install(aeron_py_endpoint_filter_t *filter, aeron_driver_context_t *context)
{
    if (NULL != filter->context || NULL != registry_find(context))
    {
        errno = EINVAL;
        return -1;
    }
    aeron_udp_channel_interceptor_bindings_t *bindings = NULL;
    if (aeron_alloc((void **)&bindings, sizeof(aeron_udp_channel_interceptor_bindings_t)) < 0)
    {
        errno = ENOMEM;
        return -1;
    }
    filter->context = context;
    if (registry_set(NULL, filter) < 0)
    {
        filter->context = NULL;
        aeron_free(bindings);
        errno = EMFILE;
        return -1;
    }
    bindings->incoming_init_func = filter_agent_init;
    bindings->incoming_func = filter_incoming;
    bindings->incoming_close_func = filter_agent_close;
    bindings->incoming_image_notification_func = filter_image_notification;
    bindings->meta_info.name = "aeron_py_endpoint_filter";
    bindings->meta_info.type = "interceptor";
    bindings->meta_info.next_interceptor_bindings = aeron_driver_context_get_udp_channel_incoming_interceptors(context);
    bindings->meta_info.source_symbol = (void (*)(void))aeron_py_endpoint_filter_install;
    aeron_driver_context_set_udp_channel_incoming_interceptors(context, bindings);
    return 0;
}

int aeron_py_endpoint_filter_attach_counters(aeron_py_endpoint_filter_t *filter, aeron_driver_context_t *context)
{
    aeron_counters_manager_t *manager = context->counters_manager;
    if (NULL == manager)
    {
        errno = EINVAL;
        return -1;
    }
    for (int32_t reason = 0; reason < AERON_PY_FILTER_REASON_COUNT; reason++)
    {
        char label[96];
        const int label_length = snprintf(label, sizeof(label), "aeron_py filter dropped: %s", reason_names[reason]);
        const int32_t id = aeron_counters_manager_allocate(
            manager, AERON_PY_FILTER_DROP_COUNTER_TYPE_ID, (const uint8_t *)&reason, sizeof(reason), label,
            (size_t)label_length);
        if (id < 0)
        {
            errno = ENOSPC;
            return -1;
        }
        int64_t *address = aeron_counters_manager_addr(manager, id);
        __atomic_store_n(address, filter->local_counters[reason], __ATOMIC_SEQ_CST);
        filter->counter_ids[reason] = id;
        filter->counters[reason] = address;
    }
    return 0;
}

void aeron_py_endpoint_filter_detach(aeron_py_endpoint_filter_t *filter)
{
    for (int i = 0; i < AERON_PY_FILTER_REASON_COUNT; i++)
    {
        if (filter->counters[i] != &filter->local_counters[i])
        {
            filter->local_counters[i] = __atomic_load_n(filter->counters[i], __ATOMIC_SEQ_CST);
            filter->counters[i] = &filter->local_counters[i];
        }
        filter->counter_ids[i] = -1;
    }
    if (NULL != filter->context)
    {
        registry_set(filter, NULL);
        filter->context = NULL;
    }
}

int aeron_py_endpoint_filter_publish(
    aeron_py_endpoint_filter_t *filter,
    const aeron_py_filter_prefix_t *blocklist,
    size_t blocklist_length,
    const aeron_py_filter_port_owner_t *owners,
    size_t owners_length)
{
    aeron_py_filter_table_t *table = aeron_py_filter_table_create(blocklist, blocklist_length, owners, owners_length);
    if (NULL == table)
    {
        return -1;
    }
    pthread_mutex_lock(&filter->publish_lock);
    aeron_py_filter_table_t *old = atomic_exchange(&filter->table, table);
    const int64_t deadline_ns = monotonic_ns() + AERON_PY_FILTER_RECLAIM_WAIT_NS;
    bool named = true;
    while (named)
    {
        named = false;
        for (int i = 0; i < AERON_PY_FILTER_MAX_AGENTS; i++)
        {
            named = named || atomic_load(&filter->hazards[i]) == old;
        }
        if (named)
        {
            if (monotonic_ns() > deadline_ns)
            {
                break;
            }
            const struct timespec pause = { 0, 20000 };
            nanosleep(&pause, NULL);
        }
    }
    if (named)
    {
        old->next_retired = filter->retired;
        filter->retired = old;
    }
    else
    {
        aeron_py_filter_table_delete(old);
    }
    pthread_mutex_unlock(&filter->publish_lock);
    return 0;
}

int64_t aeron_py_endpoint_filter_dropped(const aeron_py_endpoint_filter_t *filter, aeron_py_filter_reason_t reason)
{
    return __atomic_load_n(filter->counters[reason], __ATOMIC_SEQ_CST);
}

int32_t aeron_py_endpoint_filter_counter_id(const aeron_py_endpoint_filter_t *filter, aeron_py_filter_reason_t reason)
{
    return filter->counter_ids[reason];
}

const char *aeron_py_endpoint_filter_reason_name(aeron_py_filter_reason_t reason)
{
    return reason >= 0 && reason < AERON_PY_FILTER_REASON_COUNT ? reason_names[reason] : "unknown";
}

void aeron_py_endpoint_filter_delete(aeron_py_endpoint_filter_t *filter)
{
    if (NULL == filter)
    {
        return;
    }
    aeron_py_endpoint_filter_detach(filter);
    aeron_py_filter_table_delete(atomic_load(&filter->table));
    while (NULL != filter->retired)
    {
        aeron_py_filter_table_t *next = filter->retired->next_retired;
        aeron_py_filter_table_delete(filter->retired);
        filter->retired = next;
    }
    pthread_mutex_destroy(&filter->publish_lock);
    free(filter);
}
