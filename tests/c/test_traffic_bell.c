/* The traffic bell and the quiet idle strategy (cpp/plugins/traffic_bell/traffic_bell.c):
 * which datagrams are application traffic, ring/touch/sequence, waiting (sequence check,
 * timeout, eventfd written only for an armed waiter), and the quiet idle decisions
 * (backoff while hot, one sleep per period when quiet, the deep period, the drain hook, a
 * quiet sleep ended by a client's request or a touch). */
#include <errno.h>
#include <poll.h>
#include <pthread.h>

#include "aeron_alloc.h"
#include "protocol/aeron_udp_protocol.h"

#include "monotonic.h"
#include "traffic_bell/traffic_bell.h"

#include "check.h"

#define MS INT64_C(1000000)

static bool is_application(int16_t type, int32_t frame_length, uint8_t flags, size_t length)
{
    uint8_t buffer[64] = { 0 };
    aeron_frame_header_t *frame = (aeron_frame_header_t *)buffer;
    frame->type = type;
    frame->frame_length = frame_length;
    frame->flags = flags;
    return aeron_py_traffic_is_application(buffer, length);
}

static void application_traffic_is_data_with_payload_eos_or_setup(void)
{
    CHECK(is_application(AERON_HDR_TYPE_DATA, 64, 0, 64), "a data frame with a payload");
    CHECK(!is_application(AERON_HDR_TYPE_DATA, 0, 0, 32), "a heartbeat (empty data frame) counted as traffic");
    CHECK(is_application(AERON_HDR_TYPE_DATA, 0, AERON_DATA_HEADER_EOS_FLAG, 32), "an end-of-stream heartbeat");
    CHECK(is_application(AERON_HDR_TYPE_PAD, 64, 0, 64), "a padding frame with a length");
    CHECK(is_application(AERON_HDR_TYPE_SETUP, 40, 0, 40), "a SETUP");
    CHECK(!is_application(AERON_HDR_TYPE_SM, 36, 0, 36), "a status message counted as traffic");
    CHECK(!is_application(AERON_HDR_TYPE_NAK, 28, 0, 28), "a NAK counted as traffic");
    CHECK(!is_application(AERON_HDR_TYPE_RTTM, 40, 0, 40), "an RTT measurement counted as traffic");
    CHECK(!is_application(AERON_HDR_TYPE_DATA, 64, 0, 4), "a datagram shorter than a frame header");
}

static void ring_counts_touch_only_moves_the_time(void)
{
    aeron_py_traffic_bell_t *bell = aeron_py_traffic_bell_create();
    CHECK(NULL != bell, "create: errno %d", errno);
    CHECK(0 == aeron_py_traffic_bell_sequence(bell), "a new bell has rung");
    aeron_py_traffic_bell_ring(bell, 100);
    CHECK(1 == aeron_py_traffic_bell_sequence(bell), "ring: sequence %lld", (long long)aeron_py_traffic_bell_sequence(bell));
    CHECK(100 == aeron_py_traffic_bell_last_ns(bell), "ring: last_ns %lld", (long long)aeron_py_traffic_bell_last_ns(bell));
    aeron_py_traffic_bell_touch(bell, 250);
    CHECK(1 == aeron_py_traffic_bell_sequence(bell), "touch changed the sequence");
    CHECK(250 == aeron_py_traffic_bell_last_ns(bell), "touch: last_ns %lld", (long long)aeron_py_traffic_bell_last_ns(bell));
    aeron_py_traffic_bell_delete(bell);
}

static bool fd_readable(const aeron_py_traffic_bell_t *bell)
{
    struct pollfd pfd = { .fd = aeron_py_traffic_bell_fd(bell), .events = POLLIN, .revents = 0 };
    return 1 == poll(&pfd, 1, 0);
}

