// _aeron.archive: the Aeron Archive C client (aeron_archive.h) over a _aeron.Client.
// Each method is one C call made with the GIL released and the archive's mutex held (see
// archive_state.hpp); the Pythonic layer (aeron_py/archive/) adds names, defaults and types.
#include "archive_state.hpp"

#include "../guarded_class.hpp"

#include <cerrno>
#include <climits>
#include <optional>

namespace aeron_py {
namespace archive {

namespace {

py::tuple descriptor_tuple(const Descriptor &d) {
    return py::make_tuple(d.control_session_id, d.correlation_id, d.recording_id, d.start_timestamp,
                          d.stop_timestamp, d.start_position, d.stop_position, d.initial_term_id,
                          d.segment_file_length, d.term_buffer_length, d.mtu_length, d.session_id, d.stream_id,
                          d.stripped_channel, d.original_channel, d.source_identity);
}

void collect_descriptor(aeron_archive_recording_descriptor_t *d, void *clientd) {
    auto *out = static_cast<std::vector<Descriptor> *>(clientd);
    try {
        out->push_back(Descriptor{
            d->control_session_id, d->correlation_id, d->recording_id, d->start_timestamp, d->stop_timestamp,
            d->start_position, d->stop_position, d->initial_term_id, d->segment_file_length, d->term_buffer_length,
            d->mtu_length, d->session_id, d->stream_id, std::string(d->stripped_channel, d->stripped_channel_length),
            std::string(d->original_channel, d->original_channel_length),
            std::string(d->source_identity, d->source_identity_length)});
    } catch (...) {  // out of memory: the descriptor is left out, nothing crosses the C frames
    }
}

void collect_subscription(aeron_archive_recording_subscription_descriptor_t *d, void *clientd) {
    auto *out = static_cast<std::vector<SubscriptionDescriptor> *>(clientd);
    try {
        out->push_back(SubscriptionDescriptor{d->control_session_id, d->correlation_id, d->subscription_id,
                                              d->stream_id,
                                              std::string(d->stripped_channel, d->stripped_channel_length)});
    } catch (...) {
    }
}

class Archive {
public:
    explicit Archive(std::shared_ptr<ArchiveState> state) : state_(std::move(state)) {}

    // One C call (ArchiveState::run).
    template <typename Call>
    void run(const char *name, Call &&call) {
        state_->run(name, std::forward<Call>(call));
    }

    ArchiveState &state() { return *state_; }
    friend PyObject *section_lock(const Archive &archive) { return archive.state_->client->lock.get(); }

    void close() {
        ReleasedGil released;  // waits for a call in progress on another thread
        state_->close();
    }

    bool is_closed() const { return !state_->open.load(std::memory_order_acquire) || state_->client->closed; }

    int64_t archive_id() {
        int64_t id = 0;
        run("aeron_archive_get_archive_id", [&](aeron_archive_t *a) { id = aeron_archive_get_archive_id(a); return 0; });
        return id;
    }

    int64_t control_session_id() {
        int64_t id = 0;
        run("aeron_archive_control_session_id",
            [&](aeron_archive_t *a) { id = aeron_archive_control_session_id(a); return 0; });
        return id;
    }

    int64_t start_recording(const std::string &channel, int32_t stream_id, bool remote, bool auto_stop) {
        check_stream_text(channel, "channel");
        int64_t subscription_id = 0;
        const auto location = remote ? AERON_ARCHIVE_SOURCE_LOCATION_REMOTE : AERON_ARCHIVE_SOURCE_LOCATION_LOCAL;
        run("aeron_archive_start_recording", [&](aeron_archive_t *a) {
            return aeron_archive_start_recording(&subscription_id, a, channel.c_str(), stream_id, location, auto_stop);
        });
        return subscription_id;
    }

    int64_t extend_recording(int64_t recording_id, const std::string &channel, int32_t stream_id, bool remote,
                             bool auto_stop) {
        check_stream_text(channel, "channel");
        int64_t subscription_id = 0;
        const auto location = remote ? AERON_ARCHIVE_SOURCE_LOCATION_REMOTE : AERON_ARCHIVE_SOURCE_LOCATION_LOCAL;
        run("aeron_archive_extend_recording", [&](aeron_archive_t *a) {
            return aeron_archive_extend_recording(&subscription_id, a, recording_id, channel.c_str(), stream_id,
                                                  location, auto_stop);
        });
        return subscription_id;
    }

