/* Keepalive thinning's table: the last keepalive that went out per key (transport,
 * destination, type, session, stream), and the decision whether the next one goes out
 * (see keepalive_thinning.h). One per driver agent, used only on its thread. Fixed-size,
 * 4-way set associative (AERON_PY_THINNING_ENTRIES), allocated on the first keepalive: a
 * key evicted by a collision simply sends its next keepalive (the table fails open). */
#ifndef AERON_PY_KEEPALIVE_TABLE_H
#define AERON_PY_KEEPALIVE_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "keepalive_frames.h"

#define AERON_PY_THINNING_ENTRIES 32768
#define AERON_PY_THINNING_WAYS 4

typedef struct aeron_py_keepalive_entry_stct aeron_py_keepalive_entry_t;

typedef struct aeron_py_keepalive_table_stct
{
    aeron_py_keepalive_entry_t *entries;    /* NULL until the first keepalive */
}
aeron_py_keepalive_table_t;

/* Whether `keepalive`, sent on `transport` to `addr` (NULL: the transport's connected
 * address) at `now_ns`, goes out: yes when its key is new, when what it says differs from the
 * last one that went out, or when `interval_ns` passed since; the table then remembers it.
 * Also yes (and nothing remembered) when the table cannot be allocated. */
bool aeron_py_keepalive_table_should_send(
    aeron_py_keepalive_table_t *table,
    const void *transport,
    const struct sockaddr_storage *addr,
    const aeron_py_keepalive_t *keepalive,
    int64_t now_ns,
    int64_t interval_ns);

void aeron_py_keepalive_table_close(aeron_py_keepalive_table_t *table);

#endif
