/* New-session admission for the endpoint filter: per-source token buckets and counts of the
 * images (and admitted SETUPs still awaiting their image) per source and in total, and the
 * same counts for large-term images (a budget that also covers owned ports).
 * Used only by the receiver agent's filter state: single-threaded, never locks. */
#ifndef AERON_PY_ENDPOINT_FILTER_ADMISSION_H
#define AERON_PY_ENDPOINT_FILTER_ADMISSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "endpoint_filter.h"
#include "endpoint_filter_sources.h"

typedef struct aeron_py_admission_pending_stct aeron_py_admission_pending_t;
typedef struct aeron_py_admission_image_stct aeron_py_admission_image_t;

typedef struct aeron_py_admission_stct
{
    aeron_py_endpoint_filter_config_t config;
    aeron_py_source_table_t sources;
    aeron_py_admission_pending_t *pending;
    size_t pending_count;
    aeron_py_admission_image_t *images;
    size_t image_count;
    size_t image_capacity;
    int64_t counted_total;                    /* counted images + counted pending */
    int64_t large_total;                      /* large-term images + large-term pending */
}
aeron_py_admission_t;

int aeron_py_admission_init(aeron_py_admission_t *admission, const aeron_py_endpoint_filter_config_t *config);
void aeron_py_admission_close(aeron_py_admission_t *admission);

/* True when the config asks for any new-session accounting at all. */
bool aeron_py_admission_enabled(const aeron_py_endpoint_filter_config_t *config);

/* The source key of a 16-byte address under the configured prefixes. */
aeron_py_source_key_t aeron_py_admission_key(const aeron_py_endpoint_filter_config_t *config, const uint8_t address[16]);

/* True when `term_length` counts toward the large-term budget. */
bool aeron_py_admission_is_large(const aeron_py_endpoint_filter_config_t *config, int32_t term_length);

/* Decide on a SETUP for (key, session, stream) arriving on local `port` with `term_length`:
 * returns -1 to admit, else the aeron_py_filter_reason_t to drop for. An `owned` port (only its
 * owner reaches it) is exempt from everything but the large-term budget. */
int aeron_py_admission_on_setup(
    aeron_py_admission_t *admission,
    aeron_py_source_key_t key,
    int32_t session_id,
    int32_t stream_id,
    uint16_t port,
    bool owned,
    int32_t term_length,
    int64_t now_ns);

/* An image was added/removed on the receiver (deduplicated by `image`). `counted` says whether
 * an image with no matching admitted SETUP counts toward the caps; its term length whether it
 * counts toward the large-term budget. */
void aeron_py_admission_on_image_added(
    aeron_py_admission_t *admission,
    const void *image,
    aeron_py_source_key_t key,
    int32_t session_id,
    int32_t stream_id,
    uint16_t port,
    bool counted,
    int32_t term_length,
    int64_t now_ns);
void aeron_py_admission_on_image_removed(aeron_py_admission_t *admission, const void *image);

#endif