    // aeron_archive_add_recorded_(exclusive_)publication: a publication of this client, recorded.
    py::object add_recorded_publication(const std::string &channel, int32_t stream_id, bool exclusive) {
        check_stream_text(channel, "channel");
        aeron_publication_t *publication = nullptr;
        aeron_exclusive_publication_t *exclusive_publication = nullptr;
        run(exclusive ? "aeron_archive_add_recorded_exclusive_publication" : "aeron_archive_add_recorded_publication",
            [&](aeron_archive_t *a) {
                return exclusive
                    ? aeron_archive_add_recorded_exclusive_publication(&exclusive_publication, a, channel.c_str(),
                                                                       stream_id)
                    : aeron_archive_add_recorded_publication(&publication, a, channel.c_str(), stream_id);
            });
        return exclusive ? make_exclusive_publication(state_->client, exclusive_publication)
                         : make_publication(state_->client, publication);
    }

    // The archive's recording position counter of a recording (or of a recorded session), found in
    // the client's counters: its id, or -1 (AERON_NULL_COUNTER_ID) when there is none.
    int32_t recording_counter_id(std::optional<int64_t> recording_id, std::optional<int32_t> session_id) {
        if (recording_id.has_value() == session_id.has_value())
            throw py::value_error("give recording_id or session_id");
        state_->client->check_open();
        int64_t archive = 0;
        run("aeron_archive_get_archive_id", [&](aeron_archive_t *a) { archive = aeron_archive_get_archive_id(a); return 0; });
        aeron_counters_reader_t *counters = aeron_counters_reader(state_->client->aeron);
        return recording_id ? aeron_archive_recording_pos_find_counter_id_by_recording_id(counters, *recording_id, archive)
                            : aeron_archive_recording_pos_find_counter_id_by_session_id(counters, *session_id, archive);
    }

    void stop_recording_subscription(int64_t subscription_id) {
        run("aeron_archive_stop_recording_subscription",
            [&](aeron_archive_t *a) { return aeron_archive_stop_recording_subscription(a, subscription_id); });
    }

    bool try_stop_recording_subscription(int64_t subscription_id) {
        bool stopped = false;
        run("aeron_archive_try_stop_recording_subscription", [&](aeron_archive_t *a) {
            return aeron_archive_try_stop_recording_subscription(&stopped, a, subscription_id);
        });
        return stopped;
    }

    void stop_recording_channel_and_stream(const std::string &channel, int32_t stream_id) {
        check_stream_text(channel, "channel");
        run("aeron_archive_stop_recording_channel_and_stream", [&](aeron_archive_t *a) {
            return aeron_archive_stop_recording_channel_and_stream(a, channel.c_str(), stream_id);
        });
    }

    bool try_stop_recording_channel_and_stream(const std::string &channel, int32_t stream_id) {
        check_stream_text(channel, "channel");
        bool stopped = false;
        run("aeron_archive_try_stop_recording_channel_and_stream", [&](aeron_archive_t *a) {
            return aeron_archive_try_stop_recording_channel_and_stream(&stopped, a, channel.c_str(), stream_id);
        });
        return stopped;
    }

    bool try_stop_recording_by_identity(int64_t recording_id) {
        bool stopped = false;
        run("aeron_archive_try_stop_recording_by_identity", [&](aeron_archive_t *a) {
            return aeron_archive_try_stop_recording_by_identity(&stopped, a, recording_id);
        });
        return stopped;
    }

    // aeron_archive_get_{recording,start,stop,max_recorded}_position by `which`.
    int64_t position(const std::string &which, int64_t recording_id) {
        using Getter = int (*)(int64_t *, aeron_archive_t *, int64_t);
        Getter getter = nullptr;
        if (which == "recording") getter = aeron_archive_get_recording_position;
        else if (which == "start") getter = aeron_archive_get_start_position;
        else if (which == "stop") getter = aeron_archive_get_stop_position;
        else if (which == "max_recorded") getter = aeron_archive_get_max_recorded_position;
        else throw py::value_error("position kind must be 'recording', 'start', 'stop' or 'max_recorded'");
        int64_t value = 0;
        run("aeron_archive_get_position", [&](aeron_archive_t *a) { return getter(&value, a, recording_id); });
        return value;
    }

