/* Keepalive thinning (cpp/plugins/keepalive_thinning/): which frames are keepalives, the
 * table's send decisions, and the interceptor on a real aeron_driver_context_t (the
 * context's clock replaced by the test's), with its port range and settings. */
#include <errno.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "aeron_driver_context.h"
#include "media/aeron_udp_channel_transport.h"
#include "media/aeron_udp_channel_transport_bindings.h"
#include "protocol/aeron_udp_protocol.h"

#include "keepalive_thinning/keepalive_frames.h"
#include "keepalive_thinning/keepalive_table.h"
#include "keepalive_thinning/keepalive_thinning.h"

#include "check.h"

#define MS INT64_C(1000000)

static aeron_data_header_t heartbeat(int32_t session_id, int32_t term_offset, uint8_t flags)
{
    aeron_data_header_t data = { 0 };
    data.frame_header.frame_length = 0;
    data.frame_header.type = AERON_HDR_TYPE_DATA;
    data.frame_header.flags = flags;
    data.session_id = session_id;
    data.stream_id = 1001;
    data.term_id = 3;
    data.term_offset = term_offset;
    return data;
}

static aeron_status_message_header_t status_message(int32_t window, uint8_t flags)
{
    aeron_status_message_header_t sm = { 0 };
    sm.frame_header.frame_length = sizeof(sm);
    sm.frame_header.type = AERON_HDR_TYPE_SM;
    sm.frame_header.flags = flags;
    sm.session_id = 9;
    sm.stream_id = 1001;
    sm.consumption_term_id = 3;
    sm.consumption_term_offset = 4096;
    sm.receiver_window = window;
    return sm;
}

static bool keepalive_of(void *frame, size_t length, aeron_py_keepalive_t *k)
{
    struct iovec iov = { .iov_base = frame, .iov_len = length };
    return aeron_py_keepalive_of(&iov, 1, k);
}

static void heartbeats_and_status_messages_are_keepalives(void)
{
    aeron_py_keepalive_t k;
    aeron_data_header_t hb = heartbeat(7, 2048, 0);
    CHECK(keepalive_of(&hb, sizeof(hb), &k), "a heartbeat is not a keepalive");
    CHECK(AERON_HDR_TYPE_DATA == k.type && 7 == k.session_id && 1001 == k.stream_id && 3 == k.term_id &&
          2048 == k.term_offset && 0 == k.window, "a heartbeat's fields were not read");
    aeron_status_message_header_t sm = status_message(65536, 0);
    CHECK(keepalive_of(&sm, sizeof(sm), &k), "a status message is not a keepalive");
    CHECK(AERON_HDR_TYPE_SM == k.type && 9 == k.session_id && 4096 == k.term_offset && 65536 == k.window,
          "a status message's fields were not read");
}

static void what_must_go_out_is_not_a_keepalive(void)
{
    aeron_py_keepalive_t k;
    uint8_t frame[64] = { 0 };
    aeron_data_header_t *data = (aeron_data_header_t *)frame;
    *data = heartbeat(7, 0, 0);
    data->frame_header.frame_length = sizeof(frame);
    CHECK(!keepalive_of(frame, sizeof(frame), &k), "a data frame with a payload");
    aeron_data_header_t eos = heartbeat(7, 0, AERON_DATA_HEADER_EOS_FLAG);
    CHECK(!keepalive_of(&eos, sizeof(eos), &k), "an end-of-stream heartbeat");
    aeron_data_header_t revoked = heartbeat(7, 0, AERON_DATA_HEADER_REVOKED_FLAG);
    CHECK(!keepalive_of(&revoked, sizeof(revoked), &k), "a revoked heartbeat");
    aeron_status_message_header_t setup = status_message(65536, AERON_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG);
    CHECK(!keepalive_of(&setup, sizeof(setup), &k), "a status message asking for SETUP");
    aeron_status_message_header_t sm_eos = status_message(65536, AERON_STATUS_MESSAGE_HEADER_EOS_FLAG);
    CHECK(!keepalive_of(&sm_eos, sizeof(sm_eos), &k), "an end-of-stream status message");
    aeron_data_header_t hb = heartbeat(7, 0, 0);
    struct iovec two[2] = { { &hb, sizeof(hb) }, { &hb, sizeof(hb) } };
    CHECK(!aeron_py_keepalive_of(two, 2, &k), "a gathered (two-part) send");
    CHECK(!keepalive_of(&hb, 4, &k), "a datagram shorter than a frame header");
}

