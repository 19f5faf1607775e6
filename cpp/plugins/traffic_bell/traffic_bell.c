/* Traffic bell and quiet idle strategy (see traffic_bell.h). */
#if defined(__linux__)
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "aeron_alloc.h"
#include "protocol/aeron_udp_protocol.h"

#include "monotonic.h"
#include "traffic_bell.h"

struct aeron_py_traffic_bell_stct
{
    _Atomic int64_t sequence;  /* rings so far */
    _Atomic int64_t last_ns;   /* monotonic time of the latest ring or touch */
    atomic_bool armed;         /* a waiter sleeps on fd */
    int fd;                    /* eventfd */
};

aeron_py_traffic_bell_t *aeron_py_traffic_bell_create(void)
{
    aeron_py_traffic_bell_t *bell = calloc(1, sizeof(aeron_py_traffic_bell_t));
    if (NULL == bell)
    {
        errno = ENOMEM;
        return NULL;
    }
    bell->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (bell->fd < 0)
    {
        const int error = errno;
        free(bell);
        errno = error;
        return NULL;
    }
    atomic_init(&bell->sequence, 0);
    atomic_init(&bell->last_ns, aeron_py_monotonic_ns());
    atomic_init(&bell->armed, false);
    return bell;
}

void aeron_py_traffic_bell_delete(aeron_py_traffic_bell_t *bell)
{
    if (NULL != bell)
    {
        close(bell->fd);
        free(bell);
    }
}

int aeron_py_traffic_bell_fd(const aeron_py_traffic_bell_t *bell)
{
    return bell->fd;
}

bool aeron_py_traffic_is_application(const uint8_t *buffer, size_t length)
{
    if (length < sizeof(aeron_frame_header_t))
    {
        return false;
    }
    aeron_frame_header_t frame;
    memcpy(&frame, buffer, sizeof(frame));
    switch (frame.type)
    {
        case AERON_HDR_TYPE_SETUP:
            return true;
        case AERON_HDR_TYPE_DATA:
        case AERON_HDR_TYPE_PAD:
            /* a heartbeat is a data frame of length 0; end of stream is a flagged one */
            return frame.frame_length > 0 || 0 != (frame.flags & AERON_DATA_HEADER_EOS_FLAG);
        default:
            return false;
    }
}

void aeron_py_traffic_bell_ring(aeron_py_traffic_bell_t *bell, int64_t now_ns)
{
    atomic_fetch_add(&bell->sequence, 1);
    atomic_store_explicit(&bell->last_ns, now_ns, memory_order_release);
    /* seq_cst pair with the waiter's (store armed; load sequence): one of us sees the other */
    if (atomic_load(&bell->armed) && atomic_exchange(&bell->armed, false))
    {
        const uint64_t one = 1;
        ssize_t written = write(bell->fd, &one, sizeof(one));
        (void)written;  /* EAGAIN only when the counter is saturated: it is readable anyway */
    }
}

void aeron_py_traffic_bell_touch(aeron_py_traffic_bell_t *bell, int64_t now_ns)
{
    atomic_store_explicit(&bell->last_ns, now_ns, memory_order_release);
}

int64_t aeron_py_traffic_bell_sequence(aeron_py_traffic_bell_t *bell)
{
    return atomic_load(&bell->sequence);
}

int64_t aeron_py_traffic_bell_last_ns(aeron_py_traffic_bell_t *bell)
{
    return atomic_load_explicit(&bell->last_ns, memory_order_acquire);
}

static void drain(aeron_py_traffic_bell_t *bell)
{
    uint64_t value;
    while (read(bell->fd, &value, sizeof(value)) > 0)
    {
    }
}

int aeron_py_traffic_bell_wait(aeron_py_traffic_bell_t *bell, int64_t seen, int64_t timeout_ns)
{
    drain(bell);  /* a ring for an earlier wait that returned by its sequence check */
    atomic_store(&bell->armed, true);
    if (atomic_load(&bell->sequence) != seen)
    {
        atomic_store(&bell->armed, false);
        return 1;
    }
    struct pollfd pfd = { .fd = bell->fd, .events = POLLIN, .revents = 0 };
    struct timespec timeout = { .tv_sec = timeout_ns / INT64_C(1000000000), .tv_nsec = timeout_ns % INT64_C(1000000000) };
    const int rc = ppoll(&pfd, 1, timeout_ns < 0 ? NULL : &timeout, NULL);
    const int error = errno;
    atomic_store(&bell->armed, false);
    drain(bell);
    if (rc < 0)
    {
        errno = error;
        return -1;
    }
    return atomic_load(&bell->sequence) != seen ? 1 : 0;
}

/* ---- quiet idle strategy ---- */

#define QUIET_MAX_SPINS (10)
#define QUIET_MAX_YIELDS (5)
#define QUIET_MIN_PARK_NS (1000)
#define QUIET_MAX_PARK_NS (1000000)

static bool valid_period(int64_t period_ns)
{
    return period_ns > 0 && period_ns <= INT64_C(1000000000);
}

