/* New-session admission (cpp/plugins/endpoint_filter/endpoint_filter_admission.c): source
 * keys, per-source and total caps, the per-source token bucket, pending SETUPs and their
 * expiry, images replacing pending SETUPs, and the bounded source table. */
#include <stdbool.h>

#include "endpoint_filter/endpoint_filter_admission.h"

#include "addresses.h"
#include "check.h"

#define ADMIT (-1)
#define SECOND_NS INT64_C(1000000000)
#define T0 (INT64_C(5) * SECOND_NS)
#define SMALL_TERM (64 * 1024)
#define LARGE_TERM (16 * 1024 * 1024)

static aeron_py_endpoint_filter_config_t config_of(void)
{
    aeron_py_endpoint_filter_config_t config = { 0 };
    config.ipv4_prefix = 32;
    config.ipv6_prefix = 128;
    config.max_sources = 16;
    config.max_pending = 16;
    config.pending_timeout_ns = SECOND_NS;
    return config;
}

static aeron_py_source_key_t key_v4(const aeron_py_endpoint_filter_config_t *config, uint8_t c, uint8_t d)
{
    uint8_t address[16];
    ipv4(address, 10, 0, c, d);
    return aeron_py_admission_key(config, address);
}

static bool same_key(aeron_py_source_key_t a, aeron_py_source_key_t b)
{
    return a.hi == b.hi && a.lo == b.lo;
}

static int setup(aeron_py_admission_t *admission, aeron_py_source_key_t key, int32_t session_id, int64_t now_ns)
{
    return aeron_py_admission_on_setup(admission, key, session_id, 1001, 40000, false, SMALL_TERM, now_ns);
}

static void enabled_only_when_some_limit_is_set(void)
{
    aeron_py_endpoint_filter_config_t config = config_of();
    CHECK(!aeron_py_admission_enabled(&config), "no rate and no caps: admission enabled");
    config.setup_rate = 10.0;
    CHECK(aeron_py_admission_enabled(&config), "a setup rate: admission not enabled");
    config = config_of();
    config.max_images_per_source = 1;
    CHECK(aeron_py_admission_enabled(&config), "a per-source cap: admission not enabled");
    config = config_of();
    config.max_images_total = 1;
    CHECK(aeron_py_admission_enabled(&config), "a total cap: admission not enabled");
}

static void source_key_masks_to_the_configured_prefix(void)
{
    aeron_py_endpoint_filter_config_t config = config_of();
    config.ipv4_prefix = 24;
    config.ipv6_prefix = 64;
    CHECK(same_key(key_v4(&config, 7, 1), key_v4(&config, 7, 200)), "/24: 10.0.7.1 and 10.0.7.200 differ");
    CHECK(!same_key(key_v4(&config, 7, 1), key_v4(&config, 8, 1)), "/24: 10.0.7.1 and 10.0.8.1 are one source");
    uint8_t a[16], b[16], c[16];
    ipv6(a, 1, 2, 0x10);
    ipv6(b, 1, 2, 0x20);
    ipv6(c, 1, 3, 0x10);
    CHECK(same_key(aeron_py_admission_key(&config, a), aeron_py_admission_key(&config, b)), "/64: one network, two keys");
    CHECK(!same_key(aeron_py_admission_key(&config, a), aeron_py_admission_key(&config, c)), "/64: two networks, one key");
    config.ipv4_prefix = 32;
    CHECK(!same_key(key_v4(&config, 7, 1), key_v4(&config, 7, 2)), "/32: two hosts are one source");
}

static void per_source_cap_counts_pending_setups(void)
{
    aeron_py_endpoint_filter_config_t config = config_of();
    config.max_images_per_source = 2;
    aeron_py_admission_t admission;
    CHECK(0 == aeron_py_admission_init(&admission, &config), "init");
    const aeron_py_source_key_t a = key_v4(&config, 0, 1), b = key_v4(&config, 0, 2);
    CHECK(ADMIT == setup(&admission, a, 1, T0), "first session of source a dropped");
    CHECK(ADMIT == setup(&admission, a, 2, T0), "second session of source a dropped");
    const int third = setup(&admission, a, 3, T0);
    CHECK(AERON_PY_FILTER_SOURCE_IMAGES == third, "third session of a capped source: %d, expected SOURCE_IMAGES", third);
    CHECK(ADMIT == setup(&admission, b, 3, T0), "source b dropped for source a's cap");
    CHECK(ADMIT == setup(&admission, a, 1, T0), "a repeated SETUP of an admitted session dropped");
    aeron_py_admission_close(&admission);
}

