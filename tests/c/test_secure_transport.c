/* The secure transport as the driver sees it (cpp/plugins/secure_transport/): installed on a
 * real aeron_driver_context_t, its four agents (sender and receiver, outgoing and incoming)
 * are started and fed datagrams the way Aeron's sender and receiver do, with capturing
 * delegates behind them. Covers sealing and opening of both directions, plain sessions side by
 * side, every drop reason and its counter, rotation and removal of keys, secured ports, the
 * chain order with the endpoint filter and keepalive thinning, refused seals and batches. */
#define _GNU_SOURCE   /* memmem */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "aeron_driver_context.h"
#include "media/aeron_udp_channel_transport.h"
#include "media/aeron_udp_channel_transport_bindings.h"
#include "protocol/aeron_udp_protocol.h"

#include "endpoint_filter/endpoint_filter.h"
#include "keepalive_thinning/keepalive_thinning.h"
#include "secure_transport/secure_transport.h"
#include "secure_transport/secure_frames.h"

#include "check.h"

#define STREAM (10)
#define SESSION (77)

static const uint8_t KEY[32] = { 11, 22, 33, 44 };
static const uint8_t NEW_KEY[32] = { 55, 66, 77, 88 };

/* ---- what the delegates saw ---- */

static uint8_t wire[4][70000];     /* the datagrams handed to the socket, by index in the batch */
static size_t wire_length[4];
static size_t wire_count;
static uint8_t delivered[70000];
static size_t delivered_length;
static int delivered_count;

static int capture_send(
    void *state, aeron_udp_channel_outgoing_interceptor_t *next, aeron_udp_channel_transport_t *transport,
    struct sockaddr_storage *address, struct iovec *iov, size_t iov_length, int64_t *bytes_sent)
{
    wire_count = iov_length;
    for (size_t i = 0; i < iov_length && i < 4; i++)
    {
        memcpy(wire[i], iov[i].iov_base, iov[i].iov_len);
        wire_length[i] = iov[i].iov_len;
        *bytes_sent += (int64_t)iov[i].iov_len;
    }
    return (int)iov_length;
}

static void capture_delivery(
    void *state, aeron_udp_channel_incoming_interceptor_t *next, aeron_udp_channel_transport_t *transport,
    void *receiver_clientd, void *endpoint_clientd, void *destination_clientd, uint8_t *buffer, size_t length,
    struct sockaddr_storage *addr, struct timespec *media_timestamp)
{
    memcpy(delivered, buffer, length);
    delivered_length = length;
    delivered_count++;
}

/* ---- a secure transport on a driver context, its agents, one bound UDP socket ---- */

typedef struct
{
    aeron_driver_context_t *context;
    aeron_py_secure_transport_t *secure;
    const aeron_udp_channel_interceptor_bindings_t *outgoing;
    const aeron_udp_channel_interceptor_bindings_t *incoming;
    void *sender_out, *sender_in, *receiver_out, *receiver_in;
    aeron_udp_channel_transport_t transport;
    uint16_t port;
    aeron_udp_channel_outgoing_interceptor_t socket;
    aeron_udp_channel_incoming_interceptor_t driver;
}
rig_t;

static const aeron_udp_channel_interceptor_bindings_t *last_of(const aeron_udp_channel_interceptor_bindings_t *b)
{
    while (NULL != b && NULL != b->meta_info.next_interceptor_bindings)
    {
        b = b->meta_info.next_interceptor_bindings;
    }
    return b;
}

