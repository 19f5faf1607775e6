/* Keepalive thinning's table and its decision (see keepalive_table.h). */
#include "keepalive_table.h"

#include <string.h>
#include <netinet/in.h>

#include "aeron_alloc.h"

#define WAYS AERON_PY_THINNING_WAYS
#define SETS (AERON_PY_THINNING_ENTRIES / WAYS)

struct aeron_py_keepalive_entry_stct
{
    const void *transport;                          /* NULL: the entry is free */
    uint8_t address[16];
    uint16_t port;
    int16_t type;                                   /* AERON_HDR_TYPE_DATA or _SM */
    uint8_t flags;
    int32_t session_id;
    int32_t stream_id;
    int32_t term_id;
    int32_t term_offset;
    int32_t window;
    int64_t last_sent_ns;
};

typedef aeron_py_keepalive_entry_t entry_t;

static void key_address(const struct sockaddr_storage *addr, uint8_t address[16], uint16_t *port)
{
    memset(address, 0, 16);
    *port = 0;
    if (NULL == addr)
    {
        return;
    }
    if (AF_INET == addr->ss_family)
    {
        const struct sockaddr_in *in4 = (const struct sockaddr_in *)addr;
        memcpy(address + 12, &in4->sin_addr, 4);
        *port = in4->sin_port;
    }
    else if (AF_INET6 == addr->ss_family)
    {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)addr;
        memcpy(address, &in6->sin6_addr, 16);
        *port = in6->sin6_port;
    }
}

static uint64_t mix(uint64_t h)
{
    h ^= h >> 33;
    h *= UINT64_C(0xff51afd7ed558ccd);
    h ^= h >> 33;
    h *= UINT64_C(0xc4ceb9fe1a85ec53);
    h ^= h >> 33;
    return h;
}

static entry_t *set_of(entry_t *entries, const void *transport, const uint8_t address[16], uint16_t port,
                       const aeron_py_keepalive_t *k)
{
    uint64_t h = (uint64_t)(uintptr_t)transport;
    h = mix(h ^ ((uint64_t)(uint32_t)k->session_id << 32 | (uint32_t)k->stream_id) ^ ((uint64_t)(uint16_t)k->type << 17));
    uint64_t a0, a1;
    memcpy(&a0, address, 8);
    memcpy(&a1, address + 8, 8);
    h = mix(h ^ a0);
    h = mix(h ^ a1 ^ port);
    return &entries[(h % SETS) * WAYS];
}

bool aeron_py_keepalive_table_should_send(
    aeron_py_keepalive_table_t *table,
    const void *transport,
    const struct sockaddr_storage *addr,
    const aeron_py_keepalive_t *k,
    int64_t now_ns,
    int64_t interval_ns)
{
    if (NULL == table->entries)
    {
        if (aeron_alloc((void **)&table->entries, sizeof(entry_t) * AERON_PY_THINNING_ENTRIES) < 0)
        {
            table->entries = NULL;
            return true;                            /* no table: thin nothing */
        }
    }
    uint8_t address[16];
    uint16_t port;
    key_address(addr, address, &port);
    entry_t *set = set_of(table->entries, transport, address, port, k);

    entry_t *slot = NULL;
    for (int i = 0; i < WAYS; i++)
    {
        entry_t *e = &set[i];
        if (e->transport == transport && e->type == k->type && e->session_id == k->session_id &&
            e->stream_id == k->stream_id && e->port == port && 0 == memcmp(e->address, address, 16))
        {
            if (e->term_id == k->term_id && e->term_offset == k->term_offset && e->window == k->window &&
                e->flags == k->flags && now_ns - e->last_sent_ns < interval_ns)
            {
                return false;
            }
            slot = e;
            break;
        }
    }
    if (NULL == slot)                               /* new key: a free way, else the stalest */
    {
        slot = &set[0];
        for (int i = 0; i < WAYS && NULL != slot->transport; i++)
        {
            if (NULL == set[i].transport || set[i].last_sent_ns < slot->last_sent_ns)
            {
                slot = &set[i];
            }
        }
        slot->transport = transport;
        memcpy(slot->address, address, 16);
        slot->port = port;
        slot->type = k->type;
        slot->session_id = k->session_id;
        slot->stream_id = k->stream_id;
    }
    slot->flags = k->flags;
    slot->term_id = k->term_id;
    slot->term_offset = k->term_offset;
    slot->window = k->window;
    slot->last_sent_ns = now_ns;
    return true;
}

void aeron_py_keepalive_table_close(aeron_py_keepalive_table_t *table)
{
    aeron_free(table->entries);
    table->entries = NULL;
}
