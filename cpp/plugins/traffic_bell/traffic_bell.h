/* Traffic bell: tells the application and the driver's own idle strategy when a datagram
 * carrying application traffic reached the embedded driver.
 *
 * Aeron's receiver writes incoming data straight into the log buffers and offers nothing to
 * wait on, so an idle subscriber must poll. The bell is rung by the endpoint filter's
 * interceptor (endpoint_filter_interceptor.c) on the driver's agent thread, after the driver
 * handled the datagram, for:
 *   - a DATA or PAD frame with a payload, or with the end-of-stream flag;
 *   - a SETUP frame (a new image is coming).
 * Heartbeats (empty DATA frames), status messages, NAKs and RTT measurements do not ring it:
 * they are the driver's business, and at thousands of idle channels they arrive tens of
 * thousands of times a second. A datagram the filter drops touches it (below): a flood keeps
 * the driver draining its sockets at full speed, but wakes nobody.
 *
 * Two users:
 *   - an application thread waits (aeron_py_traffic_bell_wait) instead of polling when it has
 *     been quiet: a sequence number read before its last empty poll is compared again after it
 *     armed the bell, so a ring between the two is never lost (the eventfd is written only when
 *     someone is armed: a ring costs two atomics otherwise);
 *   - the quiet idle strategy (aeron_py_quiet_idle_*), installed as the driver's SHARED idle
 *     strategy: Aeron's usual backoff while traffic is recent, and at most one duty cycle per
 *     `period` once nothing rang the bell (or touched it) for `hot` nanoseconds. A duty cycle
 *     scans every publication and image, so at thousands of idle channels the cycle rate, not
 *     the traffic, is what costs CPU. The times come from the caller; only the mechanism's
 *     own constants are fixed here (the backoff's spins and 1 ms park cap, the drain limit,
 *     the wake slice below).
 *     A client's request (adding or removing a channel, anything but a keepalive) counts as
 *     traffic: while quiet the strategy sleeps in slices of AERON_PY_QUIET_WAKE_SLICE_NS, runs
 *     the requests that arrived meanwhile, and a request or a touch ends the sleep and makes the
 *     driver hot. Without it a quiet driver answered each add a period late (up to 200 ms
 *     deep quiet) and then connected the new channel at one duty cycle per period: a load
 *     opening clients one add at a time crawled at one client per second or two.
 */
#ifndef AERON_PY_TRAFFIC_BELL_H
#define AERON_PY_TRAFFIC_BELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Opaque here (C++ includes this header); defined in traffic_bell.c. */
typedef struct aeron_py_traffic_bell_stct aeron_py_traffic_bell_t;

/* A new bell, or NULL with errno set (no memory, no eventfd). */
aeron_py_traffic_bell_t *aeron_py_traffic_bell_create(void);
void aeron_py_traffic_bell_delete(aeron_py_traffic_bell_t *bell);
/* The eventfd, readable after a ring while armed (for select/epoll users). */
int aeron_py_traffic_bell_fd(const aeron_py_traffic_bell_t *bell);

/* Whether the datagram in `buffer` carries application traffic (see above). */
bool aeron_py_traffic_is_application(const uint8_t *buffer, size_t length);

/* Driver agents: a datagram with application traffic was handled at `now_ns`. */
void aeron_py_traffic_bell_ring(aeron_py_traffic_bell_t *bell, int64_t now_ns);
/* Application: keep the driver out of its quiet mode (e.g. it is about to send), no ring. */
void aeron_py_traffic_bell_touch(aeron_py_traffic_bell_t *bell, int64_t now_ns);
int64_t aeron_py_traffic_bell_sequence(aeron_py_traffic_bell_t *bell);
int64_t aeron_py_traffic_bell_last_ns(aeron_py_traffic_bell_t *bell);
/* Blocks until the sequence differs from `seen` or `timeout_ns` passes (< 0: no limit).
 * 1 rang, 0 timed out, -1 with errno set (EINTR: a signal arrived). One waiter at a time. */
