/* Which endpoint filter belongs to which driver context (see endpoint_filter_registry.h). */
#include "endpoint_filter_registry.h"

#include <pthread.h>
#include <stddef.h>

#include "endpoint_filter_internal.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static aeron_py_endpoint_filter_t *registry[AERON_PY_FILTER_MAX_DRIVERS];

aeron_py_endpoint_filter_t *aeron_py_filter_registry_find(const aeron_driver_context_t *context)
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

int aeron_py_filter_registry_set(aeron_py_endpoint_filter_t *old_value, aeron_py_endpoint_filter_t *new_value)
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
