/* Endpoint filter: a receive-side UDP channel interceptor for the embedded C media driver.
 *
 * Installed on an aeron_driver_context_t through
 * aeron_driver_context_set_udp_channel_incoming_interceptors, it runs on the driver's
 * receiver (and sender) agent for every datagram, before the driver acts on it, and drops:
 *   - every datagram from a blocklisted address or prefix;
 *   - datagrams to an owned local UDP port from anyone but that port's owner address;
 *   - SETUP frames whose term length exceeds a cap;
 *   - SETUPs of new sessions beyond a per-source token bucket, beyond a cap on concurrent
 *     images per source and beyond a cap in total (owned ports are exempt: only their
 *     owner can reach them);
 *   - SETUPs of new sessions with large terms (above a threshold) beyond a budget of
 *     large-term images per source and in total (owned ports included: a large term is
 *     memory wherever it lands).
 *
 * Rules (blocklist, port owners) live in an immutable table that the owning thread replaces
 * with aeron_py_endpoint_filter_publish, swapped under the driver agents' hazard slots
 * (hazard_swap.h: a table still named after a bounded wait is kept until
 * aeron_py_endpoint_filter_delete). Agents never block or lock.
 *
 * Addresses are 16 bytes: IPv4 as IPv4-mapped IPv6 (::ffff:a.b.c.d), prefix lengths in the
 * 128-bit space (an IPv4 /24 is 96 + 24). This file holds no policy: limits come from callers.
 */
#ifndef AERON_PY_ENDPOINT_FILTER_H
#define AERON_PY_ENDPOINT_FILTER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aeron_driver_context_stct aeron_driver_context_t;

/* Drop reasons; each has one counter. */
typedef enum aeron_py_filter_reason_en
{
    AERON_PY_FILTER_BLOCKLIST = 0,
    AERON_PY_FILTER_PORT_OWNER = 1,
    AERON_PY_FILTER_SETUP_TERM_LENGTH = 2,
    AERON_PY_FILTER_SETUP_RATE = 3,
    AERON_PY_FILTER_SOURCE_IMAGES = 4,
    AERON_PY_FILTER_TOTAL_IMAGES = 5,
    AERON_PY_FILTER_SOURCE_TABLE_FULL = 6,
    AERON_PY_FILTER_SOURCE_LARGE_TERMS = 7,
    AERON_PY_FILTER_TOTAL_LARGE_TERMS = 8,
    AERON_PY_FILTER_REASON_COUNT = 9
}
aeron_py_filter_reason_t;

/* Counter type id of the drop counters in the driver's CnC file (key: int32 reason). */
#define AERON_PY_FILTER_DROP_COUNTER_TYPE_ID (9101)

typedef struct aeron_py_endpoint_filter_config_stct
{
    int64_t max_setup_term_length;   /* 0: no cap */
    double setup_rate;               /* new sessions per second per source; <= 0: unlimited */
    double setup_burst;              /* token bucket size (>= 1 when setup_rate > 0) */
    int32_t max_images_per_source;   /* 0: unlimited */
    int32_t max_images_total;        /* 0: unlimited */
    int32_t ipv4_prefix;             /* 0..32: a source is the IPv4 address masked to this */
    int32_t ipv6_prefix;             /* 0..128 */
    int32_t max_sources;             /* sources tracked at once (> 0) */
    int32_t max_pending;             /* admitted SETUPs awaiting their image (> 0) */
    int64_t pending_timeout_ns;      /* an admitted SETUP without an image is forgotten after this */
    int32_t large_term_length;       /* terms above this are large; 0: no large-term budget */
    int32_t max_large_images_per_source;  /* large-term images (and pending SETUPs); 0: unlimited */
    int32_t max_large_images_total;       /* 0: unlimited */
}
aeron_py_endpoint_filter_config_t;

