// The Archive's recording-position counters, read from this client's counters
// (aeron_archive_recording_pos_*): what recording a counter tracks, its source, whether it
// is still that recording's. The GIL stays held: the client cannot close under the read.
#include "archive_state.hpp"

#include <algorithm>
#include <cerrno>
#include <optional>

namespace aeron_py::archive::recording_pos {

namespace {
aeron_counters_reader_t *counters(ArchiveState &state) {
    state.client->check_open();
    // The counters are the client's, but these are the archive connection's calls: closed with it.
    if (!state.open.load(std::memory_order_acquire)) throw AeronCallError("the archive connection is closed", EPIPE);
    return aeron_counters_reader(state.client->aeron);
}
}  // namespace

std::optional<int64_t> recording_id(ArchiveState &state, int32_t counter_id) {
    int64_t id = aeron_archive_recording_pos_get_recording_id(counters(state), counter_id);
    if (id == AERON_NULL_COUNTER_ID) return std::nullopt;
    return id;
}

std::optional<std::string> source_identity(ArchiveState &state, int32_t counter_id) {
    aeron_counters_reader_t *reader = counters(state);
    if (aeron_archive_recording_pos_get_recording_id(reader, counter_id) == AERON_NULL_COUNTER_ID) {
        return std::nullopt;  // not (or no longer) a recording counter
    }
    char identity[AERON_COUNTER_MAX_KEY_LENGTH + 1] = {};  // bounded by the counter's key
    size_t length = sizeof(identity);  // it writes at most length - 1 bytes and a NUL
    if (aeron_archive_recording_pos_get_source_identity(reader, counter_id, identity, &length) < 0) {
        throw_aeron_error("aeron_archive_recording_pos_get_source_identity");
    }
    return std::string(identity, std::min(length, sizeof(identity) - 1));
}

bool is_active(ArchiveState &state, int32_t counter_id, int64_t recording) {
    bool active = false;
    if (aeron_archive_recording_pos_is_active(&active, counters(state), counter_id, recording) < 0) {
        return false;  // not a counter this client can read: not active
    }
    return active;
}

}  // namespace aeron_py::archive::recording_pos