static void wait_returns_at_once_for_a_missed_ring_and_times_out_otherwise(void)
{
    aeron_py_traffic_bell_t *bell = aeron_py_traffic_bell_create();
    const int64_t seen = aeron_py_traffic_bell_sequence(bell);
    aeron_py_traffic_bell_ring(bell, aeron_py_monotonic_ns());
    CHECK(!fd_readable(bell), "a ring with no waiter armed wrote the eventfd");
    CHECK(1 == aeron_py_traffic_bell_wait(bell, seen, -1), "a ring after `seen` was lost (no timeout: would block)");
    const int64_t start = aeron_py_monotonic_ns();
    const int rc = aeron_py_traffic_bell_wait(bell, aeron_py_traffic_bell_sequence(bell), 20 * MS);
    const int64_t waited = aeron_py_monotonic_ns() - start;
    CHECK(0 == rc, "no ring: wait returned %d, expected 0 (timeout)", rc);
    CHECK(waited >= 15 * MS && waited < 5000 * MS, "a 20 ms timeout waited %lld ns", (long long)waited);
    aeron_py_traffic_bell_delete(bell);
}

/* Rings while the main thread waits or is about to: armed (the eventfd wakes it) or not yet
 * (its sequence check sees the ring), the wait must return 1 either way, never time out. */
static void *ring_now(void *bell)
{
    aeron_py_traffic_bell_ring(bell, aeron_py_monotonic_ns());
    return NULL;
}

static void a_ring_wakes_a_waiter(void)
{
    aeron_py_traffic_bell_t *bell = aeron_py_traffic_bell_create();
    const int64_t seen = aeron_py_traffic_bell_sequence(bell);
    pthread_t ringer;
    pthread_create(&ringer, NULL, ring_now, bell);
    const int rc = aeron_py_traffic_bell_wait(bell, seen, 10000 * MS);
    pthread_join(ringer, NULL);
    CHECK(1 == rc, "a ring from another thread: wait returned %d, expected 1", rc);
    aeron_py_traffic_bell_delete(bell);
}

