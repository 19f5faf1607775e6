/* New-session admission for the endpoint filter (see endpoint_filter_admission.h). */
#include "endpoint_filter_admission.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct aeron_py_admission_pending_stct
{
    aeron_py_source_key_t key;
    int32_t session_id;
    int32_t stream_id;
    uint16_t port;
    bool counted;      /* holds a place under the image caps (a port without an owner) */
    bool large;        /* holds a place under the large-term budget */
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
    bool large;
};

static bool budgets_large_terms(const aeron_py_endpoint_filter_config_t *config)
{
    return config->large_term_length > 0 && (config->max_large_images_per_source > 0 || config->max_large_images_total > 0);
}

bool aeron_py_admission_enabled(const aeron_py_endpoint_filter_config_t *config)
{
    return config->setup_rate > 0 || config->max_images_per_source > 0 || config->max_images_total > 0 ||
        budgets_large_terms(config);
}

bool aeron_py_admission_is_large(const aeron_py_endpoint_filter_config_t *config, int32_t term_length)
{
    return budgets_large_terms(config) && term_length > config->large_term_length;
}

static bool tracks_sources(const aeron_py_endpoint_filter_config_t *config)
{
    return config->setup_rate > 0 || config->max_images_per_source > 0 ||
        (budgets_large_terms(config) && config->max_large_images_per_source > 0);
}

int aeron_py_admission_init(aeron_py_admission_t *admission, const aeron_py_endpoint_filter_config_t *config)
{
    memset(admission, 0, sizeof(*admission));
    admission->config = *config;
    const int sources = aeron_py_source_table_init(&admission->sources, config->max_sources);
    admission->pending = calloc((size_t)config->max_pending, sizeof(aeron_py_admission_pending_t));
    if (sources < 0 || NULL == admission->pending)
    {
        aeron_py_admission_close(admission);
        errno = ENOMEM;
        return -1;
    }
    return 0;
}