    int64_t find_last_matching_recording(int64_t min_recording_id, const std::string &channel_fragment,
                                         int32_t stream_id, int32_t session_id) {
        check_stream_text(channel_fragment, "channel_fragment");
        int64_t recording_id = -1;
        run("aeron_archive_find_last_matching_recording", [&](aeron_archive_t *a) {
            return aeron_archive_find_last_matching_recording(&recording_id, a, min_recording_id,
                                                              channel_fragment.c_str(), stream_id, session_id);
        });
        return recording_id;
    }

    py::list list_recordings(int64_t from_recording_id, int32_t count, std::optional<std::string> channel_fragment,
                             int32_t stream_id) {
        if (count < 0) throw py::value_error("count must be >= 0");
        if (channel_fragment) check_stream_text(*channel_fragment, "channel_fragment");
        std::vector<Descriptor> found;
        int32_t listed = 0;
        run(channel_fragment ? "aeron_archive_list_recordings_for_uri" : "aeron_archive_list_recordings",
            [&](aeron_archive_t *a) {
                return channel_fragment
                    ? aeron_archive_list_recordings_for_uri(&listed, a, from_recording_id, count,
                                                            channel_fragment->c_str(), stream_id,
                                                            collect_descriptor, &found)
                    : aeron_archive_list_recordings(&listed, a, from_recording_id, count, collect_descriptor, &found);
            });
        py::list out;
        for (const auto &d : found) out.append(descriptor_tuple(d));
        return out;
    }

    py::object list_recording(int64_t recording_id) {
        std::vector<Descriptor> found;
        int32_t listed = 0;
        run("aeron_archive_list_recording", [&](aeron_archive_t *a) {
            return aeron_archive_list_recording(&listed, a, recording_id, collect_descriptor, &found);
        });
        if (found.empty()) return py::none();
        return descriptor_tuple(found.front());
    }

    py::list list_recording_subscriptions(int32_t pseudo_index, int32_t count, const std::string &channel_fragment,
                                          std::optional<int32_t> stream_id) {
        if (count < 0) throw py::value_error("count must be >= 0");
        check_stream_text(channel_fragment, "channel_fragment");
        std::vector<SubscriptionDescriptor> found;
        int32_t listed = 0;
        run("aeron_archive_list_recording_subscriptions", [&](aeron_archive_t *a) {
            return aeron_archive_list_recording_subscriptions(&listed, a, pseudo_index, count,
                                                              channel_fragment.c_str(), stream_id.value_or(0),
                                                              stream_id.has_value(), collect_subscription, &found);
        });
        py::list out;
        for (const auto &d : found)
            out.append(py::make_tuple(d.control_session_id, d.correlation_id, d.subscription_id, d.stream_id,
                                      d.stripped_channel));
        return out;
    }

    static aeron_archive_replay_params_t replay_params(int64_t position, int64_t length, int32_t bounding_counter_id,
                                                      int32_t file_io_max_length) {
        aeron_archive_replay_params_t params;
        aeron_archive_replay_params_init(&params);
        params.position = position;
        params.length = length;
        params.bounding_limit_counter_id = bounding_counter_id;
        params.file_io_max_length = file_io_max_length;
        return params;
    }

    int64_t start_replay(int64_t recording_id, const std::string &channel, int32_t stream_id, int64_t position,
                         int64_t length, int32_t bounding_counter_id, int32_t file_io_max_length) {
        check_stream_text(channel, "channel");
        auto params = replay_params(position, length, bounding_counter_id, file_io_max_length);
        int64_t replay_session_id = 0;
        run("aeron_archive_start_replay", [&](aeron_archive_t *a) {
            return aeron_archive_start_replay(&replay_session_id, a, recording_id, channel.c_str(), stream_id, &params);
        });
        return replay_session_id;
    }

    py::object replay(int64_t recording_id, const std::string &channel, int32_t stream_id, int64_t position,
                      int64_t length, int32_t bounding_counter_id, int32_t file_io_max_length) {
        check_stream_text(channel, "channel");
        auto params = replay_params(position, length, bounding_counter_id, file_io_max_length);
        aeron_subscription_t *subscription = nullptr;
        run("aeron_archive_replay", [&](aeron_archive_t *a) {
            return aeron_archive_replay(&subscription, a, recording_id, channel.c_str(), stream_id, &params);
        });
        return make_subscription(state_->client, subscription);
    }

