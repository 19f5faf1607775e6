/* The endpoint filter's immutable rule table (see endpoint_filter_table.h). */
#include "endpoint_filter_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct aeron_py_filter_table_prefix_stct
{
    int32_t length;
    uint64_t hi;
    uint64_t lo;
}
prefix_entry_t;

static void split(const uint8_t address[16], int32_t length, uint64_t *hi, uint64_t *lo)
{
    uint64_t h = 0, l = 0;
    for (int i = 0; i < 8; i++)
    {
        h = (h << 8) | address[i];
        l = (l << 8) | address[8 + i];
    }
    *hi = h & (length >= 64 ? UINT64_MAX : (length <= 0 ? 0 : UINT64_MAX << (64 - length)));
    *lo = l & (length >= 128 ? UINT64_MAX : (length <= 64 ? 0 : UINT64_MAX << (128 - length)));
}

static int compare_prefix(const prefix_entry_t *a, const prefix_entry_t *b)
{
    if (a->length != b->length)
    {
        return a->length < b->length ? -1 : 1;
    }
    if (a->hi != b->hi)
    {
        return a->hi < b->hi ? -1 : 1;
    }
    return a->lo == b->lo ? 0 : (a->lo < b->lo ? -1 : 1);
}

static int compare_prefix_qsort(const void *a, const void *b)
{
    return compare_prefix(a, b);
}

static int compare_owner(const void *a, const void *b)
{
    const uint16_t pa = ((const aeron_py_filter_port_owner_t *)a)->port;
    const uint16_t pb = ((const aeron_py_filter_port_owner_t *)b)->port;
    return pa == pb ? 0 : (pa < pb ? -1 : 1);
}

aeron_py_filter_table_t *aeron_py_filter_table_create(
    const aeron_py_filter_prefix_t *blocklist,
    size_t blocklist_length,
    const aeron_py_filter_port_owner_t *owners,
    size_t owners_length)
{
    for (size_t i = 0; i < blocklist_length; i++)
    {
        if (blocklist[i].prefix_length < 0 || blocklist[i].prefix_length > 128)
        {
            errno = EINVAL;
            return NULL;
        }
    }
    aeron_py_filter_table_t *table = calloc(1, sizeof(aeron_py_filter_table_t));
    if (NULL == table)
    {
        errno = ENOMEM;
        return NULL;
    }
    table->prefixes = calloc(blocklist_length + 1, sizeof(prefix_entry_t));
    table->owners = calloc(owners_length + 1, sizeof(aeron_py_filter_port_owner_t));
    if (NULL == table->prefixes || NULL == table->owners)
    {
        aeron_py_filter_table_delete(table);
        errno = ENOMEM;
        return NULL;
    }
    for (size_t i = 0; i < blocklist_length; i++)
    {
        prefix_entry_t *entry = &table->prefixes[i];
        entry->length = blocklist[i].prefix_length;
        split(blocklist[i].address, entry->length, &entry->hi, &entry->lo);
    }
    qsort(table->prefixes, blocklist_length, sizeof(prefix_entry_t), compare_prefix_qsort);
    for (size_t i = 0; i < blocklist_length; i++)
    {
        if (0 == table->prefix_count || 0 != compare_prefix(&table->prefixes[table->prefix_count - 1], &table->prefixes[i]))
        {
            table->prefixes[table->prefix_count++] = table->prefixes[i];
        }
        if (0 == table->length_count || table->lengths[table->length_count - 1] != table->prefixes[i].length)
        {
            table->lengths[table->length_count++] = table->prefixes[i].length;
        }
    }
    if (owners_length > 0)
    {
        memcpy(table->owners, owners, owners_length * sizeof(aeron_py_filter_port_owner_t));
        qsort(table->owners, owners_length, sizeof(aeron_py_filter_port_owner_t), compare_owner);
        for (size_t i = 0; i < owners_length; i++)
        {
            if (0 == table->owner_count || table->owners[table->owner_count - 1].port != table->owners[i].port)
            {
                table->owners[table->owner_count++] = table->owners[i];
            }
            else
            {
                table->owners[table->owner_count - 1] = table->owners[i];  /* duplicates: one of them wins (callers pass one per port) */
            }
        }
    }
    return table;
}

void aeron_py_filter_table_delete(aeron_py_filter_table_t *table)
{
    if (NULL != table)
    {
        free(table->prefixes);
        free(table->owners);
        free(table);
    }
}

bool aeron_py_filter_table_blocks(const aeron_py_filter_table_t *table, const uint8_t address[16])
{
    for (size_t l = 0; l < table->length_count; l++)
    {
        prefix_entry_t probe;
        probe.length = table->lengths[l];
        split(address, probe.length, &probe.hi, &probe.lo);
        size_t low = 0, high = table->prefix_count;
        while (low < high)
        {
            const size_t mid = low + (high - low) / 2;
            const int c = compare_prefix(&table->prefixes[mid], &probe);
            if (0 == c)
            {
                return true;
            }
            if (c < 0)
            {
                low = mid + 1;
            }
            else
            {
                high = mid;
            }
        }
    }
    return false;
}

const uint8_t *aeron_py_filter_table_owner(const aeron_py_filter_table_t *table, uint16_t port)
{
    size_t low = 0, high = table->owner_count;
    while (low < high)
    {
        const size_t mid = low + (high - low) / 2;
        const uint16_t p = table->owners[mid].port;
        if (p == port)
        {
            return table->owners[mid].address;
        }
        if (p < port)
        {
            low = mid + 1;
        }
        else
        {
            high = mid;
        }
    }
    return NULL;
}