static void total_cap_and_pending_cap(void)
{
    aeron_py_endpoint_filter_config_t config = config_of();
    config.max_images_total = 3;
    aeron_py_admission_t admission;
    aeron_py_admission_init(&admission, &config);
    for (int i = 0; i < 3; i++)
    {
        CHECK(ADMIT == setup(&admission, key_v4(&config, 1, (uint8_t)i), 10 + i, T0), "session %d under the total cap", i);
    }
    const int fourth = setup(&admission, key_v4(&config, 1, 9), 99, T0);
    CHECK(AERON_PY_FILTER_TOTAL_IMAGES == fourth, "over the total cap: %d, expected TOTAL_IMAGES", fourth);
    aeron_py_admission_close(&admission);

    config = config_of();
    config.max_images_total = 100;
    config.max_pending = 2;
    aeron_py_admission_init(&admission, &config);
    CHECK(ADMIT == setup(&admission, key_v4(&config, 2, 1), 1, T0), "first pending");
    CHECK(ADMIT == setup(&admission, key_v4(&config, 2, 2), 2, T0), "second pending");
    const int third = setup(&admission, key_v4(&config, 2, 3), 3, T0);
    CHECK(AERON_PY_FILTER_TOTAL_IMAGES == third, "over max_pending: %d, expected TOTAL_IMAGES", third);
    aeron_py_admission_close(&admission);
}

static void token_bucket_per_source(void)
{
    aeron_py_endpoint_filter_config_t config = config_of();
    config.setup_rate = 2.0;   /* per second */
    config.setup_burst = 2.0;
    aeron_py_admission_t admission;
    aeron_py_admission_init(&admission, &config);
    const aeron_py_source_key_t a = key_v4(&config, 3, 1);
    CHECK(ADMIT == setup(&admission, a, 1, T0), "burst 1/2 dropped");
    CHECK(ADMIT == setup(&admission, a, 2, T0), "burst 2/2 dropped");
    const int third = setup(&admission, a, 3, T0);
    CHECK(AERON_PY_FILTER_SETUP_RATE == third, "beyond the burst: %d, expected SETUP_RATE", third);
    CHECK(ADMIT == setup(&admission, key_v4(&config, 3, 2), 3, T0), "another source shares a's bucket");
    const int early = setup(&admission, a, 4, T0 + SECOND_NS / 4);  /* half a token */
    CHECK(AERON_PY_FILTER_SETUP_RATE == early, "after 250 ms at 2/s: %d, expected SETUP_RATE", early);
    CHECK(ADMIT == setup(&admission, a, 5, T0 + SECOND_NS / 2), "after 500 ms at 2/s a token is back");
    aeron_py_admission_close(&admission);
}

static void pending_setups_expire(void)
{
    aeron_py_endpoint_filter_config_t config = config_of();
    config.max_images_per_source = 1;
    aeron_py_admission_t admission;
    aeron_py_admission_init(&admission, &config);
    const aeron_py_source_key_t a = key_v4(&config, 4, 1);
    CHECK(ADMIT == setup(&admission, a, 1, T0), "first session");
    CHECK(AERON_PY_FILTER_SOURCE_IMAGES == setup(&admission, a, 2, T0 + SECOND_NS - 1), "before the timeout");
    CHECK(ADMIT == setup(&admission, a, 2, T0 + SECOND_NS), "a SETUP with no image is forgotten after the timeout");
    CHECK(1 == admission.pending_count, "pending after expiry: %zu, expected 1", admission.pending_count);
    CHECK(1 == admission.counted_total, "counted after expiry: %lld, expected 1", (long long)admission.counted_total);
    aeron_py_admission_close(&admission);
}

