/* Internals shared by the secure transport's lifecycle (secure_transport.c) and its
 * interceptor (secure_interceptor.c). Not part of the binding's interface. */
#ifndef AERON_PY_SECURE_TRANSPORT_INTERNAL_H
#define AERON_PY_SECURE_TRANSPORT_INTERNAL_H

#include <stdint.h>

#include "hazard_swap.h"
#include "secure_keys.h"
#include "secure_transport.h"

#define AERON_PY_SECURE_RECLAIM_WAIT_NS (INT64_C(1000000000))
/* The transport slot caching the local port: the same fact the endpoint filter caches in it. */
#define AERON_PY_SECURE_PORT_SLOT (0)

typedef struct aeron_udp_channel_interceptor_bindings_stct aeron_udp_channel_interceptor_bindings_t;

struct aeron_py_secure_transport_stct
{
    aeron_py_hazard_swap_t tables;                 /* aeron_py_secure_table_t */
    int64_t *counters[AERON_PY_SECURE_COUNTER_COUNT];
    int32_t counter_ids[AERON_PY_SECURE_COUNTER_COUNT];
    int64_t local_counters[AERON_PY_SECURE_COUNTER_COUNT];
    aeron_driver_context_t *context;
};

static inline void aeron_py_secure_count(aeron_py_secure_transport_t *secure, aeron_py_secure_counter_t counter)
{
    __atomic_fetch_add(secure->counters[counter], 1, __ATOMIC_RELAXED);
}

/* Fill the outgoing / incoming functions of `bindings` (the rest is the caller's). */
void aeron_py_secure_outgoing_bindings_init(aeron_udp_channel_interceptor_bindings_t *bindings);
void aeron_py_secure_incoming_bindings_init(aeron_udp_channel_interceptor_bindings_t *bindings);

#endif
