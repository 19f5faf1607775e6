/* 16-byte addresses for the endpoint filter's tests: IPv4 as ::ffff:a.b.c.d, as the filter
 * stores them. */
#ifndef AERON_PY_TESTS_C_ADDRESSES_H
#define AERON_PY_TESTS_C_ADDRESSES_H

#include <stdint.h>
#include <string.h>

static inline void ipv4(uint8_t address[16], uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
    memset(address, 0, 16);
    address[10] = 0xFF;
    address[11] = 0xFF;
    address[12] = a;
    address[13] = b;
    address[14] = c;
    address[15] = d;
}

/* 2001:db8:<group2>:<group3>::<last> */
static inline void ipv6(uint8_t address[16], uint16_t group2, uint16_t group3, uint16_t last)
{
    memset(address, 0, 16);
    address[0] = 0x20;
    address[1] = 0x01;
    address[2] = 0x0d;
    address[3] = 0xb8;
    address[4] = (uint8_t)(group2 >> 8);
    address[5] = (uint8_t)group2;
    address[6] = (uint8_t)(group3 >> 8);
    address[7] = (uint8_t)group3;
    address[14] = (uint8_t)(last >> 8);
    address[15] = (uint8_t)last;
}

#endif
