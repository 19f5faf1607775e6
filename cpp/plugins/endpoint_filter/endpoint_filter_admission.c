/* New-session admission for the endpoint filter (see endpoint_filter_admission.h). */
#include "endpoint_filter_admission.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct aeron_py_admission_source_stct
{
    aeron_py_source_key_t key;
    bool used;
    int32_t images;    /* counted images from this source */
    int32_t pending;   /* admitted SETUPs awaiting their image */
    double tokens;
    int64_t refilled_ns;
};

struct aeron_py_admission_pending_stct
{
    aeron_py_source_key_t key;
    int32_t session_id;
    int32_t stream_id;
    uint16_t port;
    int64_t expires_ns;
};

struct aeron_py_admission_image_stct
{
    const void *image;
    aeron_py_source_key_t key;
    int32_t session_id;
    int32_t stream_id;
    uint16_t port;
    bool counted;
};

static bool key_equals(aeron_py_source_key_t a, aeron_py_source_key_t b)
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

bool aeron_py_admission_enabled(const aeron_py_endpoint_filter_config_t *config)
{
    return config->setup_rate > 0 || config->max_images_per_source > 0 || config->max_images_total > 0;
}

static bool tracks_sources(const aeron_py_endpoint_filter_config_t *config)
{
    return config->setup_rate > 0 || config->max_images_per_source > 0;
}