static void quiet_idle_rejects_bad_times(void)
{
    aeron_py_traffic_bell_t *bell = aeron_py_traffic_bell_create();
    const int64_t bad[][4] = {
        { -1, 10 * MS, 0, 0 },               /* hot < 0 */
        { 0, 0, 0, 0 },                      /* no period */
        { 0, 1001 * MS, 0, 0 },              /* period over 1 s */
        { 50 * MS, 10 * MS, 20 * MS, 100 * MS },  /* deep below hot */
        { 0, 10 * MS, 20 * MS, 0 },          /* deep without a valid deep period */
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    {
        errno = 0;
        aeron_py_quiet_idle_t *state = aeron_py_quiet_idle_create(bell, bad[i][0], bad[i][1], bad[i][2], bad[i][3]);
        CHECK(NULL == state && EINVAL == errno, "bad times %zu accepted (errno %d)", i, errno);
        aeron_free(state);
    }
    aeron_py_quiet_idle_t *state = aeron_py_quiet_idle_create(bell, 0, 10 * MS, 0, 999 * MS);
    CHECK(NULL != state && 10 * MS == aeron_py_quiet_idle_longest_period_ns(state), "no deep quiet: the deep period counted");
    aeron_free(state);
    state = aeron_py_quiet_idle_create(bell, 0, 10 * MS, 20 * MS, 300 * MS);
    CHECK(NULL != state && 300 * MS == aeron_py_quiet_idle_longest_period_ns(state), "the deep period is the longest");
    aeron_free(state);
    aeron_py_traffic_bell_delete(bell);
}

static void quiet_idle_backs_off_while_hot(void)
{
    aeron_py_traffic_bell_t *bell = aeron_py_traffic_bell_create();
    aeron_py_quiet_idle_t *state = aeron_py_quiet_idle_create(bell, 1000 * MS, 50 * MS, 0, 0);
    const int64_t now = 7000 * MS;
    aeron_py_traffic_bell_touch(bell, now);
    int spins = 0, yields = 0;
    int64_t action = AERON_PY_QUIET_IDLE_SPIN;
    for (int i = 0; i < 100 && action <= 0; i++)
    {
        action = aeron_py_quiet_idle_decide(state, 0, now);
        spins += AERON_PY_QUIET_IDLE_SPIN == action;
        yields += AERON_PY_QUIET_IDLE_YIELD == action;
    }
    CHECK(10 == spins && 5 == yields, "backoff: %d spins, %d yields before parking, expected 10 and 5", spins, yields);
    CHECK(1000 == action, "first park: %lld ns, expected 1000", (long long)action);
    CHECK(2000 == aeron_py_quiet_idle_decide(state, 0, now), "the park doubles");
    int64_t park = 0;
    for (int i = 0; i < 20; i++)
    {
        park = aeron_py_quiet_idle_decide(state, 0, now);
    }
    CHECK(1 * MS == park, "the park is capped at 1 ms: %lld", (long long)park);
    CHECK(AERON_PY_QUIET_IDLE_SPIN == aeron_py_quiet_idle_decide(state, 3, now), "work done: no spin");
    CHECK(AERON_PY_QUIET_IDLE_SPIN == aeron_py_quiet_idle_decide(state, 0, now), "work reset the backoff: spin again");
    aeron_free(state);
    aeron_py_traffic_bell_delete(bell);
}

static void quiet_idle_sleeps_a_period_once_silent(void)
{
    aeron_py_traffic_bell_t *bell = aeron_py_traffic_bell_create();
    aeron_py_quiet_idle_t *state = aeron_py_quiet_idle_create(bell, 100 * MS, 50 * MS, 2000 * MS, 400 * MS);
    const int64_t rang = 7000 * MS;
    aeron_py_traffic_bell_ring(bell, rang);
    CHECK(AERON_PY_QUIET_IDLE_SPIN == aeron_py_quiet_idle_decide(state, 0, rang + 99 * MS), "hot: spin");
    CHECK(50 * MS == aeron_py_quiet_idle_decide(state, 0, rang + 100 * MS), "silent for hot_ns: one period");
    CHECK(50 * MS == aeron_py_quiet_idle_decide(state, 5, rang + 100 * MS), "quiet: a period even after work");
    CHECK(400 * MS == aeron_py_quiet_idle_decide(state, 0, rang + 2000 * MS), "silent for deep_ns: the deep period");
    aeron_py_traffic_bell_touch(bell, rang + 2000 * MS);
    CHECK(AERON_PY_QUIET_IDLE_SPIN == aeron_py_quiet_idle_decide(state, 0, rang + 2001 * MS), "a touch: hot again");
    aeron_free(state);
    aeron_py_traffic_bell_delete(bell);
}

static int drained_limit;

static int drain_one(void *clientd, int limit)
{
    drained_limit = limit;
    (*(int *)clientd)++;
    return 1;
}

static void quiet_idle_counts_drained_work(void)
{
    aeron_py_traffic_bell_t *bell = aeron_py_traffic_bell_create();
    aeron_py_quiet_idle_t *state = aeron_py_quiet_idle_create(bell, 3600000 * MS, 50 * MS, 0, 0);  /* hot for an hour */
    aeron_py_traffic_bell_touch(bell, aeron_py_monotonic_ns());
    aeron_py_quiet_idle(state, 0);
    CHECK(1 == state->spins, "no drain, no work: %lld spins, expected 1", (long long)state->spins);
    int calls = 0;
    aeron_py_quiet_idle_attach_drain(state, drain_one, NULL, &calls);
    aeron_py_quiet_idle(state, 0);
    CHECK(1 == calls, "the drain ran %d times, expected 1", calls);
    CHECK(drained_limit > 0, "the drain's limit: %d", drained_limit);
    CHECK(0 == state->spins, "drained work did not reset the backoff: %lld spins", (long long)state->spins);
    aeron_free(state);
    aeron_py_traffic_bell_delete(bell);
}

/* The clients' requests, as a quiet sleep sees them: the call that answers `answer_on` returns a
 * request (or, with `touch_instead`, touches the bell and returns none). */
typedef struct
{
    int calls;
    int answer_on;
    bool touch_instead;
    aeron_py_traffic_bell_t *bell;
}
requests_rig_t;

static int requests_rig(void *clientd, int limit)
{
    requests_rig_t *rig = clientd;
    rig->calls++;
    if (rig->calls != rig->answer_on)
    {
        return 0;
    }
    if (rig->touch_instead)
    {
        aeron_py_traffic_bell_touch(rig->bell, aeron_py_monotonic_ns());
        return 0;
    }
    return limit > 0 ? 1 : 0;
}

static int quiet_sleep_calls(int64_t period_ns, int answer_on, bool touch_instead, bool *hot_after)
{
    aeron_py_traffic_bell_t *bell = aeron_py_traffic_bell_create();
    aeron_py_quiet_idle_t *state = aeron_py_quiet_idle_create(bell, 50 * MS, period_ns, 0, 0);
    requests_rig_t rig = { .calls = 0, .answer_on = answer_on, .touch_instead = touch_instead, .bell = bell };
    aeron_py_quiet_idle_attach_drain(state, NULL, requests_rig, &rig);
    aeron_py_traffic_bell_touch(bell, aeron_py_monotonic_ns() - 1000 * MS);  /* silent for a second: quiet */
    aeron_py_quiet_idle(state, 0);
    *hot_after = AERON_PY_QUIET_IDLE_SPIN == aeron_py_quiet_idle_decide(state, 0, aeron_py_monotonic_ns());
    aeron_free(state);
    aeron_py_traffic_bell_delete(bell);
    return rig.calls;
}

static void a_request_ends_a_quiet_sleep_and_makes_the_driver_hot(void)
{
    bool hot = false;
    /* one call before the decision, then one per slice of a 1 s period: the third answers */
    const int calls = quiet_sleep_calls(1000 * MS, 3, false, &hot);
    CHECK(3 == calls, "the sleep went on after a request: %d calls, expected 3", calls);
    CHECK(hot, "a request did not make the driver hot");
}

static void a_touch_ends_a_quiet_sleep(void)
{
    bool hot = false;
    const int calls = quiet_sleep_calls(1000 * MS, 3, true, &hot);
    CHECK(3 == calls, "the sleep went on after a touch: %d calls, expected 3", calls);
    CHECK(hot, "a touch did not make the driver hot");
}

static void a_quiet_sleep_without_requests_lasts_its_period(void)
{
    bool hot = true;
    const int64_t period = 100 * MS;
    const int calls = quiet_sleep_calls(period, 0, false, &hot);
    const int expected = 1 + (int)(period / AERON_PY_QUIET_WAKE_SLICE_NS);
    CHECK(expected == calls, "%d calls, expected one before the decision and one per slice: %d", calls, expected);
    CHECK(!hot, "no request, no touch: the driver became hot");
}

int main(void)
{
    check_program = "test_traffic_bell";
    RUN(application_traffic_is_data_with_payload_eos_or_setup);
    RUN(ring_counts_touch_only_moves_the_time);
    RUN(wait_returns_at_once_for_a_missed_ring_and_times_out_otherwise);
    RUN(a_ring_wakes_a_waiter);
    RUN(quiet_idle_rejects_bad_times);
    RUN(quiet_idle_backs_off_while_hot);
    RUN(quiet_idle_sleeps_a_period_once_silent);
    RUN(quiet_idle_counts_drained_work);
    RUN(a_request_ends_a_quiet_sleep_and_makes_the_driver_hot);
    RUN(a_touch_ends_a_quiet_sleep);
    RUN(a_quiet_sleep_without_requests_lasts_its_period);
    return check_summary();
}