    py::object replay_merge(py::handle subscription, const std::string &replay_channel,
                            const std::string &replay_destination, const std::string &live_destination,
                            int64_t recording_id, int64_t start_position, int64_t progress_timeout_ms) {
        for (const auto *text : {&replay_channel, &replay_destination, &live_destination})
            check_stream_text(*text, "a replay merge channel");
        state_->client->check_open();
        return make_replay_merge(state_, subscription,
                                 ReplayMergeOptions{replay_channel, replay_destination, live_destination, recording_id,
                                                    start_position, progress_timeout_ms});
    }

    void stop_replay(int64_t replay_session_id) {
        run("aeron_archive_stop_replay",
            [&](aeron_archive_t *a) { return aeron_archive_stop_replay(a, replay_session_id); });
    }

    void stop_all_replays(int64_t recording_id) {
        run("aeron_archive_stop_all_replays",
            [&](aeron_archive_t *a) { return aeron_archive_stop_all_replays(a, recording_id); });
    }

    int64_t truncate_recording(int64_t recording_id, int64_t position) {
        int64_t deleted = 0;
        run("aeron_archive_truncate_recording", [&](aeron_archive_t *a) {
            return aeron_archive_truncate_recording(&deleted, a, recording_id, position);
        });
        return deleted;
    }

    int64_t purge_recording(int64_t recording_id) {
        int64_t deleted = 0;
        run("aeron_archive_purge_recording",
            [&](aeron_archive_t *a) { return aeron_archive_purge_recording(&deleted, a, recording_id); });
        return deleted;
    }

    int32_t poll_for_recording_signals() {
        int32_t count = 0;
        run("aeron_archive_poll_for_recording_signals",
            [&](aeron_archive_t *a) { return aeron_archive_poll_for_recording_signals(&count, a); });
        return count;
    }