aeron_py_quiet_idle_t *aeron_py_quiet_idle_create(
    aeron_py_traffic_bell_t *bell, int64_t hot_ns, int64_t period_ns, int64_t deep_ns, int64_t deep_period_ns)
{
    const bool deep = deep_ns > 0;
    if (NULL == bell || hot_ns < 0 || !valid_period(period_ns) ||
        (deep && (deep_ns < hot_ns || !valid_period(deep_period_ns))))
    {
        errno = EINVAL;
        return NULL;
    }
    aeron_py_quiet_idle_t *state = NULL;
    if (aeron_alloc((void **)&state, sizeof(aeron_py_quiet_idle_t)) < 0)
    {
        errno = ENOMEM;
        return NULL;
    }
    state->bell = bell;
    state->hot_ns = hot_ns;
    state->period_ns = period_ns;
    state->deep_ns = deep ? deep_ns : 0;
    state->deep_period_ns = deep ? deep_period_ns : period_ns;
    state->spins = 0;
    state->yields = 0;
    state->park_ns = QUIET_MIN_PARK_NS;
    state->drain = NULL;
    state->requests = NULL;
    state->drain_clientd = NULL;
    return state;
}

int64_t aeron_py_quiet_idle_longest_period_ns(const aeron_py_quiet_idle_t *state)
{
    return state->deep_period_ns > state->period_ns ? state->deep_period_ns : state->period_ns;
}

void aeron_py_quiet_idle_attach_drain(
    void *state_ptr, aeron_py_quiet_idle_drain_func_t drain, aeron_py_quiet_idle_requests_func_t requests, void *clientd)
{
    aeron_py_quiet_idle_t *state = state_ptr;
    state->drain = drain;
    state->requests = requests;
    state->drain_clientd = clientd;
}

/* Items drained per queue per idle call on top of the agents' own work (each runs one command
 * per duty cycle). */
#define QUIET_DRAIN_LIMIT (256)

static void sleep_ns(int64_t duration_ns)
{
    struct timespec ts = { .tv_sec = duration_ns / INT64_C(1000000000), .tv_nsec = duration_ns % INT64_C(1000000000) };
    nanosleep(&ts, NULL);
}

static void backoff_reset(aeron_py_quiet_idle_t *state)
{
    state->spins = 0;
    state->yields = 0;
    state->park_ns = QUIET_MIN_PARK_NS;
}

int64_t aeron_py_quiet_idle_decide(aeron_py_quiet_idle_t *state, int work_count, int64_t now_ns)
{
    const int64_t silence_ns = now_ns - aeron_py_traffic_bell_last_ns(state->bell);
    if (silence_ns >= state->hot_ns)
    {
        /* quiet: one duty cycle per period, whatever it did (heartbeats and status messages
         * wait at most a period; Aeron's own pace for them is 100 and 200 ms, and the
         * liveness timeouts that depend on them are seconds); after deep_ns of silence,
         * one per deep period (install_quiet_idle raised the cycle thresholds to match) */
        backoff_reset(state);
        return state->deep_ns > 0 && silence_ns >= state->deep_ns ? state->deep_period_ns : state->period_ns;
    }
    if (work_count > 0)
    {
        backoff_reset(state);
        return AERON_PY_QUIET_IDLE_SPIN;
    }
    if (state->spins < QUIET_MAX_SPINS)
    {
        state->spins++;
        return AERON_PY_QUIET_IDLE_SPIN;
    }
    if (state->yields < QUIET_MAX_YIELDS)
    {
        state->yields++;
        return AERON_PY_QUIET_IDLE_YIELD;
    }
    const int64_t park_ns = state->park_ns;
    state->park_ns = park_ns * 2 < QUIET_MAX_PARK_NS ? park_ns * 2 : QUIET_MAX_PARK_NS;
    return park_ns;
}

/* Runs the clients' requests waiting now; a request touches the bell (the driver is hot). */
static bool answer_requests(aeron_py_quiet_idle_t *state)
{
    if (NULL == state->requests || state->requests(state->drain_clientd, QUIET_DRAIN_LIMIT) <= 0)
    {
        return false;
    }
    aeron_py_traffic_bell_touch(state->bell, aeron_py_monotonic_ns());
    return true;
}

/* Sleeps `duration_ns` in slices; a client's request or a touch of the bell ends it early. */
static void quiet_sleep(aeron_py_quiet_idle_t *state, int64_t duration_ns)
{
    const int64_t last_ns = aeron_py_traffic_bell_last_ns(state->bell);
    for (int64_t left_ns = duration_ns; left_ns > 0; left_ns -= AERON_PY_QUIET_WAKE_SLICE_NS)
    {
        sleep_ns(left_ns < AERON_PY_QUIET_WAKE_SLICE_NS ? left_ns : AERON_PY_QUIET_WAKE_SLICE_NS);
        if (answer_requests(state) || aeron_py_traffic_bell_last_ns(state->bell) != last_ns)
        {
            return;
        }
    }
}

void aeron_py_quiet_idle(void *state_ptr, int work_count)
{
    aeron_py_quiet_idle_t *state = state_ptr;
    if (answer_requests(state))
    {
        work_count++;
    }
    if (NULL != state->drain)
    {
        work_count += state->drain(state->drain_clientd, QUIET_DRAIN_LIMIT);
    }
    const int64_t action = aeron_py_quiet_idle_decide(state, work_count, aeron_py_monotonic_ns());
    if (AERON_PY_QUIET_IDLE_YIELD == action)
    {
        sched_yield();
    }
    else if (action > QUIET_MAX_PARK_NS)
    {
        quiet_sleep(state, action);  /* quiet: a period, cut short by a request */
    }
    else if (action > 0)
    {
        sleep_ns(action);  /* hot: a backoff park */
    }
}
