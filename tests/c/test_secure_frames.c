/* The secure transport's wire format (cpp/plugins/secure_transport/secure_frames.h): which
 * frames belong to a session, seal/open round trips for every session frame type and for a
 * datagram batching several DATA frames, that every flipped bit of a sealed datagram fails to
 * open, nonce layout (salt, then the big-endian counter), size limits, and the replay window. */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "protocol/aeron_udp_protocol.h"
#include "secure_transport/secure_frames.h"

#include "check.h"

static const uint8_t KEY[AERON_PY_SECURE_KEY_LENGTH] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 };
static const uint8_t OTHER_KEY[AERON_PY_SECURE_KEY_LENGTH] = { 9, 9, 9 };
static const uint8_t SALT[AERON_PY_SECURE_SALT_LENGTH] = { 0xA0, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7,
    0xA8, 0xA9, 0xAA, 0xAB, 0xAC, 0xAD, 0xAE, 0xAF };

/* A DATA datagram: header (session 77, stream 10) + payload of `payload` bytes 0, 1, 2... */
static size_t data_datagram(uint8_t *out, size_t payload)
{
    aeron_data_header_t header = { 0 };
    header.frame_header.frame_length = (int32_t)(AERON_DATA_HEADER_LENGTH + payload);
    header.frame_header.flags = AERON_DATA_HEADER_UNFRAGMENTED;
    header.frame_header.type = AERON_HDR_TYPE_DATA;
    header.term_offset = 4096;
    header.session_id = 77;
    header.stream_id = 10;
    header.term_id = 5;
    memcpy(out, &header, sizeof(header));
    for (size_t i = 0; i < payload; i++)
    {
        out[AERON_DATA_HEADER_LENGTH + i] = (uint8_t)i;
    }
    return AERON_DATA_HEADER_LENGTH + payload;
}

static void parses_session_frames(void)
{
    uint8_t datagram[256] = { 0 };
    aeron_py_secure_frame_t frame;
    const size_t length = data_datagram(datagram, 5);
    CHECK(aeron_py_secure_frame_parse(datagram, length, &frame), "DATA not parsed");
    CHECK(77 == frame.session_id && 10 == frame.stream_id && AERON_DATA_HEADER_LENGTH == frame.clear_length,
        "DATA: session %d stream %d clear %u", frame.session_id, frame.stream_id, frame.clear_length);
    CHECK(AERON_PY_SECURE_TO_RECEIVER == frame.directions, "DATA flows to the receiver");

    aeron_status_message_header_t sm = { 0 };
    sm.frame_header.type = AERON_HDR_TYPE_SM;
    sm.frame_header.frame_length = sizeof(sm);
    sm.session_id = 78;
    sm.stream_id = 11;
    CHECK(aeron_py_secure_frame_parse((const uint8_t *)&sm, sizeof(sm), &frame), "SM not parsed");
    CHECK(78 == frame.session_id && 11 == frame.stream_id && AERON_PY_SECURE_TO_SENDER == frame.directions,
        "SM: session %d stream %d", frame.session_id, frame.stream_id);
    CHECK(!aeron_py_secure_frame_parse((const uint8_t *)&sm, sizeof(sm) - 1, &frame), "a runt SM was parsed");

    aeron_rttm_header_t rttm = { 0 };
    rttm.frame_header.type = AERON_HDR_TYPE_RTTM;
    CHECK(aeron_py_secure_frame_parse((const uint8_t *)&rttm, sizeof(rttm), &frame) &&
        (AERON_PY_SECURE_TO_RECEIVER | AERON_PY_SECURE_TO_SENDER) == frame.directions, "RTTM flows both ways");

    uint8_t resolution[64] = { 0 };
    const int16_t res_type = AERON_HDR_TYPE_RES;
    memcpy(resolution + 6, &res_type, 2);
    CHECK(!aeron_py_secure_frame_parse(resolution, sizeof(resolution), &frame), "name resolution is no session's");
}

static void seal_open_round_trip(size_t payload)
{
    uint8_t *plain = calloc(1, payload + 64);
    uint8_t *sealed = calloc(1, payload + 64 + AERON_PY_SECURE_OVERHEAD);
    uint8_t *opened = calloc(1, payload + 64 + AERON_PY_SECURE_OVERHEAD);
    const size_t length = data_datagram(plain, payload);
    aeron_py_secure_frame_t frame;
    aeron_py_secure_frame_parse(plain, length, &frame);
    CHECK(0 == aeron_py_secure_seal(&frame, plain, length, KEY, SALT, 42, sealed), "seal %zu", payload);
    const size_t sealed_length = length + AERON_PY_SECURE_OVERHEAD;
    CHECK(0 == memcmp(sealed, plain, AERON_DATA_HEADER_LENGTH), "the header is not in clear");
    CHECK(payload < 8 || 0 != memcmp(sealed + AERON_DATA_HEADER_LENGTH, plain + AERON_DATA_HEADER_LENGTH, payload),
        "the payload is in clear");
    CHECK(0 == memcmp(sealed + sealed_length - 24, SALT, 16), "the nonce does not start with the salt");
    CHECK(42 == aeron_py_secure_counter(&frame, sealed, sealed_length), "the counter is not the nonce's tail");
    CHECK((int64_t)length == aeron_py_secure_open(&frame, sealed, sealed_length, KEY, opened), "open %zu", payload);
    CHECK(0 == memcmp(opened, plain, length), "opened != plain (%zu)", payload);
    CHECK(-1 == aeron_py_secure_open(&frame, sealed, sealed_length, OTHER_KEY, opened), "opened with another key");
    free(plain);
    free(sealed);
    free(opened);
}

