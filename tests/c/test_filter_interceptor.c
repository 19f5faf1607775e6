/* The endpoint filter as the driver sees it (cpp/plugins/endpoint_filter/): installed on a
 * real aeron_driver_context_t, its interceptor is started and fed datagrams the way Aeron's
 * receiver does, with a counting delegate behind it. Covers the drop rules (blocklist, port
 * owner, SETUP term length, admission on the receiver only), drop counters, the traffic
 * bell, rule-table publication and its reclamation, the registry, and config validation. */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "aeron_driver_context.h"
#include "aeron_publication_image.h"
#include "media/aeron_udp_channel_transport.h"
#include "media/aeron_udp_channel_transport_bindings.h"
#include "protocol/aeron_udp_protocol.h"

#include "endpoint_filter/endpoint_filter.h"
#include "endpoint_filter/endpoint_filter_internal.h"
#include "context_registry.h"
#include "traffic_bell/traffic_bell.h"

#include "addresses.h"
#include "check.h"

/* ---- a filter on a driver context, one agent, one bound UDP socket ---- */

typedef struct
{
    aeron_driver_context_t *context;
    aeron_py_endpoint_filter_t *filter;
    const aeron_udp_channel_interceptor_bindings_t *bindings;
    void *agent;
    aeron_udp_channel_transport_t transport;
    uint16_t port;
    aeron_udp_channel_incoming_interceptor_t delegate;
}
rig_t;

static int delivered;

static void count_delivered(
    void *state, aeron_udp_channel_incoming_interceptor_t *next, aeron_udp_channel_transport_t *transport,
    void *receiver_clientd, void *endpoint_clientd, void *destination_clientd, uint8_t *buffer, size_t length,
    struct sockaddr_storage *addr, struct timespec *media_timestamp)
{
    delivered++;
}

static aeron_py_endpoint_filter_config_t config_of(void)
{
    aeron_py_endpoint_filter_config_t config = { 0 };
    config.ipv4_prefix = 32;
    config.ipv6_prefix = 128;
    config.max_sources = 16;
    config.max_pending = 16;
    config.pending_timeout_ns = INT64_C(10000000000);
    return config;
}

static bool rig_open(rig_t *rig, const aeron_py_endpoint_filter_config_t *config, aeron_udp_channel_transport_affinity_t affinity)
{
    memset(rig, 0, sizeof(*rig));
    if (aeron_driver_context_init(&rig->context) < 0 || NULL == (rig->filter = aeron_py_endpoint_filter_create(config)) ||
        aeron_py_endpoint_filter_install(rig->filter, rig->context) < 0)
    {
        return false;
    }
    rig->bindings = aeron_driver_context_get_udp_channel_incoming_interceptors(rig->context);
    if (rig->bindings->incoming_init_func(&rig->agent, rig->context, affinity) < 0)
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
    rig->delegate.incoming_func = count_delivered;
    delivered = 0;
    return true;
}

static void rig_close(rig_t *rig)
{
    if (NULL != rig->agent)
    {
        rig->bindings->incoming_close_func(rig->agent);
    }
    if (rig->transport.fd > 0)
    {
        close(rig->transport.fd);
    }
    aeron_driver_context_close(rig->context);  /* frees the filter's bindings */
    aeron_py_endpoint_filter_delete(rig->filter);
}

static struct sockaddr_storage from_v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    struct sockaddr_storage storage;
    memset(&storage, 0, sizeof(storage));
    struct sockaddr_in *in4 = (struct sockaddr_in *)&storage;
    in4->sin_family = AF_INET;
    in4->sin_port = htons(40999);
    const uint8_t bytes[4] = { a, b, c, d };
    memcpy(&in4->sin_addr, bytes, 4);
    return storage;
}

static void feed(rig_t *rig, const void *frame, size_t length, struct sockaddr_storage from)
{
    uint8_t buffer[128];
    memcpy(buffer, frame, length);
    rig->bindings->incoming_func(
        rig->agent, &rig->delegate, &rig->transport, NULL, NULL, NULL, buffer, length, &from, NULL);
}

