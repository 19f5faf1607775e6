// _aeron.archive.Archive's replication calls (aeron_archive_replicate, stop, try-stop): this
// connection's Archive copies a recording from another Archive, asked for by that Archive's
// control channel and stream. And the error responses the Archive sends for no call in
// progress (aeron_archive_poll_for_error_response). Each is one C call through ArchiveState::run.
#include "archive_state.hpp"

#include <cstring>

namespace aeron_py::archive::replication {

int64_t replicate(ArchiveState &state, int64_t src_recording_id, int32_t src_control_stream_id,
                  const std::string &src_control_channel, const Params &params) {
    for (const auto *text : {&src_control_channel, &params.live_destination, &params.replication_channel,
                             &params.src_response_channel})
        check_stream_text(*text, "a channel or destination");
    aeron_archive_replication_params_t c_params;
    if (aeron_archive_replication_params_init(&c_params) < 0) throw_aeron_error("aeron_archive_replication_params_init");
    c_params.dst_recording_id = params.dst_recording_id;
    c_params.stop_position = params.stop_position;
    c_params.live_destination = params.live_destination.c_str();  // "" (the default): no merge
    c_params.replication_channel = params.replication_channel.c_str();  // "": the Archive's own
    c_params.src_response_channel = params.src_response_channel.c_str();
    c_params.channel_tag_id = params.channel_tag_id;
    c_params.subscription_tag_id = params.subscription_tag_id;
    c_params.file_io_max_length = params.file_io_max_length;
    c_params.replication_session_id = params.replication_session_id;
    aeron_archive_encoded_credentials_t credentials{};
    if (params.credentials.has_value()) {
        if (params.credentials->size() > INT32_MAX) throw py::value_error("credentials longer than 2 GiB");
        credentials.data = params.credentials->data();
        credentials.length = static_cast<uint32_t>(params.credentials->size());
        c_params.encoded_credentials = &credentials;
    }
    int64_t replication_id = 0;
    state.run("aeron_archive_replicate", [&](aeron_archive_t *a) {
        return aeron_archive_replicate(&replication_id, a, src_recording_id, src_control_channel.c_str(),
                                       src_control_stream_id, &c_params);
    });
    return replication_id;
}

void stop(ArchiveState &state, int64_t replication_id) {
    state.run("aeron_archive_stop_replication",
              [&](aeron_archive_t *a) { return aeron_archive_stop_replication(a, replication_id); });
}

bool try_stop(ArchiveState &state, int64_t replication_id) {
    bool stopped = false;
    state.run("aeron_archive_try_stop_replication", [&](aeron_archive_t *a) {
        return aeron_archive_try_stop_replication(&stopped, a, replication_id);
    });
    return stopped;
}

std::optional<std::string> poll_error_response(ArchiveState &state) {
    char buffer[4096];  // the C client copies the message with snprintf: longer ones are cut here
    buffer[0] = '\0';
    state.run("aeron_archive_poll_for_error_response", [&](aeron_archive_t *a) {
        return aeron_archive_poll_for_error_response(a, buffer, sizeof buffer);
    });
    if (buffer[0] == '\0') return std::nullopt;
    return std::string(buffer, strnlen(buffer, sizeof buffer));
}

}  // namespace aeron_py::archive::replication
