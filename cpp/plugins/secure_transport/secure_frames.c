/* The secure transport's wire format (see secure_frames.h). */
#include "secure_frames.h"

#include <string.h>

#include <sodium.h>

#include "protocol/aeron_udp_protocol.h"

_Static_assert(crypto_aead_xchacha20poly1305_ietf_KEYBYTES == AERON_PY_SECURE_KEY_LENGTH, "key length");
_Static_assert(crypto_aead_xchacha20poly1305_ietf_ABYTES == AERON_PY_SECURE_TAG_LENGTH, "tag length");
_Static_assert(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES == AERON_PY_SECURE_NONCE_LENGTH, "nonce length");
_Static_assert(AERON_PY_SECURE_SALT_LENGTH + 8 == AERON_PY_SECURE_NONCE_LENGTH, "salt + counter = nonce");
_Static_assert(sizeof(aeron_error_header_t) == 40, "the error frame's fixed header");

static int32_t read_int32(const uint8_t *at)
{
    int32_t value;
    memcpy(&value, at, sizeof(value));
    return value;   /* Aeron's frames are little-endian, as are the hosts it runs on */
}

typedef struct
{
    uint32_t clear_length;
    uint32_t session_offset;   /* the stream id follows the session id in every type */
    uint8_t directions;
}
frame_layout_t;

static bool layout_of(int16_t type, frame_layout_t *layout)
{
    switch (type)
    {
        case AERON_HDR_TYPE_DATA:
        case AERON_HDR_TYPE_PAD:
            *layout = (frame_layout_t){ AERON_DATA_HEADER_LENGTH, 12, AERON_PY_SECURE_TO_RECEIVER };
            return true;
        case AERON_HDR_TYPE_SETUP:
            *layout = (frame_layout_t){ sizeof(aeron_setup_header_t), 12, AERON_PY_SECURE_TO_RECEIVER };
            return true;
        case AERON_HDR_TYPE_SM:
            *layout = (frame_layout_t){ sizeof(aeron_status_message_header_t), 8, AERON_PY_SECURE_TO_SENDER };
            return true;
        case AERON_HDR_TYPE_NAK:
            *layout = (frame_layout_t){ sizeof(aeron_nak_header_t), 8, AERON_PY_SECURE_TO_SENDER };
            return true;
        case AERON_HDR_TYPE_ERR:
            *layout = (frame_layout_t){ sizeof(aeron_error_header_t), 8, AERON_PY_SECURE_TO_SENDER };
            return true;
        case AERON_HDR_TYPE_RSP_SETUP:
            *layout = (frame_layout_t){ sizeof(aeron_response_setup_header_t), 8, AERON_PY_SECURE_TO_SENDER };
            return true;
        case AERON_HDR_TYPE_RTTM:
            *layout = (frame_layout_t){
                sizeof(aeron_rttm_header_t), 8, AERON_PY_SECURE_TO_RECEIVER | AERON_PY_SECURE_TO_SENDER };
            return true;
        default:
            return false;
    }
}

bool aeron_py_secure_frame_parse(const uint8_t *datagram, size_t length, aeron_py_secure_frame_t *frame)
{
    if (length < sizeof(aeron_frame_header_t))
    {
        return false;
    }
    int16_t type;
    memcpy(&type, datagram + offsetof(aeron_frame_header_t, type), sizeof(type));
    frame_layout_t layout;
    if (!layout_of(type, &layout) || length < layout.clear_length)
    {
        return false;
    }
    frame->type = type;
    frame->directions = layout.directions;
    frame->clear_length = layout.clear_length;
    frame->session_id = read_int32(datagram + layout.session_offset);
    frame->stream_id = read_int32(datagram + layout.session_offset + 4);
    return true;
}

static void make_nonce(
    uint8_t nonce[AERON_PY_SECURE_NONCE_LENGTH], const uint8_t salt[AERON_PY_SECURE_SALT_LENGTH], uint64_t counter)
{
    memcpy(nonce, salt, AERON_PY_SECURE_SALT_LENGTH);
    for (int i = 0; i < 8; i++)
    {
        nonce[AERON_PY_SECURE_SALT_LENGTH + i] = (uint8_t)(counter >> (56 - 8 * i));
    }
}

