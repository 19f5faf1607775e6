/* Which outgoing frames are thinnable keepalives (see keepalive_frames.h). */
#include "keepalive_frames.h"

#include <string.h>

#include "protocol/aeron_udp_protocol.h"

bool aeron_py_keepalive_of(const struct iovec *iov, size_t iov_length, aeron_py_keepalive_t *k)
{
    if (1 != iov_length || iov[0].iov_len < sizeof(aeron_frame_header_t))
    {
        return false;
    }
    aeron_frame_header_t frame;
    memcpy(&frame, iov[0].iov_base, sizeof(frame));
    if (AERON_HDR_TYPE_DATA == frame.type && 0 == frame.frame_length && iov[0].iov_len == AERON_DATA_HEADER_LENGTH)
    {
        if (0 != (frame.flags & (AERON_DATA_HEADER_EOS_FLAG | AERON_DATA_HEADER_REVOKED_FLAG)))
        {
            return false;
        }
        aeron_data_header_t data;
        memcpy(&data, iov[0].iov_base, sizeof(data));
        *k = (aeron_py_keepalive_t){ AERON_HDR_TYPE_DATA, frame.flags, data.session_id, data.stream_id, data.term_id,
                                     data.term_offset, 0 };
        return true;
    }
    if (AERON_HDR_TYPE_SM == frame.type && iov[0].iov_len >= sizeof(aeron_status_message_header_t))
    {
        if (0 != (frame.flags & (AERON_STATUS_MESSAGE_HEADER_EOS_FLAG | AERON_STATUS_MESSAGE_HEADER_SEND_SETUP_FLAG)))
        {
            return false;
        }
        aeron_status_message_header_t sm;
        memcpy(&sm, iov[0].iov_base, sizeof(sm));
        *k = (aeron_py_keepalive_t){ AERON_HDR_TYPE_SM, frame.flags, sm.session_id, sm.stream_id,
                                     sm.consumption_term_id, sm.consumption_term_offset, sm.receiver_window };
        return true;
    }
    return false;
}