static void image_takes_over_its_pending_setup(void)
{
    aeron_py_endpoint_filter_config_t config = config_of();
    config.max_images_per_source = 1;
    config.max_images_total = 10;
    aeron_py_admission_t admission;
    aeron_py_admission_init(&admission, &config);
    const aeron_py_source_key_t a = key_v4(&config, 5, 1);
    int image;  /* any address stands for an image */
    CHECK(ADMIT == setup(&admission, a, 7, T0), "first session");
    aeron_py_admission_on_image_added(&admission, &image, a, 7, 1001, 40000, false, SMALL_TERM, T0);
    CHECK(0 == admission.pending_count, "the image did not replace its pending SETUP");
    CHECK(1 == admission.counted_total, "one image: counted %lld", (long long)admission.counted_total);
    /* long after the pending timeout the image still holds the source's only slot */
    CHECK(AERON_PY_FILTER_SOURCE_IMAGES == setup(&admission, a, 8, T0 + 10 * SECOND_NS), "an image did not count");
    aeron_py_admission_on_image_added(&admission, &image, a, 7, 1001, 40000, false, SMALL_TERM, T0);  /* another destination */
    aeron_py_admission_on_image_removed(&admission, &image);
    CHECK(0 == admission.counted_total, "after removal: counted %lld", (long long)admission.counted_total);
    CHECK(ADMIT == setup(&admission, a, 8, T0 + 10 * SECOND_NS), "the removed image still holds the slot");
    aeron_py_admission_close(&admission);
}

static void unadmitted_images_count_only_when_asked(void)
{
    aeron_py_endpoint_filter_config_t config = config_of();
    config.max_images_per_source = 1;
    aeron_py_admission_t admission;
    aeron_py_admission_init(&admission, &config);
    const aeron_py_source_key_t a = key_v4(&config, 6, 1), b = key_v4(&config, 6, 2);
    int owned_port_image, other_image;
    aeron_py_admission_on_image_added(&admission, &owned_port_image, a, 1, 1001, 40001, false, SMALL_TERM, T0);
    CHECK(ADMIT == setup(&admission, a, 2, T0), "an uncounted image (an owned port's) took the source's slot");
    aeron_py_admission_on_image_added(&admission, &other_image, b, 1, 1001, 40000, true, SMALL_TERM, T0);
    CHECK(AERON_PY_FILTER_SOURCE_IMAGES == setup(&admission, b, 2, T0), "a counted image without a SETUP did not count");
    aeron_py_admission_close(&admission);
}

static void source_table_full_until_sources_go_idle(void)
{
    aeron_py_endpoint_filter_config_t config = config_of();
    config.setup_rate = 1.0;
    config.setup_burst = 1.0;
    config.max_sources = 2;
    config.pending_timeout_ns = SECOND_NS / 10;
    aeron_py_admission_t admission;
    aeron_py_admission_init(&admission, &config);
    CHECK(ADMIT == setup(&admission, key_v4(&config, 7, 1), 1, T0), "source 1");
    CHECK(ADMIT == setup(&admission, key_v4(&config, 7, 2), 2, T0), "source 2");
    const int third = setup(&admission, key_v4(&config, 7, 3), 3, T0);
    CHECK(AERON_PY_FILTER_SOURCE_TABLE_FULL == third, "a third source in a table of 2: %d, expected SOURCE_TABLE_FULL", third);
    /* 1 s later: pending SETUPs expired, buckets full again, so both sources are idle */
    CHECK(ADMIT == setup(&admission, key_v4(&config, 7, 3), 3, T0 + SECOND_NS), "idle sources were not compacted away");
    CHECK(1 == admission.sources.count, "after compaction: %zu sources, expected 1", admission.sources.count);
    aeron_py_admission_close(&admission);
}

static int setup_term(
    aeron_py_admission_t *admission, aeron_py_source_key_t key, int32_t session_id, bool owned, int32_t term_length,
    int64_t now_ns)
{
    return aeron_py_admission_on_setup(admission, key, session_id, 1001, owned ? 40001 : 40000, owned, term_length, now_ns);
}

static aeron_py_endpoint_filter_config_t large_term_config(void)
{
    aeron_py_endpoint_filter_config_t config = config_of();
    config.large_term_length = SMALL_TERM;
    config.max_large_images_per_source = 2;
    config.max_large_images_total = 3;
    return config;
}