static struct sockaddr_storage to_v4(uint8_t d, uint16_t port)
{
    struct sockaddr_storage storage;
    memset(&storage, 0, sizeof(storage));
    struct sockaddr_in *in4 = (struct sockaddr_in *)&storage;
    in4->sin_family = AF_INET;
    in4->sin_port = htons(port);
    in4->sin_addr.s_addr = htonl(0x0A000000u | d);
    return storage;
}

static void table_sends_new_changed_or_due_keepalives_only(void)
{
    aeron_py_keepalive_table_t table = { NULL };
    int transport, other_transport;
    const struct sockaddr_storage dest = to_v4(1, 40001), other_dest = to_v4(2, 40001);
    const int64_t interval = 500 * MS, t0 = 1000 * MS;
    aeron_data_header_t hb = heartbeat(7, 2048, 0);
    aeron_py_keepalive_t k;
    keepalive_of(&hb, sizeof(hb), &k);
    CHECK(aeron_py_keepalive_table_should_send(&table, &transport, &dest, &k, t0, interval), "the first keepalive");
    CHECK(!aeron_py_keepalive_table_should_send(&table, &transport, &dest, &k, t0 + 100 * MS, interval), "a repeat");
    CHECK(aeron_py_keepalive_table_should_send(&table, &transport, &other_dest, &k, t0 + 100 * MS, interval),
          "the same keepalive to another destination");
    CHECK(aeron_py_keepalive_table_should_send(&table, &other_transport, &dest, &k, t0 + 100 * MS, interval),
          "the same keepalive on another transport");
    aeron_py_keepalive_t moved = k;
    moved.term_offset += 32;
    CHECK(aeron_py_keepalive_table_should_send(&table, &transport, &dest, &moved, t0 + 200 * MS, interval),
          "a heartbeat at a new position (data was sent)");
    CHECK(!aeron_py_keepalive_table_should_send(&table, &transport, &dest, &moved, t0 + 699 * MS, interval),
          "a repeat within the interval of the last one sent");
    CHECK(aeron_py_keepalive_table_should_send(&table, &transport, &dest, &moved, t0 + 700 * MS, interval),
          "a repeat once the interval passed");
    aeron_py_keepalive_t other_session = k;
    other_session.session_id = 8;
    CHECK(aeron_py_keepalive_table_should_send(&table, &transport, &dest, &other_session, t0 + 701 * MS, interval),
          "another session's first keepalive");
    aeron_status_message_header_t sm = status_message(65536, 0);
    keepalive_of(&sm, sizeof(sm), &k);
    CHECK(aeron_py_keepalive_table_should_send(&table, &transport, &dest, &k, t0, interval), "the first status message");
    k.window = 32768;
    CHECK(aeron_py_keepalive_table_should_send(&table, &transport, &dest, &k, t0 + 1, interval), "a new window");
    CHECK(!aeron_py_keepalive_table_should_send(&table, &transport, &dest, &k, t0 + 2, interval), "an unchanged window");
    aeron_py_keepalive_table_close(&table);
    CHECK(NULL == table.entries, "close left the entries");
}

/* ---- the interceptor on a driver context ---- */

static int64_t fake_now_ns;
static int64_t fake_clock(void)
{
    return fake_now_ns;
}

static int sent;
static int count_sent(void *state, aeron_udp_channel_outgoing_interceptor_t *next, aeron_udp_channel_transport_t *transport,
                      struct sockaddr_storage *address, struct iovec *iov, size_t iov_length, int64_t *bytes_sent)
{
    sent++;
    *bytes_sent += (int64_t)iov[0].iov_len;
    return 1;
}

static uint16_t bind_loopback(aeron_udp_channel_transport_t *transport)
{
    transport->fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t length = sizeof(addr);
    bind(transport->fd, (struct sockaddr *)&addr, sizeof(addr));
    getsockname(transport->fd, (struct sockaddr *)&addr, &length);
    return ntohs(addr.sin_port);
}

/* Sends `count` identical heartbeats through the context's interceptor, 1 ms apart; returns
 * how many reached the delegate. */