static void feed_data(rig_t *rig, struct sockaddr_storage from, int32_t payload)
{
    uint8_t frame[64] = { 0 };
    aeron_data_header_t *data = (aeron_data_header_t *)frame;
    data->frame_header.frame_length = (int32_t)sizeof(aeron_data_header_t) + payload;
    data->frame_header.type = AERON_HDR_TYPE_DATA;
    data->session_id = 1;
    data->stream_id = 1001;
    feed(rig, frame, 0 == payload ? sizeof(aeron_data_header_t) : sizeof(frame), from);
}

static void feed_heartbeat(rig_t *rig, struct sockaddr_storage from)
{
    aeron_data_header_t data = { 0 };
    data.frame_header.frame_length = 0;
    data.frame_header.type = AERON_HDR_TYPE_DATA;
    feed(rig, &data, sizeof(data), from);
}

static void feed_setup(rig_t *rig, struct sockaddr_storage from, int32_t session_id, int32_t term_length)
{
    aeron_setup_header_t setup = { 0 };
    setup.frame_header.frame_length = sizeof(setup);
    setup.frame_header.type = AERON_HDR_TYPE_SETUP;
    setup.session_id = session_id;
    setup.stream_id = 1001;
    setup.term_length = term_length;
    feed(rig, &setup, sizeof(setup), from);
}

static int64_t dropped(const rig_t *rig, aeron_py_filter_reason_t reason)
{
    return aeron_py_endpoint_filter_dropped(rig->filter, reason);
}

/* ---- tests ---- */

static void no_rules_pass_everything_and_ring_for_traffic_only(void)
{
    rig_t rig;
    const aeron_py_endpoint_filter_config_t config = config_of();
    CHECK(rig_open(&rig, &config, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER), "rig: errno %d", errno);
    CHECK(0 == strcmp("aeron_py_endpoint_filter", rig.bindings->meta_info.name), "not first in the incoming chain");
    aeron_py_traffic_bell_t *bell = aeron_py_endpoint_filter_bell(rig.filter);
    const int64_t before = aeron_py_traffic_bell_sequence(bell);
    feed_heartbeat(&rig, from_v4(10, 0, 0, 1));
    CHECK(1 == delivered, "a heartbeat was not delivered");
    CHECK(before == aeron_py_traffic_bell_sequence(bell), "a heartbeat rang the bell");
    feed_data(&rig, from_v4(10, 0, 0, 1), 32);
    CHECK(2 == delivered, "a data frame was not delivered");
    CHECK(before + 1 == aeron_py_traffic_bell_sequence(bell), "a data frame with a payload did not ring the bell");
    feed_setup(&rig, from_v4(10, 0, 0, 2), 7, 65536);
    CHECK(3 == delivered && before + 2 == aeron_py_traffic_bell_sequence(bell), "a SETUP was not delivered or did not ring");
    rig_close(&rig);
}

static void blocklisted_source_is_dropped_and_counted(void)
{
    rig_t rig;
    const aeron_py_endpoint_filter_config_t config = config_of();
    rig_open(&rig, &config, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER);
    aeron_py_filter_prefix_t blocked;
    ipv4(blocked.address, 10, 9, 0, 0);
    blocked.prefix_length = 96 + 16;
    CHECK(0 == aeron_py_endpoint_filter_publish(rig.filter, &blocked, 1, NULL, 0), "publish: errno %d", errno);
    aeron_py_traffic_bell_t *bell = aeron_py_endpoint_filter_bell(rig.filter);
    const int64_t rung = aeron_py_traffic_bell_sequence(bell);
    feed_data(&rig, from_v4(10, 9, 3, 4), 32);
    CHECK(0 == delivered, "a datagram from 10.9.0.0/16 was delivered");
    CHECK(1 == dropped(&rig, AERON_PY_FILTER_BLOCKLIST), "blocklist drops: %lld", (long long)dropped(&rig, AERON_PY_FILTER_BLOCKLIST));
    CHECK(rung == aeron_py_traffic_bell_sequence(bell), "a dropped datagram rang the bell");
    feed_data(&rig, from_v4(10, 8, 3, 4), 32);
    CHECK(1 == delivered, "a datagram from outside the blocklist was dropped");
    rig_close(&rig);
}

