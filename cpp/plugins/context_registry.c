/* Plug-in state per driver context (see context_registry.h). */
#include "context_registry.h"

#include <errno.h>
#include <pthread.h>
#include <stddef.h>

typedef struct
{
    const aeron_driver_context_t *context;
    aeron_py_registry_kind_t kind;
    void *state;
}
registry_entry_t;

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static registry_entry_t registry[AERON_PY_REGISTRY_MAX_ENTRIES];

/* The index of (kind, context), or -1; under the lock. */
static int index_of(aeron_py_registry_kind_t kind, const aeron_driver_context_t *context)
{
    for (int i = 0; i < AERON_PY_REGISTRY_MAX_ENTRIES; i++)
    {
        if (NULL != registry[i].context && registry[i].context == context && registry[i].kind == kind)
        {
            return i;
        }
    }
    return -1;
}

void *aeron_py_context_registry_find(aeron_py_registry_kind_t kind, const aeron_driver_context_t *context)
{
    pthread_mutex_lock(&registry_lock);
    const int i = index_of(kind, context);
    void *state = i < 0 ? NULL : registry[i].state;
    pthread_mutex_unlock(&registry_lock);
    return state;
}

int aeron_py_context_registry_add(aeron_py_registry_kind_t kind, const aeron_driver_context_t *context, void *state)
{
    int result = -1;
    int error = EMFILE;
    pthread_mutex_lock(&registry_lock);
    if (index_of(kind, context) >= 0)
    {
        error = EEXIST;
    }
    else
    {
        for (int i = 0; i < AERON_PY_REGISTRY_MAX_ENTRIES && result < 0; i++)
        {
            if (NULL == registry[i].context)
            {
                registry[i] = (registry_entry_t){ context, kind, state };
                result = 0;
            }
        }
    }
    pthread_mutex_unlock(&registry_lock);
    if (result < 0)
    {
        errno = error;
    }
    return result;
}

void aeron_py_context_registry_remove(aeron_py_registry_kind_t kind, const aeron_driver_context_t *context)
{
    pthread_mutex_lock(&registry_lock);
    const int i = index_of(kind, context);
    if (i >= 0)
    {
        registry[i] = (registry_entry_t){ NULL, 0, NULL };
    }
    pthread_mutex_unlock(&registry_lock);
}