int aeron_py_traffic_bell_wait(aeron_py_traffic_bell_t *bell, int64_t seen, int64_t timeout_ns);

/* ---- the quiet idle strategy (an aeron_idle_strategy_func_t and its state) ---- */

/* Work the strategy runs before each idle decision, on the agent's own thread: up to `limit`
 * items, returns how many it ran (driver_queues.h attaches the drain of the driver's command queues). */
typedef int (*aeron_py_quiet_idle_drain_func_t)(void *clientd, int limit);
/* Runs the clients' commands waiting now (up to `limit`), on the agent's own thread; returns how
 * many were requests (anything but a keepalive). Called before each idle decision and after
 * each slice of a quiet sleep. */
typedef int (*aeron_py_quiet_idle_requests_func_t)(void *clientd, int limit);

/* A quiet sleep is cut into slices this long: the latency of a request to a quiet driver, no
 * more than the usual quiet period's. Each slice is a wake-up: an idle echo server used 0.35 %
 * of a core with none, 2.1-2.5 % with 1 ms slices, 0.75-0.8 % with 10 ms (a VM's timer wake-ups
 * are not cheap). */
#define AERON_PY_QUIET_WAKE_SLICE_NS (INT64_C(20000000))

typedef struct aeron_py_quiet_idle_stct
{
    aeron_py_traffic_bell_t *bell;  /* outlives the driver (the endpoint filter owns it) */
    int64_t hot_ns;                 /* backoff while the last ring/touch is younger than this */
    int64_t period_ns;              /* then at most one duty cycle per period */
    int64_t deep_ns;                /* > 0: after this much silence (>= hot_ns) ... */
    int64_t deep_period_ns;         /* ... one duty cycle per deep period instead */
    int64_t spins;
    int64_t yields;
    int64_t park_ns;
    aeron_py_quiet_idle_drain_func_t drain;  /* NULL, or run between duty cycles (driver_queues.h) */
    aeron_py_quiet_idle_requests_func_t requests;  /* NULL, or run before drain and during quiet sleeps */
    void *drain_clientd;                     /* for both */
}
aeron_py_quiet_idle_t;

/* A state allocated with aeron_alloc (the driver context frees it), or NULL with errno set
 * (EINVAL: hot_ns < 0, a period outside (0, 1 s], or deep_ns > 0 below hot_ns).
 * deep_ns <= 0: no deep quiet (deep_period_ns is then ignored). */
aeron_py_quiet_idle_t *aeron_py_quiet_idle_create(
    aeron_py_traffic_bell_t *bell, int64_t hot_ns, int64_t period_ns, int64_t deep_ns, int64_t deep_period_ns);
/* The longest sleep between two duty cycles the state allows (period or deep period). */
int64_t aeron_py_quiet_idle_longest_period_ns(const aeron_py_quiet_idle_t *state);
void aeron_py_quiet_idle(void *state, int work_count);
/* Before aeron_driver_start: work to run between duty cycles and the clients' requests (either
 * may be NULL; clientd outlives the state). */
void aeron_py_quiet_idle_attach_drain(
    void *state, aeron_py_quiet_idle_drain_func_t drain, aeron_py_quiet_idle_requests_func_t requests, void *clientd);

/* The decision behind aeron_py_quiet_idle, after a duty cycle that did `work_count` at
 * `now_ns`: AERON_PY_QUIET_IDLE_SPIN (return at once), AERON_PY_QUIET_IDLE_YIELD
 * (sched_yield), else the nanoseconds to sleep (> 0). Advances the backoff state. */
#define AERON_PY_QUIET_IDLE_SPIN (0)
#define AERON_PY_QUIET_IDLE_YIELD (-1)
int64_t aeron_py_quiet_idle_decide(aeron_py_quiet_idle_t *state, int work_count, int64_t now_ns);

#ifdef __cplusplus
}
#endif

#endif