static void owned_port_takes_only_its_owner(void)
{
    rig_t rig;
    const aeron_py_endpoint_filter_config_t config = config_of();
    rig_open(&rig, &config, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER);
    aeron_py_filter_port_owner_t owners[2];
    ipv4(owners[0].address, 10, 0, 0, 1);
    owners[0].port = rig.port;
    ipv4(owners[1].address, 10, 0, 0, 2);
    owners[1].port = (uint16_t)(rig.port + 1);
    aeron_py_endpoint_filter_publish(rig.filter, NULL, 0, owners, 2);
    feed_data(&rig, from_v4(10, 0, 0, 2), 32);
    CHECK(0 == delivered, "the owner of another port reached this one");
    CHECK(1 == dropped(&rig, AERON_PY_FILTER_PORT_OWNER), "port owner drops: %lld", (long long)dropped(&rig, AERON_PY_FILTER_PORT_OWNER));
    feed_data(&rig, from_v4(10, 0, 0, 1), 32);
    CHECK(1 == delivered, "the port's owner was dropped");
    rig_close(&rig);
}

static void setup_term_length_cap(void)
{
    rig_t rig;
    aeron_py_endpoint_filter_config_t config = config_of();
    config.max_setup_term_length = 65536;
    rig_open(&rig, &config, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER);
    feed_setup(&rig, from_v4(10, 0, 0, 1), 1, 131072);
    CHECK(0 == delivered, "a SETUP over the term length cap was delivered");
    CHECK(1 == dropped(&rig, AERON_PY_FILTER_SETUP_TERM_LENGTH), "term length drops: %lld",
          (long long)dropped(&rig, AERON_PY_FILTER_SETUP_TERM_LENGTH));
    feed_setup(&rig, from_v4(10, 0, 0, 1), 2, 65536);
    CHECK(1 == delivered, "a SETUP at the cap was dropped");
    aeron_py_filter_term_drop_t drop;
    CHECK(1 == aeron_py_endpoint_filter_last_term_drop(rig.filter, &drop), "no term-length drop sampled");
    uint8_t expected[16];
    ipv4(expected, 10, 0, 0, 1);
    CHECK(0 == memcmp(expected, drop.address, 16), "the sampled drop names another address");
    CHECK(131072 == drop.term_length && AERON_PY_FILTER_SETUP_TERM_LENGTH == drop.reason, "sampled %d for reason %d",
          drop.term_length, drop.reason);
    rig_close(&rig);
}

static void large_terms_within_budget_even_on_owned_ports(void)
{
    rig_t rig;
    aeron_py_endpoint_filter_config_t config = config_of();
    config.large_term_length = 65536;
    config.max_large_images_per_source = 1;
    rig_open(&rig, &config, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER);
    aeron_py_filter_term_drop_t drop;
    CHECK(0 == aeron_py_endpoint_filter_last_term_drop(rig.filter, &drop), "a drop sampled before any drop");
    aeron_py_filter_port_owner_t owner;
    ipv4(owner.address, 10, 0, 0, 7);
    owner.port = rig.port;
    aeron_py_endpoint_filter_publish(rig.filter, NULL, 0, &owner, 1);
    feed_setup(&rig, from_v4(10, 0, 0, 7), 1, 16 * 1024 * 1024);
    feed_setup(&rig, from_v4(10, 0, 0, 7), 2, 16 * 1024 * 1024);
    feed_setup(&rig, from_v4(10, 0, 0, 7), 3, 65536);
    CHECK(2 == delivered, "the owner's second large term or its small one: %d delivered, expected 2", delivered);
    CHECK(1 == dropped(&rig, AERON_PY_FILTER_SOURCE_LARGE_TERMS), "large-term drops: %lld",
          (long long)dropped(&rig, AERON_PY_FILTER_SOURCE_LARGE_TERMS));
    CHECK(1 == aeron_py_endpoint_filter_last_term_drop(rig.filter, &drop) &&
          AERON_PY_FILTER_SOURCE_LARGE_TERMS == drop.reason && 16 * 1024 * 1024 == drop.term_length,
          "the budget drop was not sampled (reason %d, term %d)", drop.reason, drop.term_length);
    rig_close(&rig);
}

