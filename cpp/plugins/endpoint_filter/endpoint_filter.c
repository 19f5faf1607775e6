/* Endpoint filter: lifecycle, rule-table publication and drop counters (see endpoint_filter.h);
 * the interceptor itself is in endpoint_filter_interceptor.c. */
#if defined(__linux__)
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aeron_alloc.h"
#include "aeron_driver_context.h"
#include "concurrent/aeron_counters_manager.h"
#include "media/aeron_udp_channel_transport_bindings.h"

#include "endpoint_filter_internal.h"
#include "context_registry.h"

static const char *const reason_names[AERON_PY_FILTER_REASON_COUNT] = {
    "blocklist", "port owner", "setup term length", "setup rate", "source images", "total images",
    "source table full", "source large terms", "total large terms"
};

static void table_free(void *table)
{
    aeron_py_filter_table_delete(table);
}

/* ---- lifecycle (the owning Python thread) ---- */

aeron_py_endpoint_filter_t *aeron_py_endpoint_filter_create(const aeron_py_endpoint_filter_config_t *config)
{
    if (config->max_setup_term_length < 0 || config->max_images_per_source < 0 || config->max_images_total < 0 ||
        config->ipv4_prefix < 0 || config->ipv4_prefix > 32 || config->ipv6_prefix < 0 || config->ipv6_prefix > 128 ||
        config->max_sources <= 0 || config->max_pending <= 0 || config->pending_timeout_ns <= 0 ||
        config->large_term_length < 0 || config->max_large_images_per_source < 0 || config->max_large_images_total < 0 ||
        (config->setup_rate > 0 && config->setup_burst < 1.0))
    {
        errno = EINVAL;
        return NULL;
    }
    aeron_py_endpoint_filter_t *filter = calloc(1, sizeof(aeron_py_endpoint_filter_t));
    aeron_py_filter_table_t *table = aeron_py_filter_table_create(NULL, 0, NULL, 0);
    aeron_py_traffic_bell_t *bell = aeron_py_traffic_bell_create();
    if (NULL == filter || NULL == table || NULL == bell)
    {
        const int error = NULL == bell && NULL != filter && NULL != table ? errno : ENOMEM;
        free(filter);
        aeron_py_filter_table_delete(table);
        aeron_py_traffic_bell_delete(bell);
        errno = error;
        return NULL;
    }
    filter->bell = bell;
    filter->config = *config;
    if (aeron_py_hazard_swap_init(&filter->tables, table, table_free, AERON_PY_FILTER_RECLAIM_WAIT_NS) < 0)
    {
        free(filter);
        aeron_py_filter_table_delete(table);
        aeron_py_traffic_bell_delete(bell);
        errno = ENOMEM;
        return NULL;
    }
    for (int i = 0; i < AERON_PY_FILTER_REASON_COUNT; i++)
    {
        filter->counters[i] = &filter->local_counters[i];
        filter->counter_ids[i] = -1;
    }
    return filter;
}

int aeron_py_endpoint_filter_install(aeron_py_endpoint_filter_t *filter, aeron_driver_context_t *context)
{
    if (NULL != filter->context || NULL != aeron_py_context_registry_find(AERON_PY_REGISTRY_ENDPOINT_FILTER, context))
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
    if (aeron_py_context_registry_add(AERON_PY_REGISTRY_ENDPOINT_FILTER, context, filter) < 0)
    {
        aeron_free(bindings);
        errno = EMFILE;
        return -1;
    }
    filter->context = context;
    aeron_py_filter_bindings_init(bindings);
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
        aeron_py_context_registry_remove(AERON_PY_REGISTRY_ENDPOINT_FILTER, filter->context);
        filter->context = NULL;
    }
}

typedef struct
{
    const aeron_py_filter_prefix_t *blocklist;
    size_t blocklist_length;
    const aeron_py_filter_port_owner_t *owners;
    size_t owners_length;
}
rules_t;

static void *build_table(const void *current, void *clientd)
{
    const rules_t *rules = clientd;
    return aeron_py_filter_table_create(rules->blocklist, rules->blocklist_length, rules->owners, rules->owners_length);
}

int aeron_py_endpoint_filter_publish(
    aeron_py_endpoint_filter_t *filter,
    const aeron_py_filter_prefix_t *blocklist,
    size_t blocklist_length,
    const aeron_py_filter_port_owner_t *owners,
    size_t owners_length)
{
    rules_t rules = { blocklist, blocklist_length, owners, owners_length };
    return aeron_py_hazard_swap_update(&filter->tables, build_table, &rules);
}

int64_t aeron_py_endpoint_filter_dropped(const aeron_py_endpoint_filter_t *filter, aeron_py_filter_reason_t reason)
{
    return __atomic_load_n(filter->counters[reason], __ATOMIC_SEQ_CST);
}

int32_t aeron_py_endpoint_filter_counter_id(const aeron_py_endpoint_filter_t *filter, aeron_py_filter_reason_t reason)
{
    return filter->counter_ids[reason];
}

int aeron_py_endpoint_filter_last_term_drop(const aeron_py_endpoint_filter_t *filter, aeron_py_filter_term_drop_t *drop)
{
    return aeron_py_term_drop_sample_read(&filter->term_drop, drop);
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
    aeron_py_hazard_swap_close(&filter->tables);
    aeron_py_traffic_bell_delete(filter->bell);
    free(filter);
}

aeron_py_traffic_bell_t *aeron_py_endpoint_filter_bell(aeron_py_endpoint_filter_t *filter)
{
    return filter->bell;
}

int aeron_py_endpoint_filter_install_quiet_idle(
    aeron_py_endpoint_filter_t *filter, aeron_driver_context_t *context, int64_t hot_ns, int64_t period_ns,
    int64_t deep_ns, int64_t deep_period_ns)
{
    if (AERON_THREADING_MODE_SHARED != context->threading_mode)
    {
        errno = ENOTSUP;
        return -1;
    }
    aeron_py_quiet_idle_t *state = aeron_py_quiet_idle_create(filter->bell, hot_ns, period_ns, deep_ns, deep_period_ns);
    if (NULL == state)
    {
        return -1;
    }
    /* Aeron's stall counters ("work cycle exceeded threshold") time the gap between two duty
     * cycles, which now includes our deliberate sleep: they keep meaning "this much longer
     * than intended" when the sleep is added to their thresholds */
    const int64_t sleep = aeron_py_quiet_idle_longest_period_ns(state);
    aeron_driver_context_set_conductor_cycle_threshold_ns(
        context, (uint64_t)(aeron_driver_context_get_conductor_cycle_threshold_ns(context) + sleep));
    aeron_driver_context_set_sender_cycle_threshold_ns(
        context, (uint64_t)(aeron_driver_context_get_sender_cycle_threshold_ns(context) + sleep));
    aeron_driver_context_set_receiver_cycle_threshold_ns(
        context, (uint64_t)(aeron_driver_context_get_receiver_cycle_threshold_ns(context) + sleep));
    /* the context frees the state with aeron_free when it closes, as it does its own */
    aeron_free(context->shared_idle_strategy_state);
    context->shared_idle_strategy_state = state;
    context->shared_idle_strategy_func = aeron_py_quiet_idle;
    return 0;
}
