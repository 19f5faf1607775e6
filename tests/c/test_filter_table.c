/* The endpoint filter's rule table (cpp/plugins/endpoint_filter/endpoint_filter_table.c):
 * prefix blocklist lookups in the 16-byte space, port owners, input validation. */
#include <errno.h>
#include <stdbool.h>

#include "endpoint_filter/endpoint_filter_table.h"

#include "addresses.h"
#include "check.h"

static aeron_py_filter_prefix_t prefix_v4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, int32_t length)
{
    aeron_py_filter_prefix_t prefix;
    ipv4(prefix.address, a, b, c, d);
    prefix.prefix_length = 96 + length;
    return prefix;
}

static bool blocks_v4(const aeron_py_filter_table_t *table, uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    uint8_t address[16];
    ipv4(address, a, b, c, d);
    return aeron_py_filter_table_blocks(table, address);
}

static void empty_table_blocks_nothing_and_owns_no_port(void)
{
    aeron_py_filter_table_t *table = aeron_py_filter_table_create(NULL, 0, NULL, 0);
    CHECK(NULL != table, "create: errno %d", errno);
    CHECK(!blocks_v4(table, 10, 0, 0, 1), "an empty blocklist blocked 10.0.0.1");
    CHECK(!aeron_py_filter_table_has_owners(table), "an empty table has owners");
    CHECK(NULL == aeron_py_filter_table_owner(table, 40123), "an empty table names an owner of port 40123");
    aeron_py_filter_table_delete(table);
}

static void ipv4_prefix_blocks_its_network_only(void)
{
    const aeron_py_filter_prefix_t blocklist[] = { prefix_v4(192, 168, 7, 0, 24) };
    aeron_py_filter_table_t *table = aeron_py_filter_table_create(blocklist, 1, NULL, 0);
    CHECK(blocks_v4(table, 192, 168, 7, 1), "192.168.7.0/24 did not block 192.168.7.1");
    CHECK(blocks_v4(table, 192, 168, 7, 255), "192.168.7.0/24 did not block 192.168.7.255");
    CHECK(!blocks_v4(table, 192, 168, 8, 1), "192.168.7.0/24 blocked 192.168.8.1");
    CHECK(!blocks_v4(table, 192, 168, 6, 255), "192.168.7.0/24 blocked 192.168.6.255");
    aeron_py_filter_table_delete(table);
}

static void host_bits_of_a_prefix_are_ignored(void)
{
    const aeron_py_filter_prefix_t blocklist[] = { prefix_v4(10, 1, 2, 3, 24) };  /* written as 10.1.2.3/24 */
    aeron_py_filter_table_t *table = aeron_py_filter_table_create(blocklist, 1, NULL, 0);
    CHECK(blocks_v4(table, 10, 1, 2, 99), "10.1.2.3/24 did not block 10.1.2.99");
    CHECK(!blocks_v4(table, 10, 1, 3, 3), "10.1.2.3/24 blocked 10.1.3.3");
    aeron_py_filter_table_delete(table);
}

static void exact_and_zero_length_prefixes(void)
{
    const aeron_py_filter_prefix_t exact[] = { prefix_v4(10, 0, 0, 5, 32) };
    aeron_py_filter_table_t *table = aeron_py_filter_table_create(exact, 1, NULL, 0);
    CHECK(blocks_v4(table, 10, 0, 0, 5), "10.0.0.5/32 did not block itself");
    CHECK(!blocks_v4(table, 10, 0, 0, 4), "10.0.0.5/32 blocked 10.0.0.4");
    aeron_py_filter_table_delete(table);

    aeron_py_filter_prefix_t everything = { { 0 }, 0 };
    table = aeron_py_filter_table_create(&everything, 1, NULL, 0);
    uint8_t v6[16];
    ipv6(v6, 1, 2, 3);
    CHECK(blocks_v4(table, 8, 8, 8, 8), "::/0 did not block 8.8.8.8");
    CHECK(aeron_py_filter_table_blocks(table, v6), "::/0 did not block an IPv6 address");
    aeron_py_filter_table_delete(table);
}

static void ipv6_prefixes_and_mixed_lengths(void)
{
    aeron_py_filter_prefix_t blocklist[3];
    ipv6(blocklist[0].address, 0xabcd, 0x0001, 0);
    blocklist[0].prefix_length = 64;                  /* 2001:db8:abcd:1::/64 */
    blocklist[1] = prefix_v4(172, 16, 0, 0, 12);
    blocklist[2] = prefix_v4(172, 16, 0, 0, 12);      /* a duplicate collapses */
    aeron_py_filter_table_t *table = aeron_py_filter_table_create(blocklist, 3, NULL, 0);
    uint8_t inside[16], outside[16];
    ipv6(inside, 0xabcd, 0x0001, 0x1234);
    ipv6(outside, 0xabcd, 0x0002, 0x1234);
    CHECK(aeron_py_filter_table_blocks(table, inside), "2001:db8:abcd:1::/64 did not block an address in it");
    CHECK(!aeron_py_filter_table_blocks(table, outside), "2001:db8:abcd:1::/64 blocked 2001:db8:abcd:2::1234");
    CHECK(blocks_v4(table, 172, 31, 255, 1), "172.16.0.0/12 did not block 172.31.255.1");
    CHECK(!blocks_v4(table, 172, 32, 0, 1), "172.16.0.0/12 blocked 172.32.0.1");
    CHECK(2 == table->prefix_count, "3 prefixes with a duplicate: %zu kept, expected 2", table->prefix_count);
    CHECK(2 == table->length_count, "2 distinct lengths: %zu recorded", table->length_count);
    aeron_py_filter_table_delete(table);
}

