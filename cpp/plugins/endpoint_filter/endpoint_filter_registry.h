/* Which endpoint filter belongs to which driver context: Aeron's interceptor init functions
 * get only the context, so the filter's lifecycle (endpoint_filter.c) registers the filter it
 * installs and its interceptor (endpoint_filter_interceptor.c) looks it up here. At most
 * AERON_PY_FILTER_MAX_DRIVERS at once; every call takes one process-wide mutex (never on a
 * datagram's path: only at install, agent start and detach). */
#ifndef AERON_PY_ENDPOINT_FILTER_REGISTRY_H
#define AERON_PY_ENDPOINT_FILTER_REGISTRY_H

#include "endpoint_filter.h"

#define AERON_PY_FILTER_MAX_DRIVERS (64)

/* The filter installed for `context` (the filter's `context` member), or NULL. */
aeron_py_endpoint_filter_t *aeron_py_filter_registry_find(const aeron_driver_context_t *context);

/* Replaces the first entry equal to `old_value` by `new_value`: (NULL, filter) registers,
 * (filter, NULL) unregisters. 0, or -1 when no entry equals `old_value` (registry full). */
int aeron_py_filter_registry_set(aeron_py_endpoint_filter_t *old_value, aeron_py_endpoint_filter_t *new_value);

#endif