static int send_heartbeats(aeron_driver_context_t *context, int count, int64_t *bytes_sent)
{
    const aeron_udp_channel_interceptor_bindings_t *b = aeron_driver_context_get_udp_channel_outgoing_interceptors(context);
    void *agent = NULL;
    if (b->outgoing_init_func(&agent, context, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_SENDER) < 0)
    {
        return -1;
    }
    aeron_udp_channel_transport_t transport = { 0 };
    bind_loopback(&transport);
    aeron_udp_channel_outgoing_interceptor_t delegate = { 0 };
    delegate.outgoing_send_func = count_sent;
    struct sockaddr_storage dest = to_v4(1, 40001);
    aeron_data_header_t hb = heartbeat(7, 0, 0);
    sent = 0;
    for (int i = 0; i < count; i++)
    {
        fake_now_ns += MS;
        struct iovec iov = { .iov_base = &hb, .iov_len = sizeof(hb) };
        const int rc = b->outgoing_send_func(agent, &delegate, &transport, &dest, &iov, 1, bytes_sent);
        CHECK(1 == rc, "send %d returned %d", i, rc);
    }
    b->outgoing_close_func(agent);
    close(transport.fd);
    return sent;
}

static void interceptor_thins_repeats_within_the_interval(void)
{
    aeron_driver_context_t *context = NULL;
    CHECK(0 == aeron_driver_context_init(&context), "aeron_driver_context_init");
    context->nano_clock = fake_clock;
    CHECK(0 == aeron_py_driver_context_keepalive_interval(context), "no interval set: %lld",
          (long long)aeron_py_driver_context_keepalive_interval(context));
    CHECK(0 == aeron_py_driver_context_set_keepalive_interval(context, 100 * MS), "set interval: errno %d", errno);
    CHECK(100 * MS == aeron_py_driver_context_keepalive_interval(context), "the interval did not stick");
    int64_t bytes = 0;
    const int through = send_heartbeats(context, 250, &bytes);  /* 250 ms of one heartbeat per ms */
    CHECK(3 == through, "250 heartbeats over 250 ms at a 100 ms interval: %d went out, expected 3", through);
    CHECK(250 * (int64_t)sizeof(aeron_data_header_t) == bytes, "thinned sends not reported as sent: %lld bytes", (long long)bytes);
    aeron_driver_context_close(context);
}

static void interceptor_leaves_ports_outside_the_range_alone(void)
{
    aeron_driver_context_t *context = NULL;
    aeron_driver_context_init(&context);
    context->nano_clock = fake_clock;
    aeron_py_driver_context_set_keepalive_interval(context, 100 * MS);
    CHECK(0 == aeron_py_driver_context_set_keepalive_ports(context, 1, 2), "set ports: errno %d", errno);
    int64_t bytes = 0;  /* send_heartbeats binds an ephemeral port, never 1 or 2 */
    CHECK(50 == send_heartbeats(context, 50, &bytes), "a transport bound outside [1, 2] was thinned");
    aeron_py_driver_context_set_keepalive_ports(context, 0, 65535);
    CHECK(1 == send_heartbeats(context, 50, &bytes), "every port in range: not thinned");
    aeron_driver_context_close(context);
}

static void settings_are_validated(void)
{
    aeron_driver_context_t *context = NULL;
    aeron_driver_context_init(&context);
    errno = 0;
    CHECK(aeron_py_driver_context_set_keepalive_interval(context, 0) < 0 && EINVAL == errno, "interval 0 accepted");
    errno = 0;
    CHECK(aeron_py_driver_context_set_keepalive_ports(context, 10, 9) < 0 && EINVAL == errno, "ports low > high accepted");
    errno = 0;
    CHECK(aeron_py_driver_context_set_keepalive_ports(context, 0, 65536) < 0 && EINVAL == errno, "port 65536 accepted");
    CHECK(0 == aeron_py_keepalive_thinning_attach_counter(context), "no thinning: attaching its counter failed");
    aeron_py_driver_context_set_keepalive_interval(context, 100 * MS);
    errno = 0;
    CHECK(aeron_py_keepalive_thinning_attach_counter(context) < 0 && ENOSPC == errno,
          "thinning with no counters manager (before aeron_driver_init): attach did not fail with ENOSPC");
    aeron_driver_context_close(context);
}

int main(void)
{
    check_program = "test_keepalive_thinning";
    RUN(heartbeats_and_status_messages_are_keepalives);
    RUN(what_must_go_out_is_not_a_keepalive);
    RUN(table_sends_new_changed_or_due_keepalives_only);
    RUN(interceptor_thins_repeats_within_the_interval);
    RUN(interceptor_leaves_ports_outside_the_range_alone);
    RUN(settings_are_validated);
    return check_summary();
}
