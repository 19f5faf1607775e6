/* The endpoint filter's sources (see endpoint_filter_sources.h). */
#include "endpoint_filter_sources.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

bool aeron_py_source_key_equals(aeron_py_source_key_t a, aeron_py_source_key_t b)
{
    return a.hi == b.hi && a.lo == b.lo;
}

static size_t key_hash(aeron_py_source_key_t key, size_t capacity)
{
    uint64_t h = key.hi * UINT64_C(0x9E3779B97F4A7C15) ^ key.lo;
    h ^= h >> 31;
    h *= UINT64_C(0xBF58476D1CE4E5B9);
    h ^= h >> 29;
    return (size_t)h & (capacity - 1);
}

int aeron_py_source_table_init(aeron_py_source_table_t *table, int32_t max_sources)
{
    memset(table, 0, sizeof(*table));
    size_t capacity = 16;
    while (capacity < 2 * (size_t)max_sources)
    {
        capacity <<= 1;
    }
    table->capacity = capacity;
    table->slots = calloc(capacity, sizeof(aeron_py_filter_source_t));
    table->spare = calloc(capacity, sizeof(aeron_py_filter_source_t));
    if (NULL == table->slots || NULL == table->spare)
    {
        aeron_py_source_table_close(table);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void aeron_py_source_table_close(aeron_py_source_table_t *table)
{
    free(table->slots);
    free(table->spare);
    memset(table, 0, sizeof(*table));
}

static bool source_idle(const aeron_py_endpoint_filter_config_t *config, const aeron_py_filter_source_t *source, int64_t now_ns)
{
    if (source->images > 0 || source->pending > 0 || source->large > 0)
    {
        return false;
    }
    if (config->setup_rate <= 0)
    {
        return true;
    }
    const double refill = (double)(now_ns - source->refilled_ns) * config->setup_rate / 1e9;
    return source->tokens + refill >= config->setup_burst;
}

aeron_py_filter_source_t *aeron_py_source_table_find(aeron_py_source_table_t *table, aeron_py_source_key_t key)
{
    const size_t mask = table->capacity - 1;
    for (size_t i = key_hash(key, table->capacity), n = 0; n < table->capacity; i = (i + 1) & mask, n++)
    {
        aeron_py_filter_source_t *source = &table->slots[i];
        if (!source->used)
        {
            return NULL;
        }
        if (aeron_py_source_key_equals(source->key, key))
        {
            return source;
        }
    }
    return NULL;
}

static aeron_py_filter_source_t *slot_of(aeron_py_filter_source_t *slots, size_t capacity, aeron_py_source_key_t key)
{
    const size_t mask = capacity - 1;
    size_t i = key_hash(key, capacity);
    while (slots[i].used && !aeron_py_source_key_equals(slots[i].key, key))
    {
        i = (i + 1) & mask;
    }
    return &slots[i];
}

/* Rebuilds the table without idle sources (open addressing has no cheap delete). */
static void compact(aeron_py_source_table_t *table, const aeron_py_endpoint_filter_config_t *config, int64_t now_ns)
{
    memset(table->spare, 0, table->capacity * sizeof(aeron_py_filter_source_t));
    size_t kept = 0;
    for (size_t i = 0; i < table->capacity; i++)
    {
        const aeron_py_filter_source_t *source = &table->slots[i];
        if (source->used && !source_idle(config, source, now_ns))
        {
            *slot_of(table->spare, table->capacity, source->key) = *source;
            kept++;
        }
    }
    aeron_py_filter_source_t *old = table->slots;
    table->slots = table->spare;
    table->spare = old;
    table->count = kept;
}

aeron_py_filter_source_t *aeron_py_source_table_find_or_add(
    aeron_py_source_table_t *table, const aeron_py_endpoint_filter_config_t *config, aeron_py_source_key_t key,
    int64_t now_ns)
{
    aeron_py_filter_source_t *source = aeron_py_source_table_find(table, key);
    if (NULL != source)
    {
        return source;
    }
    if (table->count >= (size_t)config->max_sources)
    {
        compact(table, config, now_ns);
        if (table->count >= (size_t)config->max_sources)
        {
            return NULL;
        }
    }
    source = slot_of(table->slots, table->capacity, key);
    memset(source, 0, sizeof(*source));
    source->used = true;
    source->key = key;
    source->tokens = config->setup_burst;
    source->refilled_ns = now_ns;
    table->count++;
    return source;
}
