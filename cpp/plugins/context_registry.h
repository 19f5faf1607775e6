/* Which plug-in state belongs to which driver context. Aeron's interceptor init functions get
 * only the driver context, so a plug-in registers the state it installs for a context and its
 * interceptor looks it up here when a driver agent starts. One entry per (kind, context), at
 * most AERON_PY_REGISTRY_MAX_ENTRIES in all; every call takes one process-wide mutex (never on
 * a datagram's path: only at install, agent start and detach). */
#ifndef AERON_PY_CONTEXT_REGISTRY_H
#define AERON_PY_CONTEXT_REGISTRY_H

#define AERON_PY_REGISTRY_MAX_ENTRIES (128)

typedef struct aeron_driver_context_stct aeron_driver_context_t;

typedef enum aeron_py_registry_kind_en
{
    AERON_PY_REGISTRY_ENDPOINT_FILTER = 0,
    AERON_PY_REGISTRY_SECURE_TRANSPORT = 1
}
aeron_py_registry_kind_t;

/* The state registered for (kind, context), or NULL. */
void *aeron_py_context_registry_find(aeron_py_registry_kind_t kind, const aeron_driver_context_t *context);

/* Registers `state` for (kind, context). 0, or -1 with errno EEXIST (one is registered
 * already) or EMFILE (the registry is full). */
int aeron_py_context_registry_add(aeron_py_registry_kind_t kind, const aeron_driver_context_t *context, void *state);

/* Forgets (kind, context); nothing when it is not registered. */
void aeron_py_context_registry_remove(aeron_py_registry_kind_t kind, const aeron_driver_context_t *context);

#endif