static void receiver_admits_per_source_and_owned_ports_are_exempt(void)
{
    rig_t rig;
    aeron_py_endpoint_filter_config_t config = config_of();
    config.max_images_per_source = 1;
    rig_open(&rig, &config, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER);
    feed_setup(&rig, from_v4(10, 0, 0, 1), 1, 65536);
    feed_setup(&rig, from_v4(10, 0, 0, 1), 2, 65536);
    CHECK(1 == delivered, "a second session from a capped source: %d delivered, expected 1", delivered);
    CHECK(1 == dropped(&rig, AERON_PY_FILTER_SOURCE_IMAGES), "source image drops: %lld",
          (long long)dropped(&rig, AERON_PY_FILTER_SOURCE_IMAGES));
    aeron_py_filter_port_owner_t owner;
    ipv4(owner.address, 10, 0, 0, 1);
    owner.port = rig.port;
    aeron_py_endpoint_filter_publish(rig.filter, NULL, 0, &owner, 1);
    feed_setup(&rig, from_v4(10, 0, 0, 1), 3, 65536);
    CHECK(2 == delivered, "a SETUP from the port's owner was held to the per-source cap");
    rig_close(&rig);
}

static void sender_agent_does_not_admit(void)
{
    rig_t rig;
    aeron_py_endpoint_filter_config_t config = config_of();
    config.max_images_per_source = 1;
    rig_open(&rig, &config, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_SENDER);
    feed_setup(&rig, from_v4(10, 0, 0, 1), 1, 65536);
    feed_setup(&rig, from_v4(10, 0, 0, 1), 2, 65536);
    CHECK(2 == delivered, "the sender's agent applied admission: %d delivered", delivered);
    rig_close(&rig);
}

static void image_notifications_count_toward_caps(void)
{
    rig_t rig;
    aeron_py_endpoint_filter_config_t config = config_of();
    config.max_images_per_source = 1;
    rig_open(&rig, &config, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER);
    aeron_publication_image_t *image = calloc(1, sizeof(aeron_publication_image_t));
    image->source_address = from_v4(10, 0, 0, 1);
    image->session_id = 5;
    image->stream_id = 1001;
    rig.bindings->incoming_image_notification_func(rig.agent, &rig.transport, image, AERON_UDP_CHANNEL_INTERCEPTOR_ADD_NOTIFICATION);
    feed_setup(&rig, from_v4(10, 0, 0, 1), 6, 65536);
    CHECK(0 == delivered, "an image added without a SETUP did not count toward the source's cap");
    rig.bindings->incoming_image_notification_func(rig.agent, &rig.transport, image, AERON_UDP_CHANNEL_INTERCEPTOR_REMOVE_NOTIFICATION);
    feed_setup(&rig, from_v4(10, 0, 0, 1), 6, 65536);
    CHECK(1 == delivered, "a removed image still counted");
    free(image);
    rig_close(&rig);
}