static void ipv4_prefix_does_not_match_ipv6_addresses(void)
{
    const aeron_py_filter_prefix_t blocklist[] = { prefix_v4(0, 0, 0, 0, 0) };  /* ::ffff:0:0/96: all IPv4 */
    aeron_py_filter_table_t *table = aeron_py_filter_table_create(blocklist, 1, NULL, 0);
    uint8_t v6[16];
    ipv6(v6, 0, 0, 1);
    CHECK(blocks_v4(table, 1, 2, 3, 4), "0.0.0.0/0 (IPv4) did not block 1.2.3.4");
    CHECK(!aeron_py_filter_table_blocks(table, v6), "0.0.0.0/0 (IPv4) blocked an IPv6 address");
    aeron_py_filter_table_delete(table);
}

static void prefix_length_outside_0_to_128_is_rejected(void)
{
    aeron_py_filter_prefix_t bad = prefix_v4(10, 0, 0, 0, 0);
    bad.prefix_length = 129;
    errno = 0;
    CHECK(NULL == aeron_py_filter_table_create(&bad, 1, NULL, 0), "a /129 prefix was accepted");
    CHECK(EINVAL == errno, "a /129 prefix: errno %d, expected EINVAL", errno);
    bad.prefix_length = -1;
    errno = 0;
    CHECK(NULL == aeron_py_filter_table_create(&bad, 1, NULL, 0), "a /-1 prefix was accepted");
    CHECK(EINVAL == errno, "a /-1 prefix: errno %d, expected EINVAL", errno);
}

static void port_owners_are_found_by_port(void)
{
    aeron_py_filter_port_owner_t owners[3];
    ipv4(owners[0].address, 10, 0, 0, 3);
    owners[0].port = 50003;
    ipv4(owners[1].address, 10, 0, 0, 1);
    owners[1].port = 50001;
    ipv4(owners[2].address, 10, 0, 0, 2);
    owners[2].port = 50002;
    aeron_py_filter_table_t *table = aeron_py_filter_table_create(NULL, 0, owners, 3);
    CHECK(aeron_py_filter_table_has_owners(table), "3 owners, has_owners false");
    for (int i = 0; i < 3; i++)
    {
        const uint8_t *owner = aeron_py_filter_table_owner(table, owners[i].port);
        CHECK(NULL != owner && 0 == memcmp(owner, owners[i].address, 16), "port %u: wrong or no owner", owners[i].port);
    }
    CHECK(NULL == aeron_py_filter_table_owner(table, 50004), "port 50004 has no owner, one was found");
    CHECK(NULL == aeron_py_filter_table_owner(table, 0), "port 0 has no owner, one was found");
    CHECK(!blocks_v4(table, 10, 0, 0, 1), "owners alone blocked an address");
    aeron_py_filter_table_delete(table);
}

static void one_owner_per_port(void)
{
    aeron_py_filter_port_owner_t owners[2];
    ipv4(owners[0].address, 10, 0, 0, 1);
    ipv4(owners[1].address, 10, 0, 0, 2);
    owners[0].port = owners[1].port = 50001;
    aeron_py_filter_table_t *table = aeron_py_filter_table_create(NULL, 0, owners, 2);
    CHECK(1 == table->owner_count, "two owners of one port: %zu entries, expected 1", table->owner_count);
    const uint8_t *owner = aeron_py_filter_table_owner(table, 50001);
    CHECK(NULL != owner && (0 == memcmp(owner, owners[0].address, 16) || 0 == memcmp(owner, owners[1].address, 16)),
          "port 50001: the owner is neither of the two given");
    aeron_py_filter_table_delete(table);
}

int main(void)
{
    check_program = "test_filter_table";
    RUN(empty_table_blocks_nothing_and_owns_no_port);
    RUN(ipv4_prefix_blocks_its_network_only);
    RUN(host_bits_of_a_prefix_are_ignored);
    RUN(exact_and_zero_length_prefixes);
    RUN(ipv6_prefixes_and_mixed_lengths);
    RUN(ipv4_prefix_does_not_match_ipv6_addresses);
    RUN(prefix_length_outside_0_to_128_is_rejected);
    RUN(port_owners_are_found_by_port);
    RUN(one_owner_per_port);
    return check_summary();
}