static void large_terms_have_a_budget_per_source_and_in_total(void)
{
    aeron_py_endpoint_filter_config_t config = large_term_config();
    CHECK(aeron_py_admission_enabled(&config), "a large-term budget alone: admission not enabled");
    CHECK(!aeron_py_admission_is_large(&config, SMALL_TERM), "64 KiB counted as a large term");
    CHECK(aeron_py_admission_is_large(&config, 2 * SMALL_TERM), "128 KiB not counted as a large term");
    aeron_py_admission_t admission;
    CHECK(0 == aeron_py_admission_init(&admission, &config), "init");
    const aeron_py_source_key_t a = key_v4(&config, 9, 1), b = key_v4(&config, 9, 2), c = key_v4(&config, 9, 3);
    CHECK(ADMIT == setup_term(&admission, a, 1, false, LARGE_TERM, T0), "a's first large term");
    CHECK(ADMIT == setup_term(&admission, a, 2, true, LARGE_TERM, T0), "a's second large term (an owned port)");
    int reason = setup_term(&admission, a, 3, false, LARGE_TERM, T0);
    CHECK(AERON_PY_FILTER_SOURCE_LARGE_TERMS == reason, "a's third large term: %d, expected SOURCE_LARGE_TERMS", reason);
    CHECK(ADMIT == setup_term(&admission, a, 4, false, SMALL_TERM, T0), "a small term was refused by the large budget");
    CHECK(ADMIT == setup_term(&admission, a, 1, false, LARGE_TERM, T0), "a repeated SETUP of an admitted session");
    CHECK(ADMIT == setup_term(&admission, b, 1, false, LARGE_TERM, T0), "b's first large term");
    reason = setup_term(&admission, c, 1, false, LARGE_TERM, T0);
    CHECK(AERON_PY_FILTER_TOTAL_LARGE_TERMS == reason, "a fourth large term in total: %d, expected TOTAL_LARGE_TERMS", reason);
    CHECK(3 == admission.large_total, "large total %lld, expected 3", (long long)admission.large_total);
    CHECK(3 == admission.counted_total, "the owned port counted: %lld, expected 3", (long long)admission.counted_total);
    aeron_py_admission_close(&admission);
}

static void large_term_places_follow_images_and_expire_with_setups(void)
{
    aeron_py_endpoint_filter_config_t config = large_term_config();
    config.max_large_images_per_source = 1;
    aeron_py_admission_t admission;
    aeron_py_admission_init(&admission, &config);
    const aeron_py_source_key_t a = key_v4(&config, 10, 1);
    int image, unannounced;
    CHECK(ADMIT == setup_term(&admission, a, 1, true, LARGE_TERM, T0), "a large term on an owned port");
    aeron_py_admission_on_image_added(&admission, &image, a, 1, 1001, 40001, false, LARGE_TERM, T0);
    CHECK(1 == admission.large_total && 0 == admission.counted_total, "after the image: large %lld counted %lld",
        (long long)admission.large_total, (long long)admission.counted_total);
    CHECK(AERON_PY_FILTER_SOURCE_LARGE_TERMS == setup_term(&admission, a, 2, true, LARGE_TERM, T0 + 10 * SECOND_NS),
        "the image gave its large-term place back at the pending timeout");
    aeron_py_admission_on_image_removed(&admission, &image);
    CHECK(0 == admission.large_total, "after removal: large %lld", (long long)admission.large_total);
    CHECK(ADMIT == setup_term(&admission, a, 2, true, LARGE_TERM, T0 + 10 * SECOND_NS), "the removed image kept its place");
    CHECK(ADMIT == setup_term(&admission, a, 3, true, LARGE_TERM, T0 + 12 * SECOND_NS), "an expired SETUP kept its place");
    aeron_py_admission_on_image_added(&admission, &unannounced, a, 9, 1001, 40001, false, LARGE_TERM, T0 + 12 * SECOND_NS);
    CHECK(2 == admission.large_total, "an image without a SETUP did not count: large %lld", (long long)admission.large_total);
    aeron_py_admission_close(&admission);
}

int main(void)
{
    check_program = "test_filter_admission";
    RUN(enabled_only_when_some_limit_is_set);
    RUN(source_key_masks_to_the_configured_prefix);
    RUN(per_source_cap_counts_pending_setups);
    RUN(total_cap_and_pending_cap);
    RUN(token_bucket_per_source);
    RUN(pending_setups_expire);
    RUN(image_takes_over_its_pending_setup);
    RUN(unadmitted_images_count_only_when_asked);
    RUN(source_table_full_until_sources_go_idle);
    RUN(large_terms_have_a_budget_per_source_and_in_total);
    RUN(large_term_places_follow_images_and_expire_with_setups);
    return check_summary();
}