    // The recording signals and errors the C client reported since the last take, and how
    // many signals were lost to the queue's bound.
    py::tuple take_events() {
        std::vector<Signal> signals;
        std::vector<std::pair<int, std::string>> errors;
        size_t lost = 0;
        {
            ReleasedGil released;
            std::lock_guard<std::mutex> lock(state_->mutex);
            signals.swap(state_->signals);
            errors.swap(state_->errors);
            lost = state_->lost_signals;
            state_->lost_signals = 0;
        }
        py::list signal_list, error_list;
        for (const auto &s : signals)
            signal_list.append(py::make_tuple(s.control_session_id, s.recording_id, s.subscription_id, s.position, s.code));
        for (const auto &e : errors) error_list.append(py::make_tuple(e.first, e.second));
        return py::make_tuple(signal_list, error_list, lost);
    }

private:
    std::shared_ptr<ArchiveState> state_;
};

// `credentials`: what connect sends when set (null: none), and who answers a challenge.
Archive connect(py::handle client, const ConnectOptions &options, Credentials *credentials) {
    auto state = std::make_shared<ArchiveState>();
    state->client = client_state_of(client);
    Section section(state->client->lock.get());
    // closed with the state (after the archive, which borrows from it)
    aeron_archive_context_t *ctx = state->context = new_archive_context(*state->client, options, &state->idle_state);
    if (aeron_archive_context_set_recording_signal_consumer(ctx, on_recording_signal, state.get()) < 0 ||
        aeron_archive_context_set_error_handler(ctx, on_archive_error, state.get()) < 0)
        throw_aeron_error("aeron_archive_context_set");
    if (credentials != nullptr) set_credentials(ctx, *credentials);
    aeron_archive_t *archive = nullptr;
    int rc = 0;
    int64_t elapsed_ns = 0;
    {
        ReleasedGil released;
        std::lock_guard<std::mutex> lock(state->mutex);
        const int64_t started_ns = aeron_nano_clock();
        rc = aeron_archive_connect(&archive, ctx);  // copies ctx; waits up to the message timeout
        elapsed_ns = aeron_nano_clock() - started_ns;
        state->archive = archive;
        state->open.store(archive != nullptr, std::memory_order_release);
    }
    if (credentials != nullptr && credentials->raised != nullptr) {  // on_challenge raised: that, not the rejection
        if (archive != nullptr) state->close();
        auto raised = std::move(credentials->raised);
        throw std::move(*raised);
    }
    if (rc < 0 || archive == nullptr) {
        // The C client's "connect timeout" has the catch-all code -1 (aeron_archive_async_connect_poll
        // checks its deadline, message_timeout_ns after the connect began, before each step): a -1
        // once that time has passed is the timeout, raised with cause_code ETIMEDOUT.
        const int code = aeron_errcode();
        if (code == -1 && elapsed_ns > 0 && static_cast<uint64_t>(elapsed_ns) > options.message_timeout_ns) {
            const char *message = aeron_errmsg();
            throw AeronCallError(
                std::string("aeron_archive_connect: ") + (message != nullptr && *message ? message : "connect timeout"),
                code, ETIMEDOUT);
        }
        throw_aeron_error("aeron_archive_connect");
    }
    state->client->add_dependent(state);
    return Archive(state);
}

}  // namespace

void init_archive(py::module_ &parent) {
    py::module_ m = parent.def_submodule(
        "archive", "The Aeron Archive C client (aeron_archive.h); see aeron_py.archive for the Pythonic layer.");
    init_replay_merge(m);
    guarded_class<Archive>(m, "Archive", "aeron_archive_t: one client's connection to an Aeron Archive.")
        .def("close", &Archive::close, "aeron_archive_close (idempotent; also done when the client closes).")
        .def_property_readonly("is_closed", &Archive::is_closed)
        .def("archive_id", &Archive::archive_id, "aeron_archive_get_archive_id")
        .def("control_session_id", &Archive::control_session_id, "aeron_archive_control_session_id")
        .def("start_recording", &Archive::start_recording, py::arg("channel"), py::arg("stream_id"),
             py::arg("remote"), py::arg("auto_stop"), "aeron_archive_start_recording: the recording subscription id.")
        .def("extend_recording", &Archive::extend_recording, py::arg("recording_id"), py::arg("channel"),
             py::arg("stream_id"), py::arg("remote"), py::arg("auto_stop"),
             "aeron_archive_extend_recording: the recording subscription id.")
        .def("add_recorded_publication", &Archive::add_recorded_publication, py::arg("channel"), py::arg("stream_id"),
             py::arg("exclusive"), "aeron_archive_add_recorded_(exclusive_)publication")
        .def("recording_counter_id", &Archive::recording_counter_id, py::arg("recording_id") = py::none(),
             py::arg("session_id") = py::none(),
             "aeron_archive_recording_pos_find_counter_id_by_{recording,session}_id in the client's counters; -1: none.")
        .def("recording_pos_recording_id", [](Archive &a, int32_t counter_id) {
            return recording_pos::recording_id(a.state(), counter_id);
        }, py::arg("counter_id"), "aeron_archive_recording_pos_get_recording_id; None: not a recording counter.")
        .def("recording_pos_source_identity", [](Archive &a, int32_t counter_id) {
            return recording_pos::source_identity(a.state(), counter_id);
        }, py::arg("counter_id"), "aeron_archive_recording_pos_get_source_identity; None: not a recording counter.")
        .def("recording_pos_is_active", [](Archive &a, int32_t counter_id, int64_t recording_id) {
            return recording_pos::is_active(a.state(), counter_id, recording_id);
        }, py::arg("counter_id"), py::arg("recording_id"), "aeron_archive_recording_pos_is_active")
        .def("stop_recording_subscription", &Archive::stop_recording_subscription, py::arg("subscription_id"))
        .def("try_stop_recording_subscription", &Archive::try_stop_recording_subscription, py::arg("subscription_id"))
        .def("stop_recording_channel_and_stream", &Archive::stop_recording_channel_and_stream, py::arg("channel"),
             py::arg("stream_id"))
        .def("try_stop_recording_channel_and_stream", &Archive::try_stop_recording_channel_and_stream,
             py::arg("channel"), py::arg("stream_id"))
        .def("try_stop_recording_by_identity", &Archive::try_stop_recording_by_identity, py::arg("recording_id"))
        .def("position", &Archive::position, py::arg("which"), py::arg("recording_id"),
             "aeron_archive_get_{recording,start,stop,max_recorded}_position")
        .def("find_last_matching_recording", &Archive::find_last_matching_recording, py::arg("min_recording_id"),
             py::arg("channel_fragment"), py::arg("stream_id"), py::arg("session_id"))
        .def("list_recordings", &Archive::list_recordings, py::arg("from_recording_id"), py::arg("count"),
             py::arg("channel_fragment"), py::arg("stream_id"),
             "aeron_archive_list_recordings(_for_uri): descriptor tuples.")
        .def("list_recording", &Archive::list_recording, py::arg("recording_id"))
        .def("list_recording_subscriptions", &Archive::list_recording_subscriptions, py::arg("pseudo_index"),
             py::arg("count"), py::arg("channel_fragment"), py::arg("stream_id"))
        .def("start_replay", &Archive::start_replay, py::arg("recording_id"), py::arg("channel"), py::arg("stream_id"),
             py::arg("position"), py::arg("length"), py::arg("bounding_counter_id"), py::arg("file_io_max_length"))
        .def("replay", &Archive::replay, py::arg("recording_id"), py::arg("channel"), py::arg("stream_id"),
             py::arg("position"), py::arg("length"), py::arg("bounding_counter_id"), py::arg("file_io_max_length"))
        .def("replay_merge", &Archive::replay_merge, py::arg("subscription"), py::arg("replay_channel"),
             py::arg("replay_destination"), py::arg("live_destination"), py::arg("recording_id"),
             py::arg("start_position"), py::arg("progress_timeout_ms"),
             "aeron_archive_replay_merge_init over a manual-control MDS subscription of the same client.")
        .def("stop_replay", &Archive::stop_replay, py::arg("replay_session_id"))
        .def("stop_all_replays", &Archive::stop_all_replays, py::arg("recording_id"))
        .def("truncate_recording", &Archive::truncate_recording, py::arg("recording_id"), py::arg("position"))
        .def("purge_recording", &Archive::purge_recording, py::arg("recording_id"))
        .def("detach_segments", [](Archive &a, int64_t recording_id, int64_t new_start_position) {
            segments::detach(a.state(), recording_id, new_start_position);
        }, py::arg("recording_id"), py::arg("new_start_position"))
        .def("delete_detached_segments", [](Archive &a, int64_t recording_id) {
            return segments::delete_detached(a.state(), recording_id);
        }, py::arg("recording_id"))
        .def("purge_segments", [](Archive &a, int64_t recording_id, int64_t new_start_position) {
            return segments::purge(a.state(), recording_id, new_start_position);
        }, py::arg("recording_id"), py::arg("new_start_position"))
        .def("attach_segments", [](Archive &a, int64_t recording_id) {
            return segments::attach(a.state(), recording_id);
        }, py::arg("recording_id"))
        .def("migrate_segments", [](Archive &a, int64_t src_recording_id, int64_t dst_recording_id) {
            return segments::migrate(a.state(), src_recording_id, dst_recording_id);
        }, py::arg("src_recording_id"), py::arg("dst_recording_id"))
        .def("update_channel", [](Archive &a, int64_t recording_id, const std::string &channel) {
            segments::update_channel(a.state(), recording_id, channel);
        }, py::arg("recording_id"), py::arg("channel"))
        .def("replicate", [](Archive &a, int64_t src_recording_id, int32_t src_control_stream_id,
                             const std::string &src_control_channel, int64_t dst_recording_id, int64_t stop_position,
                             const std::string &live_destination, const std::string &replication_channel,
                             const std::string &src_response_channel, int64_t channel_tag_id,
                             int64_t subscription_tag_id, int32_t file_io_max_length, int32_t replication_session_id,
                             std::optional<py::bytes> credentials) {
            replication::Params params{dst_recording_id, stop_position, live_destination, replication_channel,
                                       src_response_channel, channel_tag_id, subscription_tag_id, file_io_max_length,
                                       replication_session_id, std::nullopt};
            if (credentials.has_value()) params.credentials = credentials->cast<std::string>();
            return replication::replicate(a.state(), src_recording_id, src_control_stream_id, src_control_channel,
                                          params);
        }, py::arg("src_recording_id"), py::arg("src_control_stream_id"), py::arg("src_control_channel"),
             py::arg("dst_recording_id"), py::arg("stop_position"), py::arg("live_destination"),
             py::arg("replication_channel"), py::arg("src_response_channel"), py::arg("channel_tag_id"),
             py::arg("subscription_tag_id"), py::arg("file_io_max_length"), py::arg("replication_session_id"),
             py::arg("credentials"),
             "aeron_archive_replicate (aeron_archive_replication_params_t from the arguments; -1: Aeron's null "
             "value, \"\": the default): the replication id.")
        .def("stop_replication", [](Archive &a, int64_t replication_id) {
            replication::stop(a.state(), replication_id);
        }, py::arg("replication_id"))
        .def("try_stop_replication", [](Archive &a, int64_t replication_id) {
            return replication::try_stop(a.state(), replication_id);
        }, py::arg("replication_id"))
        .def("poll_for_error_response", [](Archive &a) { return replication::poll_error_response(a.state()); },
             "aeron_archive_poll_for_error_response: the Archive's error message, or None.")
        .def("poll_for_recording_signals", &Archive::poll_for_recording_signals)
        .def("take_events", &Archive::take_events,
             "(signals, errors, lost_signals) reported by the C client since the last take.");
    m.def(
        "connect",
        [](py::handle client, const std::string &control_request_channel, int32_t control_request_stream_id,
           const std::string &control_response_channel, int32_t control_response_stream_id,
           const std::string &recording_events_channel, int32_t recording_events_stream_id,
           uint64_t message_timeout_ns, const std::string &client_name, uint32_t control_term_length,
           uint32_t control_mtu_length, int control_sparse, uint32_t message_retry_attempts,
           const std::string &idle_strategy, const std::string &idle_args, std::optional<py::bytes> credentials,
           py::object on_challenge) {
            ConnectOptions options{control_request_channel, control_request_stream_id, control_response_channel,
                                   control_response_stream_id, recording_events_channel, recording_events_stream_id,
                                   message_timeout_ns, client_name};
            options.control_term_length = control_term_length;
            options.control_mtu_length = control_mtu_length;
            options.control_sparse = control_sparse;
            options.message_retry_attempts = message_retry_attempts;
            options.idle_strategy = idle_strategy;
            options.idle_args = idle_args;
            if (!credentials.has_value()) {
                if (!on_challenge.is_none()) throw py::value_error("on_challenge needs credentials");
                return connect(client, options, nullptr);
            }
            if (!on_challenge.is_none() && !PyCallable_Check(on_challenge.ptr()))
                throw py::type_error("on_challenge must be callable: (challenge: bytes) -> bytes");
            Credentials given;
            given.encoded = credentials->cast<std::string>();
            given.on_challenge = std::move(on_challenge);
            return connect(client, options, &given);
        },
        py::arg("client"), py::arg("control_request_channel"), py::arg("control_request_stream_id"),
        py::arg("control_response_channel"), py::arg("control_response_stream_id"),
        py::arg("recording_events_channel"), py::arg("recording_events_stream_id"), py::arg("message_timeout_ns"),
        py::arg("client_name"), py::arg("control_term_length") = 0, py::arg("control_mtu_length") = 0,
        py::arg("control_sparse") = -1, py::arg("message_retry_attempts") = 0, py::arg("idle_strategy") = "",
        py::arg("idle_args") = "", py::arg("credentials") = py::none(), py::arg("on_challenge") = py::none(),
        "aeron_archive_connect over the client's aeron_t; waits up to the message timeout (GIL released). "
        "The control stream's term length, MTU, sparseness and the retry attempts: 0 (sparse: -1) keeps "
        "Aeron's default. idle_strategy (aeron_idle_strategy_load's names; \"\": Aeron's backoff) is what the "
        "blocking calls wait with; credentials are sent with the connect, on_challenge(bytes) -> bytes answers "
        "the Archive's challenge (called on this thread, during the connect).");
    init_persistent_subscription(m);
    segments::init(m);
    m.attr("NULL_POSITION") = py::int_(static_cast<int64_t>(-1));
    m.attr("NULL_LENGTH") = py::int_(static_cast<int64_t>(-1));
    m.attr("REPLAY_ALL_AND_FOLLOW") = py::int_(static_cast<int64_t>(INT64_MAX));
    m.attr("NULL_COUNTER_ID") = py::int_(static_cast<int32_t>(-1));
}

}  // namespace archive
}  // namespace aeron_py
