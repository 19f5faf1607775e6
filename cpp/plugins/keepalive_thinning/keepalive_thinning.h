/* Keepalive thinning: fewer idle heartbeats and status messages from this driver.
 *
 * An idle Aeron stream keeps talking: its publication sends a heartbeat (a DATA frame
 * with no payload) every 100 ms (AERON_NETWORK_PUBLICATION_HEARTBEAT_TIMEOUT_NS, compiled
 * into Aeron) and its receiver a status message every 200 ms (status_message_timeout,
 * which also paces connection setup and image draining, so it cannot simply be raised).
 * The other side needs one now and then: a heartbeat keeps the image alive (image
 * liveness timeout, 10 s by default), a status message keeps the publication connected
 * and an MDC destination known (5 s). A server holding thousands of idle duologues sends
 * fifteen a second per duologue: ~15,000 sendmsg calls a second at 1,000, most of its
 * idle CPU.
 *
 * This outgoing interceptor (installed on the driver context before aeron_driver_init)
 * lets a keepalive, a heartbeat or a status message, reach the socket only when
 *   - it is the first this agent sees for its (transport, destination, session, stream,
 *     type), or
 *   - what it says differs from the last one that went out for that key: a heartbeat's
 *     position (data was sent since: tail-loss detection is not delayed), a status
 *     message's consumption position, window or flags (flow control and SETUP requests
 *     are not delayed), or
 *   - it carries END OF STREAM (or REVOKED), or
 *   - `interval_ns` passed since the last one that went out for that key.
 * Any other is reported as sent (the sender cannot tell) and counted in the CnC counter
 * "aeron_py keepalives thinned". Every other frame passes untouched.
 *
 * The table is per driver agent (each agent has its own interceptor state, used only on
 * its thread: the sender sends heartbeats, the receiver status messages), fixed-size
 * (4-way set associative, AERON_PY_THINNING_ENTRIES), allocated when first needed. A key
 * evicted by a collision simply sends its next keepalive: the table fails open.
 * Files: keepalive_frames.c (which frames are keepalives), keepalive_table.c (the table and
 * the decision), this interceptor and the context's setting in keepalive_thinning.c.
 * No policy here: the interval comes from the caller.
 */
#ifndef AERON_PY_KEEPALIVE_THINNING_H
#define AERON_PY_KEEPALIVE_THINNING_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct aeron_driver_context_stct aeron_driver_context_t;

#define AERON_PY_THINNING_COUNTER_TYPE_ID (9102)

/* Before aeron_driver_init: thin this context's keepalives to one per `interval_ns` (> 0)
 * per key. 0, or -1 with errno set (EINVAL, ENOMEM). */
int aeron_py_driver_context_set_keepalive_interval(aeron_driver_context_t *context, int64_t interval_ns);

/* Before aeron_driver_init: thin only the keepalives of channels whose socket is bound to a
 * local port in [low, high] (default: every port). Heartbeats also make a receiver ask for
 * SETUP when a new subscription joins a stream it already has an endpoint for (a late
 * joiner sharing a driver with earlier subscribers): a channel that expects late joiners
 * is better left out. 0, or -1 with errno set (EINVAL, ENOMEM). */
int aeron_py_driver_context_set_keepalive_ports(aeron_driver_context_t *context, int32_t low, int32_t high);

/* The interval set on this context, 0 if none. */
int64_t aeron_py_driver_context_keepalive_interval(aeron_driver_context_t *context);

/* After aeron_driver_init, before aeron_driver_start: allocates the CnC counter of thinned
 * keepalives (when thinning is installed). 0 (also when not installed) or -1 (ENOSPC). */
int aeron_py_keepalive_thinning_attach_counter(aeron_driver_context_t *context);

#ifdef __cplusplus
}
#endif

#endif
