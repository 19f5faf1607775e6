/* One pointer that a publisher replaces while driver agents read it, with no lock on the
 * readers' side: the rule tables of the endpoint filter and the key tables of the secure
 * transport live behind one each.
 *
 * A reader (a driver agent, on its own thread) takes a slot once (add_reader), then for each
 * use announces the value it reads in that slot (acquire) and clears it when done (release).
 * A publisher (one at a time: serialised by a mutex inside) builds the next value from the
 * current one (update), swaps the pointer atomically and frees the old value once no slot
 * names it. It waits for that at most `reclaim_wait_ns`; a value still named then is kept
 * on a retired list and freed by aeron_py_hazard_swap_close. Readers never block, lock or
 * allocate; the publisher may sleep briefly (20 us steps) while readers finish. */
#ifndef AERON_PY_HAZARD_SWAP_H
#define AERON_PY_HAZARD_SWAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define AERON_PY_HAZARD_MAX_READERS (8)

typedef void (*aeron_py_hazard_free_func_t)(void *value);

/* Builds the next value from `current` (NULL on failure, errno set; `current` untouched). */
typedef void *(*aeron_py_hazard_build_func_t)(const void *current, void *clientd);

typedef struct aeron_py_hazard_swap_stct
{
    _Atomic(void *) current;
    _Atomic(void *) hazards[AERON_PY_HAZARD_MAX_READERS];
    atomic_int reader_count;
    pthread_mutex_t publish_lock;
    void **retired;
    size_t retired_length;
    size_t retired_capacity;
    aeron_py_hazard_free_func_t free_func;
    int64_t reclaim_wait_ns;
}
aeron_py_hazard_swap_t;

/* `initial` becomes the current value (owned from now on). 0, or -1 with errno. */
int aeron_py_hazard_swap_init(
    aeron_py_hazard_swap_t *swap, void *initial, aeron_py_hazard_free_func_t free_func, int64_t reclaim_wait_ns);

/* Frees the current value and every retired one; no reader may use the swap any more. */
void aeron_py_hazard_swap_close(aeron_py_hazard_swap_t *swap);

/* A reader's slot (0 .. AERON_PY_HAZARD_MAX_READERS - 1), or -1 with errno ENOSPC. */
int aeron_py_hazard_swap_add_reader(aeron_py_hazard_swap_t *swap);

/* The current value, safe to read until aeron_py_hazard_swap_release(swap, slot). */
static inline void *aeron_py_hazard_swap_acquire(aeron_py_hazard_swap_t *swap, int slot)
{
    void *value;
    do
    {
        value = atomic_load(&swap->current);
        atomic_store(&swap->hazards[slot], value);
    }
    while (value != atomic_load(&swap->current));
    return value;
}

static inline void aeron_py_hazard_swap_release(aeron_py_hazard_swap_t *swap, int slot)
{
    atomic_store(&swap->hazards[slot], NULL);
}

/* Publishes build(current, clientd) and reclaims the old value. 0, or -1 with errno from build
 * (nothing changed then). */
int aeron_py_hazard_swap_update(aeron_py_hazard_swap_t *swap, aeron_py_hazard_build_func_t build, void *clientd);

/* How many replaced values are still kept because a reader named them past the wait. */
size_t aeron_py_hazard_swap_retired(aeron_py_hazard_swap_t *swap);

#endif
