/* The endpoint filter's immutable rule table: blocklisted prefixes and port owners.
 * Built on the publishing thread, read by driver agents (see endpoint_filter.h for how a
 * table is published and reclaimed). Addresses are 16 bytes (IPv4 as ::ffff:a.b.c.d). */
#ifndef AERON_PY_ENDPOINT_FILTER_TABLE_H
#define AERON_PY_ENDPOINT_FILTER_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "endpoint_filter.h"

typedef struct aeron_py_filter_table_stct aeron_py_filter_table_t;

struct aeron_py_filter_table_stct
{
    struct aeron_py_filter_table_prefix_stct *prefixes;   /* sorted by (length, hi, lo) */
    size_t prefix_count;
    int32_t lengths[129];                                 /* distinct prefix lengths present */
    size_t length_count;
    aeron_py_filter_port_owner_t *owners;                 /* sorted by port, one per port */
    size_t owner_count;
};

/* NULL with errno set (EINVAL: a prefix length outside 0..128; ENOMEM). */
aeron_py_filter_table_t *aeron_py_filter_table_create(
    const aeron_py_filter_prefix_t *blocklist,
    size_t blocklist_length,
    const aeron_py_filter_port_owner_t *owners,
    size_t owners_length);
void aeron_py_filter_table_delete(aeron_py_filter_table_t *table);

bool aeron_py_filter_table_blocks(const aeron_py_filter_table_t *table, const uint8_t address[16]);

static inline bool aeron_py_filter_table_has_owners(const aeron_py_filter_table_t *table)
{
    return table->owner_count > 0;
}

/* The owner address of local `port`, or NULL when the port has no owner. */
const uint8_t *aeron_py_filter_table_owner(const aeron_py_filter_table_t *table, uint16_t port);

#endif