int aeron_py_secure_seal(
    const aeron_py_secure_frame_t *frame,
    const uint8_t *datagram,
    size_t length,
    const uint8_t key[AERON_PY_SECURE_KEY_LENGTH],
    const uint8_t salt[AERON_PY_SECURE_SALT_LENGTH],
    uint64_t counter,
    uint8_t *out)
{
    if (length > AERON_PY_SECURE_MAX_DATAGRAM - AERON_PY_SECURE_OVERHEAD || length < frame->clear_length)
    {
        return -1;
    }
    const size_t clear = frame->clear_length;
    uint8_t *nonce = out + length + AERON_PY_SECURE_TAG_LENGTH;
    make_nonce(nonce, salt, counter);
    memcpy(out, datagram, clear);
    unsigned long long sealed_length = 0;
    crypto_aead_xchacha20poly1305_ietf_encrypt(
        out + clear, &sealed_length, datagram + clear, length - clear, datagram, clear, NULL, nonce, key);
    return 0;
}

uint64_t aeron_py_secure_counter(const aeron_py_secure_frame_t *frame, const uint8_t *sealed, size_t length)
{
    if (length < (size_t)frame->clear_length + AERON_PY_SECURE_OVERHEAD)
    {
        return 0;
    }
    const uint8_t *at = sealed + length - 8;
    uint64_t counter = 0;
    for (int i = 0; i < 8; i++)
    {
        counter = (counter << 8) | at[i];
    }
    return counter;
}

int64_t aeron_py_secure_open(
    const aeron_py_secure_frame_t *frame,
    const uint8_t *sealed,
    size_t length,
    const uint8_t key[AERON_PY_SECURE_KEY_LENGTH],
    uint8_t *out)
{
    const size_t clear = frame->clear_length;
    if (length < clear + AERON_PY_SECURE_OVERHEAD)
    {
        return -1;
    }
    const size_t plain_length = length - AERON_PY_SECURE_OVERHEAD;
    const uint8_t *nonce = sealed + length - AERON_PY_SECURE_NONCE_LENGTH;
    unsigned long long opened_length = 0;
    if (0 != crypto_aead_xchacha20poly1305_ietf_decrypt(
        out + clear, &opened_length, NULL, sealed + clear, plain_length - clear + AERON_PY_SECURE_TAG_LENGTH,
        sealed, clear, nonce, key))
    {
        return -1;
    }
    memcpy(out, sealed, clear);
    return (int64_t)plain_length;
}

bool aeron_py_replay_window_allows(const aeron_py_replay_window_t *window, uint64_t counter)
{
    if (0 == counter)
    {
        return false;
    }
    if (counter > window->highest)
    {
        return true;
    }
    if (window->highest - counter >= AERON_PY_REPLAY_WINDOW)
    {
        return false;
    }
    const uint64_t bit = counter % AERON_PY_REPLAY_WINDOW;
    return 0 == (window->seen[bit / 64] & (UINT64_C(1) << (bit % 64)));
}

void aeron_py_replay_window_mark(aeron_py_replay_window_t *window, uint64_t counter)
{
    if (counter > window->highest)
    {
        /* the bits of the counters the window slides past are reused: clear them */
        const uint64_t advance = counter - window->highest;
        if (advance >= AERON_PY_REPLAY_WINDOW)
        {
            memset(window->seen, 0, sizeof(window->seen));
        }
        else
        {
            for (uint64_t c = window->highest + 1; c < counter; c++)
            {
                const uint64_t bit = c % AERON_PY_REPLAY_WINDOW;
                window->seen[bit / 64] &= ~(UINT64_C(1) << (bit % 64));
            }
        }
        window->highest = counter;
    }
    const uint64_t bit = counter % AERON_PY_REPLAY_WINDOW;
    window->seen[bit / 64] |= UINT64_C(1) << (bit % 64);
}