static void publish_swaps_and_reclaims_tables(void)
{
    rig_t rig;
    const aeron_py_endpoint_filter_config_t config = config_of();
    rig_open(&rig, &config, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER);
    aeron_py_hazard_swap_t *tables = &rig.filter->tables;
    void *first = atomic_load(&tables->current);
    aeron_py_endpoint_filter_publish(rig.filter, NULL, 0, NULL, 0);
    void *second = atomic_load(&tables->current);
    CHECK(first != second, "publish did not swap the table");
    CHECK(0 == aeron_py_hazard_swap_retired(tables), "a table no agent names was retired, not freed");
    atomic_store(&tables->hazards[3], second);  /* an agent still reading it */
    aeron_py_endpoint_filter_publish(rig.filter, NULL, 0, NULL, 0);
    CHECK(1 == aeron_py_hazard_swap_retired(tables) && second == tables->retired[0],
        "a table named by a hazard slot was not kept on the retired list");
    atomic_store(&tables->hazards[3], NULL);
    rig_close(&rig);  /* frees the retired table (LeakSanitizer checks) */
}

static void registry_maps_contexts_to_filters(void)
{
    rig_t a, b;
    const aeron_py_endpoint_filter_config_t config = config_of();
    rig_open(&a, &config, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER);
    rig_open(&b, &config, AERON_UDP_CHANNEL_TRANSPORT_AFFINITY_RECEIVER);
    CHECK(a.filter == aeron_py_context_registry_find(AERON_PY_REGISTRY_ENDPOINT_FILTER, a.context), "context a: not its filter");
    CHECK(b.filter == aeron_py_context_registry_find(AERON_PY_REGISTRY_ENDPOINT_FILTER, b.context), "context b: not its filter");
    aeron_py_endpoint_filter_t *again = aeron_py_endpoint_filter_create(&config);
    errno = 0;
    CHECK(aeron_py_endpoint_filter_install(again, a.context) < 0 && EINVAL == errno, "a second filter on one context");
    aeron_py_endpoint_filter_delete(again);
    aeron_py_endpoint_filter_detach(a.filter);
    CHECK(NULL == aeron_py_context_registry_find(AERON_PY_REGISTRY_ENDPOINT_FILTER, a.context), "a detached filter is still registered");
    rig_close(&a);
    rig_close(&b);
}

static void bad_configs_are_rejected(void)
{
    aeron_py_endpoint_filter_config_t bad[6];
    for (int i = 0; i < 6; i++)
    {
        bad[i] = config_of();
    }
    bad[0].ipv4_prefix = 33;
    bad[1].max_sources = 0;
    bad[2].setup_rate = 5.0;
    bad[2].setup_burst = 0.5;
    bad[3].pending_timeout_ns = 0;
    bad[4].large_term_length = -1;
    bad[5].max_large_images_total = -1;
    for (int i = 0; i < 6; i++)
    {
        errno = 0;
        aeron_py_endpoint_filter_t *filter = aeron_py_endpoint_filter_create(&bad[i]);
        CHECK(NULL == filter && EINVAL == errno, "bad config %d accepted (errno %d)", i, errno);
        aeron_py_endpoint_filter_delete(filter);
    }
    CHECK(0 == strcmp("port owner", aeron_py_endpoint_filter_reason_name(AERON_PY_FILTER_PORT_OWNER)), "reason name");
    CHECK(0 == strcmp("unknown", aeron_py_endpoint_filter_reason_name(AERON_PY_FILTER_REASON_COUNT)), "unknown reason");
}

int main(void)
{
    check_program = "test_filter_interceptor";
    RUN(no_rules_pass_everything_and_ring_for_traffic_only);
    RUN(blocklisted_source_is_dropped_and_counted);
    RUN(owned_port_takes_only_its_owner);
    RUN(setup_term_length_cap);
    RUN(large_terms_within_budget_even_on_owned_ports);
    RUN(receiver_admits_per_source_and_owned_ports_are_exempt);
    RUN(sender_agent_does_not_admit);
    RUN(image_notifications_count_toward_caps);
    RUN(publish_swaps_and_reclaims_tables);
    RUN(registry_maps_contexts_to_filters);
    RUN(bad_configs_are_rejected);
    return check_summary();
}