static void seals_and_opens(void)
{
    const size_t payloads[] = { 0, 1, 31, 32, 1376, 4096, 65000 };
    for (size_t i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++)
    {
        seal_open_round_trip(payloads[i]);
    }
}

static void every_flipped_bit_fails(void)
{
    uint8_t plain[96];
    uint8_t sealed[96 + AERON_PY_SECURE_OVERHEAD];
    uint8_t opened[96 + AERON_PY_SECURE_OVERHEAD];
    const size_t length = data_datagram(plain, 64);
    aeron_py_secure_frame_t frame;
    aeron_py_secure_frame_parse(plain, length, &frame);
    aeron_py_secure_seal(&frame, plain, length, KEY, SALT, 7, sealed);
    const size_t sealed_length = length + AERON_PY_SECURE_OVERHEAD;
    int opened_count = 0;
    for (size_t byte = 0; byte < sealed_length; byte++)
    {
        for (int bit = 0; bit < 8; bit++)
        {
            sealed[byte] ^= (uint8_t)(1u << bit);
            opened_count += aeron_py_secure_open(&frame, sealed, sealed_length, KEY, opened) >= 0;
            sealed[byte] ^= (uint8_t)(1u << bit);
        }
    }
    CHECK(0 == opened_count, "%d of %zu flipped bits still opened", opened_count, 8 * sealed_length);
    CHECK(aeron_py_secure_open(&frame, sealed, sealed_length, KEY, opened) >= 0, "the untouched datagram must open");
    CHECK(-1 == aeron_py_secure_open(&frame, sealed, sealed_length - 1, KEY, opened), "a truncated datagram opened");
    CHECK(-1 == aeron_py_secure_open(&frame, sealed, AERON_DATA_HEADER_LENGTH + 39, KEY, opened), "a runt opened");
}

static void refuses_oversize(void)
{
    static uint8_t plain[AERON_PY_SECURE_MAX_DATAGRAM];
    static uint8_t sealed[AERON_PY_SECURE_MAX_DATAGRAM + AERON_PY_SECURE_OVERHEAD];
    const size_t fits = AERON_PY_SECURE_MAX_DATAGRAM - AERON_PY_SECURE_OVERHEAD;
    data_datagram(plain, fits - AERON_DATA_HEADER_LENGTH);
    aeron_py_secure_frame_t frame;
    aeron_py_secure_frame_parse(plain, fits, &frame);
    CHECK(0 == aeron_py_secure_seal(&frame, plain, fits, KEY, SALT, 1, sealed), "the largest datagram that fits");
    CHECK(-1 == aeron_py_secure_seal(&frame, plain, fits + 1, KEY, SALT, 1, sealed), "one byte more must be refused");
}

static void replay_window(void)
{
    aeron_py_replay_window_t window;
    memset(&window, 0, sizeof(window));
    CHECK(!aeron_py_replay_window_allows(&window, 0), "counter 0 is never valid");
    CHECK(aeron_py_replay_window_allows(&window, 1), "first");
    aeron_py_replay_window_mark(&window, 1);
    CHECK(!aeron_py_replay_window_allows(&window, 1), "1 again");
    aeron_py_replay_window_mark(&window, 5);
    CHECK(aeron_py_replay_window_allows(&window, 3), "3 was skipped, may come late");
    aeron_py_replay_window_mark(&window, 3);
    CHECK(!aeron_py_replay_window_allows(&window, 3) && !aeron_py_replay_window_allows(&window, 5), "3, 5 seen");
    CHECK(aeron_py_replay_window_allows(&window, 4), "4 not seen");
    aeron_py_replay_window_mark(&window, 5 + AERON_PY_REPLAY_WINDOW - 1);
    CHECK(aeron_py_replay_window_allows(&window, 4 + AERON_PY_REPLAY_WINDOW - 1) &&
        !aeron_py_replay_window_allows(&window, 5), "the window's far edge");
    CHECK(aeron_py_replay_window_allows(&window, 6), "6 is inside the window and unseen");
    aeron_py_replay_window_mark(&window, 6 + 10 * AERON_PY_REPLAY_WINDOW);
    CHECK(!aeron_py_replay_window_allows(&window, 6 + 9 * AERON_PY_REPLAY_WINDOW), "too old after a jump");
    const uint64_t top = 6 + 10 * AERON_PY_REPLAY_WINDOW;
    int allowed = 0;
    for (uint64_t c = top - AERON_PY_REPLAY_WINDOW + 1; c < top; c++)
    {
        allowed += aeron_py_replay_window_allows(&window, c);
    }
    CHECK(AERON_PY_REPLAY_WINDOW - 1 == allowed, "a jump must clear the window: %d allowed", allowed);
}

int main(void)
{
    check_program = "test_secure_frames";
    if (sodium_init() < 0)
    {
        return 1;
    }
    RUN(parses_session_frames);
    RUN(seals_and_opens);
    RUN(every_flipped_bit_fails);
    RUN(refuses_oversize);
    RUN(replay_window);
    return check_summary();
}
