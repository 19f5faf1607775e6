/* A pointer replaced under readers' hazard slots (see hazard_swap.h). */
#if defined(__linux__)
#define _GNU_SOURCE
#endif

#include "hazard_swap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "monotonic.h"

int aeron_py_hazard_swap_init(
    aeron_py_hazard_swap_t *swap, void *initial, aeron_py_hazard_free_func_t free_func, int64_t reclaim_wait_ns)
{
    if (NULL == free_func || reclaim_wait_ns < 0)
    {
        errno = EINVAL;
        return -1;
    }
    atomic_init(&swap->current, initial);
    for (int i = 0; i < AERON_PY_HAZARD_MAX_READERS; i++)
    {
        atomic_init(&swap->hazards[i], NULL);
    }
    atomic_init(&swap->reader_count, 0);
    swap->retired = NULL;
    swap->retired_length = 0;
    swap->retired_capacity = 0;
    swap->free_func = free_func;
    swap->reclaim_wait_ns = reclaim_wait_ns;
    return 0 == pthread_mutex_init(&swap->publish_lock, NULL) ? 0 : -1;
}

void aeron_py_hazard_swap_close(aeron_py_hazard_swap_t *swap)
{
    swap->free_func(atomic_exchange(&swap->current, NULL));
    for (size_t i = 0; i < swap->retired_length; i++)
    {
        swap->free_func(swap->retired[i]);
    }
    free(swap->retired);
    swap->retired = NULL;
    swap->retired_length = 0;
    swap->retired_capacity = 0;
    pthread_mutex_destroy(&swap->publish_lock);
}

int aeron_py_hazard_swap_add_reader(aeron_py_hazard_swap_t *swap)
{
    const int slot = atomic_fetch_add(&swap->reader_count, 1);
    if (slot >= AERON_PY_HAZARD_MAX_READERS)
    {
        errno = ENOSPC;
        return -1;
    }
    return slot;
}

static bool named(aeron_py_hazard_swap_t *swap, const void *value)
{
    for (int i = 0; i < AERON_PY_HAZARD_MAX_READERS; i++)
    {
        if (atomic_load(&swap->hazards[i]) == value)
        {
            return true;
        }
    }
    return false;
}

/* Waits (bounded) until no reader names `old`, then frees it, or keeps it on the retired list.
 * A retired list that cannot grow leaks the value rather than free it under a reader. */
static void reclaim(aeron_py_hazard_swap_t *swap, void *old)
{
    const int64_t deadline_ns = aeron_py_monotonic_ns() + swap->reclaim_wait_ns;
    while (named(swap, old) && aeron_py_monotonic_ns() <= deadline_ns)
    {
        const struct timespec pause = { 0, 20000 };
        nanosleep(&pause, NULL);
    }
    if (!named(swap, old))
    {
        swap->free_func(old);
        return;
    }
    if (swap->retired_length == swap->retired_capacity)
    {
        const size_t capacity = 0 == swap->retired_capacity ? 4 : 2 * swap->retired_capacity;
        void **grown = realloc(swap->retired, capacity * sizeof(void *));
        if (NULL == grown)
        {
            return;
        }
        swap->retired = grown;
        swap->retired_capacity = capacity;
    }
    swap->retired[swap->retired_length++] = old;
}

int aeron_py_hazard_swap_update(aeron_py_hazard_swap_t *swap, aeron_py_hazard_build_func_t build, void *clientd)
{
    pthread_mutex_lock(&swap->publish_lock);
    void *next = build(atomic_load(&swap->current), clientd);
    if (NULL == next)
    {
        const int error = errno;
        pthread_mutex_unlock(&swap->publish_lock);
        errno = error;
        return -1;
    }
    void *old = atomic_exchange(&swap->current, next);
    if (NULL != old)
    {
        reclaim(swap, old);
    }
    pthread_mutex_unlock(&swap->publish_lock);
    return 0;
}

size_t aeron_py_hazard_swap_retired(aeron_py_hazard_swap_t *swap)
{
    pthread_mutex_lock(&swap->publish_lock);
    const size_t retired = swap->retired_length;
    pthread_mutex_unlock(&swap->publish_lock);
    return retired;
}
