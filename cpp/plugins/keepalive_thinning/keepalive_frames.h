/* Which outgoing frames are keepalives keepalive thinning may hold back, and what they say
 * (see keepalive_thinning.h): an empty DATA frame (a heartbeat) or a status message, never
 * one flagged END OF STREAM or REVOKED, nor a status message asking for SETUP. */
#ifndef AERON_PY_KEEPALIVE_FRAMES_H
#define AERON_PY_KEEPALIVE_FRAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/* What a keepalive says: its key's type, session and stream, then what must go out when it
 * changes (a heartbeat's position; a status message's consumption position, window, flags). */
typedef struct aeron_py_keepalive_stct
{
    int16_t type;       /* AERON_HDR_TYPE_DATA or AERON_HDR_TYPE_SM */
    uint8_t flags;
    int32_t session_id;
    int32_t stream_id;
    int32_t term_id;
    int32_t term_offset;
    int32_t window;     /* a status message's receiver window; 0 for a heartbeat */
}
aeron_py_keepalive_t;

/* A keepalive that may be thinned, alone in `iov` (one element): true and `keepalive`
 * filled; else false. */
bool aeron_py_keepalive_of(const struct iovec *iov, size_t iov_length, aeron_py_keepalive_t *keepalive);

#endif