static bool rig_open(rig_t *rig)
{
    memset(rig, 0, sizeof(*rig));
    if (aeron_driver_context_init(&rig->context) < 0 || NULL == (rig->secure = aeron_py_secure_transport_create()) ||
        aeron_py_secure_transport_install(rig->secure, rig->context) < 0)
    {
        return false;
    }
    rig->outgoing = last_of(aeron_driver_context_get_udp_channel_outgoing_interceptors(rig->context));
    rig->incoming = last_of(aeron_driver_context_get_udp_channel_incoming_interceptors(rig->context));
    const aeron_udp_channel_transport_affinity_t sender = AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_SENDER;
    const aeron_udp_channel_transport_affinity_t receiver = AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER;
    if (rig->outgoing->outgoing_init_func(&rig->sender_out, rig->context, sender) < 0 ||
        rig->incoming->incoming_init_func(&rig->sender_in, rig->context, sender) < 0 ||
        rig->outgoing->outgoing_init_func(&rig->receiver_out, rig->context, receiver) < 0 ||
        rig->incoming->incoming_init_func(&rig->receiver_in, rig->context, receiver) < 0)
    {
        return false;
    }
    rig->transport.fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in bind_to = { .sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    struct sockaddr_in bound;
    socklen_t length = sizeof(bound);
    if (bind(rig->transport.fd, (struct sockaddr *)&bind_to, sizeof(bind_to)) < 0 ||
        getsockname(rig->transport.fd, (struct sockaddr *)&bound, &length) < 0)
    {
        return false;
    }
    rig->port = ntohs(bound.sin_port);
    rig->socket.outgoing_send_func = capture_send;
    rig->driver.incoming_func = capture_delivery;
    delivered_count = 0;
    return true;
}

static void rig_close(rig_t *rig)
{
    void *agents[4] = { rig->sender_out, rig->receiver_out, rig->sender_in, rig->receiver_in };
    for (int i = 0; i < 4; i++)
    {
        if (NULL != agents[i])
        {
            (i < 2 ? rig->outgoing->outgoing_close_func : rig->incoming->incoming_close_func)(agents[i]);
        }
    }
    if (rig->transport.fd > 0)
    {
        close(rig->transport.fd);
    }
    aeron_driver_context_close(rig->context);   /* frees the bindings */
    aeron_py_secure_transport_detach(rig->secure);
    aeron_py_secure_transport_delete(rig->secure);
}

static bool keyed(rig_t *rig, const uint8_t key[32])
{
    return 0 == aeron_py_secure_transport_add(rig->secure, AERON_PY_SECURE_ROLE_SEND, 0, STREAM, SESSION, key) &&
        0 == aeron_py_secure_transport_add(rig->secure, AERON_PY_SECURE_ROLE_RECEIVE, rig->port, STREAM, SESSION, key);
}

/* Sends `length` bytes through an outgoing agent; the first datagram that reached the socket. */
static int64_t send_through(rig_t *rig, void *agent, const uint8_t *datagram, size_t length)
{
    struct iovec iov = { (void *)datagram, length };
    int64_t bytes = 0;
    wire_count = 0;
    rig->outgoing->outgoing_send_func(agent, &rig->socket, &rig->transport, NULL, &iov, 1, &bytes);
    return bytes;
}

static void receive_through(rig_t *rig, void *agent, const uint8_t *datagram, size_t length)
{
    uint8_t buffer[70000];
    memcpy(buffer, datagram, length);
    struct sockaddr_storage from = { 0 };
    rig->incoming->incoming_func(agent, &rig->driver, &rig->transport, NULL, NULL, NULL, buffer, length, &from, NULL);
}

static size_t data_frame(uint8_t *out, int32_t session_id, size_t payload)
{
    aeron_data_header_t header = { 0 };
    header.frame_header.frame_length = (int32_t)(AERON_DATA_HEADER_LENGTH + payload);
    header.frame_header.type = AERON_HDR_TYPE_DATA;
    header.session_id = session_id;
    header.stream_id = STREAM;
    memcpy(out, &header, sizeof(header));
    memset(out + AERON_DATA_HEADER_LENGTH, 'e', payload);
    return AERON_DATA_HEADER_LENGTH + payload;
}

static size_t status_message(uint8_t *out, int32_t session_id)
{
    aeron_status_message_header_t sm = { 0 };
    sm.frame_header.frame_length = sizeof(sm);
    sm.frame_header.type = AERON_HDR_TYPE_SM;
    sm.session_id = session_id;
    sm.stream_id = STREAM;
    sm.receiver_window = 1 << 20;
    memcpy(out, &sm, sizeof(sm));
    return sizeof(sm);
}

static int64_t count(rig_t *rig, aeron_py_secure_counter_t counter)
{
    return aeron_py_secure_transport_count(rig->secure, counter);
}

/* ---- tests ---- */

static void plain_sessions_pass_untouched(void)
{
    rig_t rig;
    CHECK(rig_open(&rig), "rig");
    uint8_t frame[128];
    const size_t length = data_frame(frame, SESSION, 40);
    CHECK((int64_t)length == send_through(&rig, rig.sender_out, frame, length), "bytes sent");
    CHECK(1 == wire_count && length == wire_length[0] && 0 == memcmp(wire[0], frame, length), "not sent as it was");
    receive_through(&rig, rig.receiver_in, frame, length);
    CHECK(1 == delivered_count && length == delivered_length, "a plain datagram was not delivered as it was");
    CHECK(0 == count(&rig, AERON_PY_SECURE_SEALED) && 0 == count(&rig, AERON_PY_SECURE_OPENED), "counted");
    rig_close(&rig);
}

static void data_is_sealed_and_opened(void)
{
    rig_t rig;
    CHECK(rig_open(&rig) && keyed(&rig, KEY), "rig");
    CHECK(1 == aeron_py_secure_transport_port_count(rig.secure), "a receiving session's port is secured");
    uint8_t frame[128];
    const size_t length = data_frame(frame, SESSION, 40);
    CHECK((int64_t)length == send_through(&rig, rig.sender_out, frame, length), "bytes sent must exclude the seal");
    CHECK(length + AERON_PY_SECURE_OVERHEAD == wire_length[0], "sealed length %zu", wire_length[0]);
    CHECK(NULL == memmem(wire[0], wire_length[0], "eeeeeeee", 8), "the payload is on the wire in clear");
    receive_through(&rig, rig.receiver_in, wire[0], wire_length[0]);
    CHECK(1 == delivered_count && length == delivered_length && 0 == memcmp(delivered, frame, length), "not opened");
    CHECK(1 == count(&rig, AERON_PY_SECURE_SEALED) && 1 == count(&rig, AERON_PY_SECURE_OPENED), "counters");

    receive_through(&rig, rig.receiver_in, wire[0], wire_length[0]);   /* replayed */
    CHECK(1 == delivered_count && 1 == count(&rig, AERON_PY_SECURE_DROP_REPLAY), "a replay was not dropped");
    send_through(&rig, rig.sender_out, frame, length);                 /* a retransmit: sealed afresh */
    receive_through(&rig, rig.receiver_in, wire[0], wire_length[0]);
    CHECK(2 == delivered_count, "a retransmit of the same frame was dropped");

    send_through(&rig, rig.sender_out, frame, length);
    wire[0][AERON_DATA_HEADER_LENGTH + 3] ^= 0x01;                     /* a flipped payload bit */
    receive_through(&rig, rig.receiver_in, wire[0], wire_length[0]);
    wire[0][12] ^= 0x01;
    wire[0][AERON_DATA_HEADER_LENGTH + 3] ^= 0x01;                     /* a flipped bit in the session id */
    receive_through(&rig, rig.receiver_in, wire[0], wire_length[0]);
    receive_through(&rig, rig.receiver_in, frame, length);             /* forged in clear */
    CHECK(2 == delivered_count, "a forged or flipped datagram was delivered");
    CHECK(2 == count(&rig, AERON_PY_SECURE_DROP_BAD_TAG) && 1 == count(&rig, AERON_PY_SECURE_DROP_UNKNOWN_SESSION),
        "drops: bad tag %lld, unknown session %lld", (long long)count(&rig, AERON_PY_SECURE_DROP_BAD_TAG),
        (long long)count(&rig, AERON_PY_SECURE_DROP_UNKNOWN_SESSION));
    rig_close(&rig);
}

static void status_messages_are_sealed_and_opened(void)
{
    rig_t rig;
    CHECK(rig_open(&rig) && keyed(&rig, KEY), "rig");
    uint8_t sm[64];
    const size_t length = status_message(sm, SESSION);
    send_through(&rig, rig.receiver_out, sm, length);
    CHECK(length + AERON_PY_SECURE_OVERHEAD == wire_length[0], "an SM was not sealed");
    receive_through(&rig, rig.sender_in, wire[0], wire_length[0]);
    CHECK(1 == delivered_count && 0 == memcmp(delivered, sm, length), "the sender did not get the SM");
    receive_through(&rig, rig.sender_in, sm, length);                  /* a forged SM: steer the window */
    CHECK(1 == delivered_count, "a forged SM reached the sender");
    receive_through(&rig, rig.receiver_in, wire[0], wire_length[0]);   /* the wrong way: to the secured port */
    CHECK(1 == delivered_count && 1 == count(&rig, AERON_PY_SECURE_DROP_UNKNOWN_SESSION),
        "an SM to a secured receiving port is no session's: dropped");
    status_message(sm, SESSION + 1);                                   /* another session: plain */
    send_through(&rig, rig.receiver_out, sm, length);
    CHECK(length == wire_length[0], "another session's SM was sealed");
    rig_close(&rig);
}

static void secured_ports_drop_what_no_key_opens(void)
{
    rig_t rig;
    CHECK(rig_open(&rig), "rig");
    uint8_t frame[128];
    const size_t length = data_frame(frame, SESSION + 5, 8);
    CHECK(0 == aeron_py_secure_transport_set_port(rig.secure, rig.port, true), "secure the port");
    CHECK(1 == aeron_py_secure_transport_port_count(rig.secure), "ports");
    receive_through(&rig, rig.receiver_in, frame, length);
    receive_through(&rig, rig.receiver_in, frame, 6);                  /* a runt */
    CHECK(0 == delivered_count, "delivered on a secured port without a key");
    CHECK(1 == count(&rig, AERON_PY_SECURE_DROP_UNKNOWN_SESSION) && 1 == count(&rig, AERON_PY_SECURE_DROP_MALFORMED),
        "reasons");
    receive_through(&rig, rig.sender_in, frame, length);               /* the sender's side has no ports */
    CHECK(1 == delivered_count, "the sender's agent judged a port");
    CHECK(0 == aeron_py_secure_transport_set_port(rig.secure, rig.port, false) &&
        0 == aeron_py_secure_transport_port_count(rig.secure), "unsecure the port");
    receive_through(&rig, rig.receiver_in, frame, length);
    CHECK(2 == delivered_count, "an unsecured port still drops");
    errno = 0;
    CHECK(-1 == aeron_py_secure_transport_set_port(rig.secure, 0, true) && EINVAL == errno, "port 0");
    CHECK(-1 == aeron_py_secure_transport_set_port(rig.secure, 70000, true) && EINVAL == errno, "port 70000");
    rig_close(&rig);
}

static void rotation_keeps_the_previous_key_until_forgotten(void)
{
    rig_t rig;
    CHECK(rig_open(&rig) && keyed(&rig, KEY), "rig");
    uint8_t frame[128];
    uint8_t in_flight[256];
    const size_t length = data_frame(frame, SESSION, 16);
    send_through(&rig, rig.sender_out, frame, length);
    memcpy(in_flight, wire[0], wire_length[0]);
    const size_t in_flight_length = wire_length[0];
    CHECK(keyed(&rig, NEW_KEY), "rotate");
    CHECK(2 == aeron_py_secure_transport_session_count(rig.secure), "a rotation added a session");
    send_through(&rig, rig.sender_out, frame, length);
    receive_through(&rig, rig.receiver_in, wire[0], wire_length[0]);
    receive_through(&rig, rig.receiver_in, in_flight, in_flight_length);
    CHECK(2 == delivered_count, "new or in-flight datagrams lost over a rotation (%d)", delivered_count);
    CHECK(0 == aeron_py_secure_transport_forget_previous(
        rig.secure, AERON_PY_SECURE_ROLE_RECEIVE, rig.port, STREAM, SESSION), "forget");
    receive_through(&rig, rig.receiver_in, in_flight, in_flight_length);
    CHECK(2 == delivered_count, "the forgotten key still opens");
    CHECK(0 == aeron_py_secure_transport_remove(rig.secure, AERON_PY_SECURE_ROLE_RECEIVE, rig.port, STREAM, SESSION),
        "remove");
    errno = 0;
    CHECK(-1 == aeron_py_secure_transport_remove(rig.secure, AERON_PY_SECURE_ROLE_RECEIVE, rig.port, STREAM, SESSION) &&
        ENOENT == errno, "removing twice");
    CHECK(-1 == aeron_py_secure_transport_forget_previous(
        rig.secure, AERON_PY_SECURE_ROLE_RECEIVE, rig.port, STREAM, SESSION) && ENOENT == errno, "forget absent");
    CHECK(1 == aeron_py_secure_transport_session_count(rig.secure), "sessions after remove");
    receive_through(&rig, rig.receiver_in, wire[0], wire_length[0]);
    CHECK(2 == delivered_count && 1 == count(&rig, AERON_PY_SECURE_DROP_UNKNOWN_SESSION),
        "a removed key's sealed datagrams must be dropped (its port stays secured), never handed on");
    CHECK(0 == aeron_py_secure_transport_set_port(rig.secure, rig.port, false), "unsecure");
    receive_through(&rig, rig.receiver_in, wire[0], wire_length[0]);
    CHECK(3 == delivered_count, "an unsecured port passes what no key opens");
    rig_close(&rig);
}

static void a_receiving_session_keyed_on_any_port(void)
{
    rig_t rig;
    CHECK(rig_open(&rig), "rig");
    CHECK(0 == aeron_py_secure_transport_add(rig.secure, AERON_PY_SECURE_ROLE_SEND, 0, STREAM, SESSION, KEY) &&
        0 == aeron_py_secure_transport_add(rig.secure, AERON_PY_SECURE_ROLE_RECEIVE, 0, STREAM, SESSION, KEY), "keys");
    CHECK(0 == aeron_py_secure_transport_port_count(rig.secure), "any port secures no port");
    uint8_t frame[128];
    const size_t length = data_frame(frame, SESSION, 24);
    send_through(&rig, rig.sender_out, frame, length);
    receive_through(&rig, rig.receiver_in, wire[0], wire_length[0]);
    CHECK(1 == delivered_count && length == delivered_length && 0 == memcmp(delivered, frame, length),
        "a session keyed on any port did not open on this one");
    rig_close(&rig);
}

static void bad_arguments_are_refused(void)
{
    rig_t rig;
    CHECK(rig_open(&rig), "rig");
    errno = 0;
    CHECK(-1 == aeron_py_secure_transport_add(rig.secure, 7, 1, STREAM, SESSION, KEY) && EINVAL == errno, "role");
    CHECK(-1 == aeron_py_secure_transport_add(rig.secure, AERON_PY_SECURE_ROLE_RECEIVE, -1, STREAM, SESSION, KEY),
        "a negative port");
    CHECK(-1 == aeron_py_secure_transport_add(rig.secure, AERON_PY_SECURE_ROLE_RECEIVE, 65536, STREAM, SESSION, KEY),
        "port 65536");
    CHECK(-1 == aeron_py_secure_transport_add(rig.secure, AERON_PY_SECURE_ROLE_SEND, 0, STREAM, SESSION, NULL), "key");
    CHECK(-1 == aeron_py_secure_transport_install(rig.secure, rig.context) && EINVAL == errno, "installed twice");
    rig_close(&rig);
}

static void batches_seal_what_is_secured_and_stop_at_a_refusal(void)
{
    rig_t rig;
    CHECK(rig_open(&rig) && keyed(&rig, KEY), "rig");
    static uint8_t frames[3][AERON_PY_SECURE_MAX_DATAGRAM];
    const size_t a = data_frame(frames[0], SESSION, 100);
    const size_t b = data_frame(frames[1], SESSION + 1, 100);          /* plain */
    const size_t c = data_frame(frames[2], SESSION, AERON_PY_SECURE_MAX_DATAGRAM - AERON_DATA_HEADER_LENGTH);
    struct iovec iov[3] = { { frames[0], a }, { frames[1], b }, { frames[2], c } };
    int64_t bytes = 0;
    const int result = rig.outgoing->outgoing_send_func(rig.sender_out, &rig.socket, &rig.transport, NULL, iov, 3, &bytes);
    CHECK(2 == result && 2 == wire_count, "handed on %d (%zu): the oversize one must stop the batch", result, wire_count);
    CHECK(a + AERON_PY_SECURE_OVERHEAD == wire_length[0] && b == wire_length[1], "lengths %zu %zu", wire_length[0],
        wire_length[1]);
    CHECK((int64_t)(a + b) == bytes, "bytes %lld", (long long)bytes);
    CHECK(1 == count(&rig, AERON_PY_SECURE_SEAL_REFUSED), "refusal not counted");
    rig_close(&rig);
}

static void sits_next_to_the_socket(void)
{
    aeron_driver_context_t *context = NULL;
    aeron_py_endpoint_filter_config_t config = { 0 };
    config.ipv4_prefix = 32;
    config.ipv6_prefix = 128;
    config.max_sources = 4;
    config.max_pending = 4;
    config.pending_timeout_ns = 1000000000;
    aeron_py_endpoint_filter_t *filter = aeron_py_endpoint_filter_create(&config);
    aeron_py_secure_transport_t *secure = aeron_py_secure_transport_create();
    CHECK(0 == aeron_driver_context_init(&context), "context");
    CHECK(0 == aeron_py_driver_context_set_keepalive_interval(context, 1000000000), "thinning");
    CHECK(0 == aeron_py_secure_transport_install(secure, context), "secure");
    CHECK(0 == aeron_py_endpoint_filter_install(filter, context), "filter after secure");
    const aeron_udp_channel_interceptor_bindings_t *out = aeron_driver_context_get_udp_channel_outgoing_interceptors(context);
    const aeron_udp_channel_interceptor_bindings_t *in = aeron_driver_context_get_udp_channel_incoming_interceptors(context);
    CHECK(0 == strcmp("aeron_py_keepalive_thinning", out->meta_info.name) &&
        0 == strcmp("aeron_py_secure_transport", out->meta_info.next_interceptor_bindings->meta_info.name),
        "outgoing: thinning, then sealing");
    CHECK(0 == strcmp("aeron_py_endpoint_filter", in->meta_info.name) &&
        0 == strcmp("aeron_py_secure_transport", in->meta_info.next_interceptor_bindings->meta_info.name),
        "incoming: the filter, then opening");
    aeron_driver_context_close(context);
    aeron_py_endpoint_filter_detach(filter);
    aeron_py_endpoint_filter_delete(filter);
    aeron_py_secure_transport_delete(secure);
}

int main(void)
{
    check_program = "test_secure_transport";
    RUN(plain_sessions_pass_untouched);
    RUN(data_is_sealed_and_opened);
    RUN(status_messages_are_sealed_and_opened);
    RUN(secured_ports_drop_what_no_key_opens);
    RUN(rotation_keeps_the_previous_key_until_forgotten);
    RUN(a_receiving_session_keyed_on_any_port);
    RUN(bad_arguments_are_refused);
    RUN(batches_seal_what_is_secured_and_stop_at_a_refusal);
    RUN(sits_next_to_the_socket);
    return check_summary();
}
