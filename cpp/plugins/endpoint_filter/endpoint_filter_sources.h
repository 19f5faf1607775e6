/* The endpoint filter's sources: one record per source key (an address masked to the
 * configured prefix) holding its image counts and its token bucket, in an open-addressing
 * table of at most max_sources records. When the table is full, records of idle sources
 * (nothing held, bucket full) are forgotten. Used only by the receiver agent's admission
 * state: single-threaded, never locks. */
#ifndef AERON_PY_ENDPOINT_FILTER_SOURCES_H
#define AERON_PY_ENDPOINT_FILTER_SOURCES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "endpoint_filter.h"

typedef struct aeron_py_source_key_stct
{
    uint64_t hi;
    uint64_t lo;
}
aeron_py_source_key_t;

typedef struct aeron_py_filter_source_stct
{
    aeron_py_source_key_t key;
    bool used;
    int32_t images;    /* counted images from this source */
    int32_t pending;   /* admitted SETUPs awaiting their image */
    int32_t large;     /* large-term images and admitted large-term SETUPs from this source */
    double tokens;
    int64_t refilled_ns;
}
aeron_py_filter_source_t;

typedef struct aeron_py_source_table_stct
{
    aeron_py_filter_source_t *slots;    /* capacity a power of two, at least 2 × max_sources */
    aeron_py_filter_source_t *spare;    /* same capacity: target of a compaction */
    size_t capacity;
    size_t count;
}
aeron_py_source_table_t;

bool aeron_py_source_key_equals(aeron_py_source_key_t a, aeron_py_source_key_t b);

/* 0, or -1 with errno ENOMEM. */
int aeron_py_source_table_init(aeron_py_source_table_t *table, int32_t max_sources);
void aeron_py_source_table_close(aeron_py_source_table_t *table);

/* The record of `key`, or NULL. */
aeron_py_filter_source_t *aeron_py_source_table_find(aeron_py_source_table_t *table, aeron_py_source_key_t key);

/* The record of `key`, made (bucket full) if new; NULL when config->max_sources records are
 * held by sources that are not idle. */
aeron_py_filter_source_t *aeron_py_source_table_find_or_add(
    aeron_py_source_table_t *table, const aeron_py_endpoint_filter_config_t *config, aeron_py_source_key_t key,
    int64_t now_ns);

#endif
