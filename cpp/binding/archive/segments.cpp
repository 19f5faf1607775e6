// _aeron.archive.Archive's segment calls (aeron_archive.h): detach, delete, purge, attach and
// migrate the segment files of stopped recordings, rename a recording's channel, and where
// a position's segment file begins. Each is one C call through ArchiveState::run.
#include "archive_state.hpp"

namespace aeron_py::archive::segments {

void detach(ArchiveState &state, int64_t recording_id, int64_t new_start_position) {
    state.run("aeron_archive_detach_segments", [&](aeron_archive_t *a) {
        return aeron_archive_detach_segments(a, recording_id, new_start_position);
    });
}

int64_t delete_detached(ArchiveState &state, int64_t recording_id) {
    int64_t count = 0;
    state.run("aeron_archive_delete_detached_segments", [&](aeron_archive_t *a) {
        return aeron_archive_delete_detached_segments(&count, a, recording_id);
    });
    return count;
}

int64_t purge(ArchiveState &state, int64_t recording_id, int64_t new_start_position) {
    int64_t count = 0;
    state.run("aeron_archive_purge_segments", [&](aeron_archive_t *a) {
        return aeron_archive_purge_segments(&count, a, recording_id, new_start_position);
    });
    return count;
}

int64_t attach(ArchiveState &state, int64_t recording_id) {
    int64_t count = 0;
    state.run("aeron_archive_attach_segments",
              [&](aeron_archive_t *a) { return aeron_archive_attach_segments(&count, a, recording_id); });
    return count;
}

int64_t migrate(ArchiveState &state, int64_t src_recording_id, int64_t dst_recording_id) {
    int64_t count = 0;
    state.run("aeron_archive_migrate_segments", [&](aeron_archive_t *a) {
        return aeron_archive_migrate_segments(&count, a, src_recording_id, dst_recording_id);
    });
    return count;
}

void update_channel(ArchiveState &state, int64_t recording_id, const std::string &channel) {
    check_stream_text(channel, "channel");
    state.run("aeron_archive_update_channel", [&](aeron_archive_t *a) {
        return aeron_archive_update_channel(a, recording_id, channel.c_str());
    });
}

namespace {
bool power_of_two(int64_t value) { return value > 0 && (value & (value - 1)) == 0; }
}  // namespace

int64_t base_position(int64_t start_position, int64_t position, int32_t term_length, int32_t segment_length) {
    // The C function masks with length - 1: a length that is not a power of two gives a wrong
    // answer, and positions far apart overflow int64 (undefined): refuse both here.
    if (!power_of_two(term_length)) {
        throw py::value_error("term_length must be a power of two, got " + std::to_string(term_length));
    }
    if (!power_of_two(segment_length) || segment_length < term_length) {
        throw py::value_error("segment_length must be a power of two and at least term_length (" +
                              std::to_string(term_length) + "), got " + std::to_string(segment_length));
    }
    if (start_position < 0 || position < start_position) {
        throw py::value_error("need 0 <= start_position <= position, got start_position " +
                              std::to_string(start_position) + " and position " + std::to_string(position));
    }
    return aeron_archive_segment_file_base_position(start_position, position, term_length, segment_length);
}

void init(py::module_ &m) {
    m.def("segment_file_base_position", &segments::base_position, py::arg("start_position"), py::arg("position"),
          py::arg("term_length"), py::arg("segment_length"),
          "aeron_archive_segment_file_base_position; ValueError for lengths it cannot take.");
}

}  // namespace aeron_py::archive::segments