void aeron_py_admission_close(aeron_py_admission_t *admission)
{
    aeron_py_source_table_close(&admission->sources);
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

static void decrement(int32_t *count)
{
    if (*count > 0)
    {
        (*count)--;
    }
}

/* Gives back a place under the image caps (held by a pending SETUP or by an image) and one
 * under the large-term budget, in total and for the source of `key`. */
static void give_back(aeron_py_admission_t *admission, aeron_py_source_key_t key, bool counted, bool large, bool pending)
{
    aeron_py_filter_source_t *source = aeron_py_source_table_find(&admission->sources, key);
    admission->counted_total -= counted ? 1 : 0;
    admission->large_total -= large ? 1 : 0;
    if (NULL != source)
    {
        if (counted)
        {
            decrement(pending ? &source->pending : &source->images);
        }
        if (large)
        {
            decrement(&source->large);
        }
    }
}

/* Gives back the places a pending SETUP holds and forgets it. */
static void pending_release_at(aeron_py_admission_t *admission, size_t index)
{
    const aeron_py_admission_pending_t *pending = &admission->pending[index];
    give_back(admission, pending->key, pending->counted, pending->large, true);
    admission->pending[index] = admission->pending[--admission->pending_count];
}

static void pending_expire(aeron_py_admission_t *admission, int64_t now_ns)
{
    for (size_t i = 0; i < admission->pending_count;)
    {
        if (admission->pending[i].expires_ns <= now_ns)
        {
            pending_release_at(admission, i);
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
    return session_a == session_b && stream_a == stream_b && port_a == port_b && aeron_py_source_key_equals(key_a, key_b);
}

/* The per-source rules for a new session: a drop reason, or -1 (then its places are taken). */
static int source_reason(
    aeron_py_admission_t *admission, aeron_py_filter_source_t *source, bool counted, bool large, int64_t now_ns)
{
    const aeron_py_endpoint_filter_config_t *config = &admission->config;
    if (counted && config->max_images_per_source > 0 && source->images + source->pending >= config->max_images_per_source)
    {
        return AERON_PY_FILTER_SOURCE_IMAGES;
    }
    if (large && config->max_large_images_per_source > 0 && source->large >= config->max_large_images_per_source)
    {
        return AERON_PY_FILTER_SOURCE_LARGE_TERMS;
    }
    if (counted && config->setup_rate > 0)
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
    source->pending += counted ? 1 : 0;
    source->large += large ? 1 : 0;
    return -1;
}

static bool known_session(
    const aeron_py_admission_t *admission, aeron_py_source_key_t key, int32_t session_id, int32_t stream_id, uint16_t port)
{
    for (size_t i = 0; i < admission->image_count; i++)
    {
        const aeron_py_admission_image_t *image = &admission->images[i];
        if (same_session(image->key, image->session_id, image->stream_id, image->port, key, session_id, stream_id, port))
        {
            return true;
        }
    }
    for (size_t i = 0; i < admission->pending_count; i++)
    {
        const aeron_py_admission_pending_t *pending = &admission->pending[i];
        if (same_session(pending->key, pending->session_id, pending->stream_id, pending->port, key, session_id, stream_id, port))
        {
            return true;
        }
    }
    return false;
}

int aeron_py_admission_on_setup(
    aeron_py_admission_t *admission,
    aeron_py_source_key_t key,
    int32_t session_id,
    int32_t stream_id,
    uint16_t port,
    bool owned,
    int32_t term_length,
    int64_t now_ns)
{
    const aeron_py_endpoint_filter_config_t *config = &admission->config;
    const bool counted = !owned;
    const bool large = aeron_py_admission_is_large(config, term_length);
    pending_expire(admission, now_ns);
    if ((!counted && !large) || known_session(admission, key, session_id, stream_id, port))
    {
        return -1;
    }
    if ((counted && config->max_images_total > 0 && admission->counted_total >= config->max_images_total) ||
        admission->pending_count >= (size_t)config->max_pending)
    {
        return AERON_PY_FILTER_TOTAL_IMAGES;
    }
    if (large && config->max_large_images_total > 0 && admission->large_total >= config->max_large_images_total)
    {
        return AERON_PY_FILTER_TOTAL_LARGE_TERMS;
    }
    if (tracks_sources(config))
    {
        aeron_py_filter_source_t *source = aeron_py_source_table_find_or_add(&admission->sources, &admission->config, key, now_ns);
        const int reason = NULL == source ? AERON_PY_FILTER_SOURCE_TABLE_FULL :
            source_reason(admission, source, counted, large, now_ns);
        if (reason >= 0)
        {
            return reason;
        }
    }
    aeron_py_admission_pending_t *pending = &admission->pending[admission->pending_count++];
    pending->key = key;
    pending->session_id = session_id;
    pending->stream_id = stream_id;
    pending->port = port;
    pending->counted = counted;
    pending->large = large;
    pending->expires_ns = now_ns + config->pending_timeout_ns;
    admission->counted_total += counted ? 1 : 0;
    admission->large_total += large ? 1 : 0;
    return -1;
}

static bool images_reserve(aeron_py_admission_t *admission)
{
    if (admission->image_count < admission->image_capacity)
    {
        return true;
    }
    const size_t capacity = 0 == admission->image_capacity ? 64 : 2 * admission->image_capacity;
    aeron_py_admission_image_t *grown = realloc(admission->images, capacity * sizeof(aeron_py_admission_image_t));
    if (NULL == grown)
    {
        return false;
    }
    admission->images = grown;
    admission->image_capacity = capacity;
    return true;
}

/* The matching pending SETUP's places move to the image: true for each it held (*counted, *large). */
static void pending_to_image(
    aeron_py_admission_t *admission, aeron_py_source_key_t key, int32_t session_id, int32_t stream_id, uint16_t port,
    bool *counted, bool *large)
{
    *counted = false;
    *large = false;
    for (size_t i = 0; i < admission->pending_count; i++)
    {
        aeron_py_admission_pending_t *pending = &admission->pending[i];
        if (same_session(pending->key, pending->session_id, pending->stream_id, pending->port, key, session_id, stream_id, port))
        {
            aeron_py_filter_source_t *source = aeron_py_source_table_find(&admission->sources, key);
            if (pending->counted && NULL != source)
            {
                decrement(&source->pending);
                source->images++;
            }
            *counted = pending->counted;
            *large = pending->large;
            admission->pending[i] = admission->pending[--admission->pending_count];
            return;
        }
    }
}

void aeron_py_admission_on_image_added(
    aeron_py_admission_t *admission,
    const void *image,
    aeron_py_source_key_t key,
    int32_t session_id,
    int32_t stream_id,
    uint16_t port,
    bool counted,
    int32_t term_length,
    int64_t now_ns)
{
    for (size_t i = 0; i < admission->image_count; i++)
    {
        if (admission->images[i].image == image)
        {
            return;  /* one notification per destination of a multi-destination subscription */
        }
    }
    if (!images_reserve(admission))
    {
        return;  /* untracked: it will not count toward the caps */
    }
    bool held_counted, held_large;
    pending_to_image(admission, key, session_id, stream_id, port, &held_counted, &held_large);
    counted = counted || held_counted;
    const bool large = held_large || aeron_py_admission_is_large(&admission->config, term_length);
    const bool new_counted = counted && !held_counted, new_large = large && !held_large;
    admission->counted_total += new_counted ? 1 : 0;
    admission->large_total += new_large ? 1 : 0;
    aeron_py_filter_source_t *source = (new_counted || new_large) && tracks_sources(&admission->config) ?
        aeron_py_source_table_find_or_add(&admission->sources, &admission->config, key, now_ns) : NULL;
    if (NULL != source)
    {
        source->images += new_counted ? 1 : 0;
        source->large += new_large ? 1 : 0;
    }
    aeron_py_admission_image_t *record = &admission->images[admission->image_count++];
    record->image = image;
    record->key = key;
    record->session_id = session_id;
    record->stream_id = stream_id;
    record->port = port;
    record->counted = counted;
    record->large = large;
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
        give_back(admission, record->key, record->counted, record->large, false);
        *record = admission->images[--admission->image_count];
        return;
    }
}