typedef struct aeron_py_filter_prefix_stct
{
    uint8_t address[16];
    int32_t prefix_length;  /* 0..128 in the 16-byte space */
}
aeron_py_filter_prefix_t;

typedef struct aeron_py_filter_port_owner_stct
{
    uint8_t address[16];
    uint16_t port;
}
aeron_py_filter_port_owner_t;

typedef struct aeron_py_endpoint_filter_stct aeron_py_endpoint_filter_t;

/* A new filter (not yet installed); NULL with errno set on bad config or no memory. */
aeron_py_endpoint_filter_t *aeron_py_endpoint_filter_create(const aeron_py_endpoint_filter_config_t *config);

/* Registers the filter for `context` and puts its bindings at the head of the context's
 * incoming interceptors (before aeron_driver_init). The context frees the bindings. */
int aeron_py_endpoint_filter_install(aeron_py_endpoint_filter_t *filter, aeron_driver_context_t *context);

/* Allocates the drop counters in the driver's CnC file. Call after aeron_driver_init and
 * before aeron_driver_start (the counters manager is the conductor's). */
int aeron_py_endpoint_filter_attach_counters(aeron_py_endpoint_filter_t *filter, aeron_driver_context_t *context);

/* After aeron_driver_close: copies counter values locally and unregisters the context. */
void aeron_py_endpoint_filter_detach(aeron_py_endpoint_filter_t *filter);

/* Replaces the rule table (one publisher at a time: serialised inside). 0, or -1 + errno. */
int aeron_py_endpoint_filter_publish(
    aeron_py_endpoint_filter_t *filter,
    const aeron_py_filter_prefix_t *blocklist,
    size_t blocklist_length,
    const aeron_py_filter_port_owner_t *owners,
    size_t owners_length);

/* The last SETUP dropped for its term length (the cap or the large-term budget). */
typedef struct aeron_py_filter_term_drop_stct
{
    uint8_t address[16];
    int32_t term_length;
    int32_t reason;         /* aeron_py_filter_reason_t */
}
aeron_py_filter_term_drop_t;

/* Copies the last term-length drop into *drop: 1, or 0 when there was none yet (or an agent was
 * writing one at that moment: the next call sees it). Any thread; never blocks the agents. */
int aeron_py_endpoint_filter_last_term_drop(const aeron_py_endpoint_filter_t *filter, aeron_py_filter_term_drop_t *drop);

int64_t aeron_py_endpoint_filter_dropped(const aeron_py_endpoint_filter_t *filter, aeron_py_filter_reason_t reason);
int32_t aeron_py_endpoint_filter_counter_id(const aeron_py_endpoint_filter_t *filter, aeron_py_filter_reason_t reason);
const char *aeron_py_endpoint_filter_reason_name(aeron_py_filter_reason_t reason);

typedef struct aeron_py_traffic_bell_stct aeron_py_traffic_bell_t;

/* The filter's traffic bell (traffic_bell.h): lives as long as the filter. */
aeron_py_traffic_bell_t *aeron_py_endpoint_filter_bell(aeron_py_endpoint_filter_t *filter);

/* Makes the quiet idle strategy (traffic_bell.h) the SHARED idle strategy of `context`, driven
 * by this filter's bell (before aeron_driver_init), and adds its longest period to the
 * context's conductor, sender and receiver cycle thresholds. -1 with errno ENOTSUP when the
 * context's threading mode is not SHARED, EINVAL on bad times (aeron_py_quiet_idle_create). */
int aeron_py_endpoint_filter_install_quiet_idle(
    aeron_py_endpoint_filter_t *filter, aeron_driver_context_t *context, int64_t hot_ns, int64_t period_ns,
    int64_t deep_ns, int64_t deep_period_ns);

/* Frees the filter; only after detach (or if never installed). */
void aeron_py_endpoint_filter_delete(aeron_py_endpoint_filter_t *filter);

#ifdef __cplusplus
}
#endif

#endif
