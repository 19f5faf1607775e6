/* Internals shared by the endpoint filter's lifecycle (endpoint_filter.c), its interceptor
 * (endpoint_filter_interceptor.c). Not part of the binding's interface. */
#ifndef AERON_PY_ENDPOINT_FILTER_INTERNAL_H
#define AERON_PY_ENDPOINT_FILTER_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "endpoint_filter.h"
#include "endpoint_filter_admission.h"
#include "endpoint_filter_table.h"
#include "hazard_swap.h"
#include "monotonic.h"
#include "traffic_bell/traffic_bell.h"

#define AERON_PY_FILTER_CLIENTD_INDEX (0)   /* transport slot caching the local port */
#define AERON_PY_FILTER_RECLAIM_WAIT_NS (INT64_C(1000000000))

typedef struct aeron_udp_channel_interceptor_bindings_stct aeron_udp_channel_interceptor_bindings_t;

/* The last term-length drop under a sequence lock: agents write it (one at a time: a writer
 * that finds another mid-write skips its sample), the owner reads it (endpoint_filter_term_drop.c). */
typedef struct aeron_py_term_drop_sample_stct
{
    uint64_t sequence;        /* 0: never written; odd: being written */
    uint64_t address_hi;
    uint64_t address_lo;
    uint64_t term_and_reason; /* term length << 32 | reason */
}
aeron_py_term_drop_sample_t;

void aeron_py_term_drop_sample_write(
    aeron_py_term_drop_sample_t *sample, const uint8_t address[16], int32_t term_length, int32_t reason);
int aeron_py_term_drop_sample_read(const aeron_py_term_drop_sample_t *sample, aeron_py_filter_term_drop_t *drop);

struct aeron_py_endpoint_filter_stct
{
    aeron_py_endpoint_filter_config_t config;
    aeron_py_hazard_swap_t tables;                 /* aeron_py_filter_table_t, read by the agents */
    int64_t *counters[AERON_PY_FILTER_REASON_COUNT];
    int32_t counter_ids[AERON_PY_FILTER_REASON_COUNT];
    int64_t local_counters[AERON_PY_FILTER_REASON_COUNT];
    aeron_driver_context_t *context;
    aeron_py_traffic_bell_t *bell;                 /* rung by the interceptor (traffic_bell.h) */
    aeron_py_term_drop_sample_t term_drop;         /* the last SETUP dropped for its term length */
};

/* Fills the incoming-interceptor functions of `bindings` (the rest is the caller's). */
void aeron_py_filter_bindings_init(aeron_udp_channel_interceptor_bindings_t *bindings);

#endif
