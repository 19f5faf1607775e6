/* A UDP transport's bound local port, cached in one of its interceptor slots
 * (transport->interceptor_clientds, reset to NULL by Aeron at transport init). Each
 * interceptor passes its own slot and calls this only on the agent thread that uses it. */
#ifndef AERON_PY_TRANSPORT_PORT_H
#define AERON_PY_TRANSPORT_PORT_H

#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "media/aeron_udp_channel_transport.h"

static inline uint16_t aeron_py_transport_local_port(aeron_udp_channel_transport_t *transport, int slot)
{
    uintptr_t cached = (uintptr_t)transport->interceptor_clientds[slot];
    if (0 != cached)
    {
        return (uint16_t)(cached & 0xFFFF);
    }
    struct sockaddr_storage bound;
    socklen_t bound_length = sizeof(bound);
    uint16_t port = 0;
    if (0 == getsockname(transport->fd, (struct sockaddr *)&bound, &bound_length))
    {
        port = AF_INET == bound.ss_family ?
            ntohs(((struct sockaddr_in *)&bound)->sin_port) : ntohs(((struct sockaddr_in6 *)&bound)->sin6_port);
    }
    transport->interceptor_clientds[slot] = (void *)(UINT64_C(0x10000) | port);
    return port;
}

#endif