int aeron_py_admission_init(aeron_py_admission_t *admission, const aeron_py_endpoint_filter_config_t *config)
{
    memset(admission, 0, sizeof(*admission));
    admission->config = *config;
    size_t capacity = 16;
    while (capacity < 2 * (size_t)config->max_sources)
    {
        capacity <<= 1;
    }
    admission->source_capacity = capacity;
    admission->sources = calloc(capacity, sizeof(aeron_py_admission_source_t));
    admission->spare = calloc(capacity, sizeof(aeron_py_admission_source_t));
    admission->pending = calloc((size_t)config->max_pending, sizeof(aeron_py_admission_pending_t));
    if (NULL == admission->sources || NULL == admission->spare || NULL == admission->pending)
    {
        aeron_py_admission_close(admission);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void aeron_py_admission_close(aeron_py_admission_t *admission)
{
    free(admission->sources);
    free(admission->spare);
    free(admission->pending);
    free(admission->images);
    memset(admission, 0, sizeof(*admission));
}

aeron_py_source_key_t aeron_py_admission_key(const aeron_py_endpoint_filter_config_t *config, const uint8_t address[16])
{
    static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF };
    const int prefix = 0 == memcmp(address, v4_mapped, sizeof(v4_mapped)) ?
        96 + config->ipv4_prefix : config->ipv6_prefix;
    uint64_t hi = 0, lo = 0;
    for (int i = 0; i < 8; i++)
    {
        hi = (hi << 8) | address[i];
        lo = (lo << 8) | address[8 + i];
    }
    const uint64_t hi_mask = prefix >= 64 ? UINT64_MAX : (prefix <= 0 ? 0 : UINT64_MAX << (64 - prefix));
    const uint64_t lo_mask = prefix >= 128 ? UINT64_MAX : (prefix <= 64 ? 0 : UINT64_MAX << (128 - prefix));
    aeron_py_source_key_t key = { hi & hi_mask, lo & lo_mask };
    return key;
}

static bool source_idle(const aeron_py_admission_t *admission, const aeron_py_admission_source_t *source, int64_t now_ns)
{
    if (source->images > 0 || source->pending > 0)
    {
        return false;
    }
    if (admission->config.setup_rate <= 0)
    {
        return true;
    }
    const double refill = (double)(now_ns - source->refilled_ns) * admission->config.setup_rate / 1e9;
    return source->tokens + refill >= admission->config.setup_burst;
}

static aeron_py_admission_source_t *source_find(aeron_py_admission_t *admission, aeron_py_source_key_t key)
{
    const size_t mask = admission->source_capacity - 1;
    for (size_t i = key_hash(key, admission->source_capacity), n = 0; n < admission->source_capacity; i = (i + 1) & mask, n++)
    {
        aeron_py_admission_source_t *source = &admission->sources[i];
        if (!source->used)
        {
            return NULL;
        }
        if (key_equals(source->key, key))
        {
            return source;
        }
    }
    return NULL;
}

static aeron_py_admission_source_t *source_slot(aeron_py_admission_source_t *table, size_t capacity, aeron_py_source_key_t key)
{
    const size_t mask = capacity - 1;
    size_t i = key_hash(key, capacity);
    while (table[i].used && !key_equals(table[i].key, key))
    {
        i = (i + 1) & mask;
    }
    return &table[i];
}

/* Rebuilds the table without idle sources (open addressing has no cheap delete). */
static void sources_compact(aeron_py_admission_t *admission, int64_t now_ns)
{
    memset(admission->spare, 0, admission->source_capacity * sizeof(aeron_py_admission_source_t));
    size_t kept = 0;
    for (size_t i = 0; i < admission->source_capacity; i++)
    {
        const aeron_py_admission_source_t *source = &admission->sources[i];
        if (source->used && !source_idle(admission, source, now_ns))
        {
            *source_slot(admission->spare, admission->source_capacity, source->key) = *source;
            kept++;
        }
    }
    aeron_py_admission_source_t *old = admission->sources;
    admission->sources = admission->spare;
    admission->spare = old;
    admission->source_count = kept;
}

static aeron_py_admission_source_t *source_find_or_add(
    aeron_py_admission_t *admission, aeron_py_source_key_t key, int64_t now_ns)
{
    aeron_py_admission_source_t *source = source_find(admission, key);
    if (NULL != source)
    {
        return source;
    }
    if (admission->source_count >= (size_t)admission->config.max_sources)
    {
        sources_compact(admission, now_ns);
        if (admission->source_count >= (size_t)admission->config.max_sources)
        {
            return NULL;
        }
    }
    source = source_slot(admission->sources, admission->source_capacity, key);
    source->used = true;
    source->key = key;
    source->images = 0;
    source->pending = 0;
    source->tokens = admission->config.setup_burst;
    source->refilled_ns = now_ns;
    admission->source_count++;
    return source;
}

static void pending_remove_at(aeron_py_admission_t *admission, size_t index)
{
    aeron_py_admission_source_t *source = source_find(admission, admission->pending[index].key);
    if (NULL != source && source->pending > 0)
    {
        source->pending--;
    }
    admission->pending[index] = admission->pending[--admission->pending_count];
}

static void pending_expire(aeron_py_admission_t *admission, int64_t now_ns)
{
    for (size_t i = 0; i < admission->pending_count;)
    {
        if (admission->pending[i].expires_ns <= now_ns)
        {
            pending_remove_at(admission, i);
            admission->counted_total--;
        }
        else
        {
            i++;
        }
    }
}

static bool same_session(
    aeron_py_source_key_t key_a, int32_t session_a, int32_t stream_a, uint16_t port_a,
    aeron_py_source_key_t key_b, int32_t session_b, int32_t stream_b, uint16_t port_b)
{
    return session_a == session_b && stream_a == stream_b && port_a == port_b && key_equals(key_a, key_b);
}

int aeron_py_admission_on_setup(
    aeron_py_admission_t *admission,
    aeron_py_source_key_t key,
    int32_t session_id,
    int32_t stream_id,
    uint16_t port,
    int64_t now_ns)
{
    const aeron_py_endpoint_filter_config_t *config = &admission->config;
    pending_expire(admission, now_ns);
    for (size_t i = 0; i < admission->image_count; i++)
    {
        const aeron_py_admission_image_t *image = &admission->images[i];
        if (same_session(image->key, image->session_id, image->stream_id, image->port, key, session_id, stream_id, port))
        {
            return -1;
        }
    }
    for (size_t i = 0; i < admission->pending_count; i++)
    {
        const aeron_py_admission_pending_t *pending = &admission->pending[i];
        if (same_session(pending->key, pending->session_id, pending->stream_id, pending->port, key, session_id, stream_id, port))
        {
            return -1;
        }
    }
    if ((config->max_images_total > 0 && admission->counted_total >= config->max_images_total) ||
        admission->pending_count >= (size_t)config->max_pending)
    {
        return AERON_PY_FILTER_TOTAL_IMAGES;
    }
    aeron_py_admission_source_t *source = NULL;
    if (tracks_sources(config))
    {
        if (NULL == (source = source_find_or_add(admission, key, now_ns)))
        {
            return AERON_PY_FILTER_SOURCE_TABLE_FULL;
        }
        if (config->max_images_per_source > 0 && source->images + source->pending >= config->max_images_per_source)
        {
            return AERON_PY_FILTER_SOURCE_IMAGES;
        }
        if (config->setup_rate > 0)
        {
            const double refill = (double)(now_ns - source->refilled_ns) * config->setup_rate / 1e9;
            source->tokens = source->tokens + refill > config->setup_burst ? config->setup_burst : source->tokens + refill;
            source->refilled_ns = now_ns;
            if (source->tokens < 1.0)
            {
                return AERON_PY_FILTER_SETUP_RATE;
            }
            source->tokens -= 1.0;
        }
        source->pending++;
    }
    aeron_py_admission_pending_t *pending = &admission->pending[admission->pending_count++];
    pending->key = key;
    pending->session_id = session_id;
    pending->stream_id = stream_id;
    pending->port = port;
    pending->expires_ns = now_ns + config->pending_timeout_ns;
    admission->counted_total++;
    return -1;
}

void aeron_py_admission_on_image_added(
    aeron_py_admission_t *admission,
    const void *image,
    aeron_py_source_key_t key,
    int32_t session_id,
    int32_t stream_id,
    uint16_t port,
    bool counted,
    int64_t now_ns)
{
    for (size_t i = 0; i < admission->image_count; i++)
    {
        if (admission->images[i].image == image)
        {
            return;  /* one notification per destination of a multi-destination subscription */
        }
    }
    if (admission->image_count == admission->image_capacity)
    {
        const size_t capacity = 0 == admission->image_capacity ? 64 : 2 * admission->image_capacity;
        aeron_py_admission_image_t *grown = realloc(admission->images, capacity * sizeof(aeron_py_admission_image_t));
        if (NULL == grown)
        {
            return;  /* untracked: it will not count toward the caps */
        }
        admission->images = grown;
        admission->image_capacity = capacity;
    }
    bool was_pending = false;
    for (size_t i = 0; i < admission->pending_count; i++)
    {
        const aeron_py_admission_pending_t *pending = &admission->pending[i];
        if (same_session(pending->key, pending->session_id, pending->stream_id, pending->port, key, session_id, stream_id, port))
        {
            pending_remove_at(admission, i);  /* its count moves from pending to image */
            was_pending = true;
            break;
        }
    }
    counted = counted || was_pending;
    if (counted)
    {
        if (!was_pending)
        {
            admission->counted_total++;
        }
        if (tracks_sources(&admission->config))
        {
            aeron_py_admission_source_t *source = source_find_or_add(admission, key, now_ns);
            if (NULL != source)
            {
                source->images++;
            }
        }
    }
    aeron_py_admission_image_t *record = &admission->images[admission->image_count++];
    record->image = image;
    record->key = key;
    record->session_id = session_id;
    record->stream_id = stream_id;
    record->port = port;
    record->counted = counted;
}

void aeron_py_admission_on_image_removed(aeron_py_admission_t *admission, const void *image)
{
    for (size_t i = 0; i < admission->image_count; i++)
    {
        aeron_py_admission_image_t *record = &admission->images[i];
        if (record->image != image)
        {
            continue;
        }
        if (record->counted)
        {
            admission->counted_total--;
            aeron_py_admission_source_t *source = source_find(admission, record->key);
            if (NULL != source && source->images > 0)
            {
                source->images--;
            }
        }
        *record = admission->images[--admission->image_count];
        return;
    }
}
