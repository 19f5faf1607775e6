// Owner of an aeron_archive_t: the connection of one Aeron client to an Aeron Archive.
// Binding code only: the Pythonic layer is aeron_py/archive/.
//
// The C archive client is not thread-safe and its calls block (each waits for the archive's
// answer, bounded by the context's message timeout, on its own idle strategy). So every call
// runs with the GIL released and this state's mutex held; the mutex is never taken while the
// GIL is wanted by its holder, and no Python runs under it: what the C client reports from
// inside a call (recording signals, errors of other requests, listed descriptors) is copied
// into C++ values and handed to Python after the call returns.
#pragma once

#include "../common.hpp"

#include <cerrno>
#include <mutex>
#include <optional>

extern "C" {
#include "aeron_agent.h"  // aeron_idle_strategy_load
#include "aeron_alloc.h"
#include "aeron_archive.h"
}

namespace aeron_py::archive {

// A recording's descriptor (aeron_archive_recording_descriptor_t), copied.
struct Descriptor {
    int64_t control_session_id, correlation_id, recording_id, start_timestamp, stop_timestamp;
    int64_t start_position, stop_position;
    int32_t initial_term_id, segment_file_length, term_buffer_length, mtu_length, session_id, stream_id;
    std::string stripped_channel, original_channel, source_identity;
};

// A recording signal (aeron_archive_recording_signal_t), copied.
struct Signal {
    int64_t control_session_id, recording_id, subscription_id, position;
    int32_t code;
};

// A recording subscription (aeron_archive_recording_subscription_descriptor_t), copied.
struct SubscriptionDescriptor {
    int64_t control_session_id, correlation_id, subscription_id;
    int32_t stream_id;
    std::string stripped_channel;
};

struct ReplayMergeState;

struct ArchiveState : ClientDependent {
    std::shared_ptr<ClientState> client;
    aeron_archive_t *archive = nullptr;  // guarded by `mutex`; null once closed
    // The context connect was given. The archive works on a copy, but the copy borrows what
    // conclude allocated into this one (its idle strategy's state): closed after the archive.
    aeron_archive_context_t *context = nullptr;
    std::mutex mutex;
    std::atomic<bool> open{false};  // readable without the mutex (is_closed)
    // Replay merges made over this connection (replay_merge.cpp): closed before it, under `mutex`.
    std::vector<std::weak_ptr<ReplayMergeState>> merges;
    // Filled by the C client's callbacks during a call (mutex held), taken by Python after it.
    std::vector<Signal> signals;
    std::vector<std::pair<int, std::string>> errors;
    size_t lost_signals = 0;
    void *idle_state = nullptr;  // the context's loaded idle strategy: freed after the context

    // Runs `call(archive)` with the GIL released and the mutex held (GIL held on entry);
    // AeronError for a closed archive or client, and from aeron_errcode/errmsg when it returns < 0.
    template <typename Call>
    void run(const char *name, Call &&call) {
        client->check_open();
        bool was_closed = false;
        int rc = 0;
        {
            ReleasedGil released;
            std::lock_guard<std::mutex> lock(mutex);
            if (archive == nullptr) {
                was_closed = true;
            } else {
                rc = call(archive);
            }
        }
        if (was_closed) throw AeronCallError("the archive connection is closed", EPIPE);
        if (rc < 0) throw_aeron_error(name);
    }

    ~ArchiveState() override;
    // Closes the archive connection first: it uses the client's publications (GIL held; waits
    // for a call in progress on another thread, which the message timeout bounds).
    void on_client_close() noexcept override { close(); }
    void close() noexcept;
};

// An aeron_archive_replay_merge_t over an ArchiveState and a subscription of the same client.
struct ReplayMergeState {
    std::shared_ptr<ArchiveState> archive;
    std::shared_ptr<SubState> sub;
    // The Python Subscription: its destructor closes the C subscription, which the merge uses
    // until closed. Released (GIL held) only by the ReplayMerge object, after the merge.
    py::object subscription;
    aeron_archive_replay_merge_t *merge = nullptr;  // guarded by archive->mutex; null once closed
    // aeron_archive_replay_merge_close; the caller holds archive->mutex. Never throws.
    void close_locked() noexcept;
};

// The archive context the Python layer describes, as C values.
struct ConnectOptions {
    std::string control_request_channel;
    int32_t control_request_stream_id;
    std::string control_response_channel;
    int32_t control_response_stream_id;
    std::string recording_events_channel;
    int32_t recording_events_stream_id;
    uint64_t message_timeout_ns;
    std::string client_name;
    // The control streams' term length and MTU, sparse terms, and how many times a request is
    // retried: 0 (sparse: -1) keeps Aeron's default (or its AERON_ARCHIVE_* environment variable).
    uint32_t control_term_length = 0;
    uint32_t control_mtu_length = 0;
    int control_sparse = -1;
    uint32_t message_retry_attempts = 0;
    // The idle strategy the blocking calls wait with (aeron_idle_strategy_load's names: "sleeping",
    // "yield", "backoff", "noop", "spin") and its arguments; empty: Aeron's default ("backoff", or
    // the AERON_ARCHIVE_IDLE_STRATEGY environment variable).
    std::string idle_strategy;
    std::string idle_args;
};

// ValueError when `value` holds a NUL (C would cut the string there).
void check_stream_text(const std::string &value, const char *what);

// A new aeron_archive_context_t over `client` (open, with its own conductor thread: else
// ValueError) set from `options` (recording events only when its channel is given); the
// caller closes it, then frees `*idle_state` (aeron_free: the loaded idle strategy's state,
// which the context borrows; null when Aeron's default is used). Throws AeronError, with
// nothing left allocated, when a setting is refused.
aeron_archive_context_t *new_archive_context(const ClientState &client, const ConnectOptions &options,
                                             void **idle_state);

// Credentials for an Archive that authenticates: what connect sends, and the callable that
// answers a challenge (credentials.cpp). Lives on the connecting thread's stack for the
// duration of aeron_archive_connect, the only call that uses them.
struct Credentials {
    std::string encoded;
    py::object on_challenge;  // (bytes) -> bytes, called with the GIL taken; None: no answer
    std::string answer;
    aeron_archive_encoded_credentials_t request{}, response{};
    std::unique_ptr<py::error_already_set> raised;  // what on_challenge raised: re-raised after connect
};
// aeron_archive_context_set_credentials_supplier over `credentials`; AeronError when refused.
void set_credentials(aeron_archive_context_t *ctx, Credentials &credentials);

// _aeron.archive.Archive's replication calls and the error responses (replication.cpp).
namespace replication {
struct Params {
    int64_t dst_recording_id, stop_position;
    std::string live_destination, replication_channel, src_response_channel;
    int64_t channel_tag_id, subscription_tag_id;
    int32_t file_io_max_length, replication_session_id;
    std::optional<std::string> credentials;
};
int64_t replicate(ArchiveState &state, int64_t src_recording_id, int32_t src_control_stream_id,
                  const std::string &src_control_channel, const Params &params);
void stop(ArchiveState &state, int64_t replication_id);
bool try_stop(ArchiveState &state, int64_t replication_id);
// aeron_archive_poll_for_error_response: the Archive's error text, or nullopt when none waits.
std::optional<std::string> poll_error_response(ArchiveState &state);
}  // namespace replication

// A persistent subscription's settings (aeron_archive_persistent_subscription_context_t).
struct PersistentOptions {
    ConnectOptions connect;  // its own archive connection (recording events unused)
    int64_t recording_id;
    std::string live_channel;
    int32_t live_stream_id;
    std::string replay_channel;
    int32_t replay_stream_id;
    int64_t start_position;
};

// _aeron.archive.PersistentSubscription and _aeron.archive.persistent_subscription(), which makes
// one over a _aeron.Client (persistent_subscription.cpp).
void init_persistent_subscription(py::module_ &m);

// What aeron_archive_replay_merge_init takes besides the archive and the subscription.
struct ReplayMergeOptions {
    std::string replay_channel, replay_destination, live_destination;
    int64_t recording_id, start_position, progress_timeout_ms;
};

// A _aeron.archive.ReplayMerge over `archive` and the Subscription `subscription` (replay_merge.cpp).
py::object make_replay_merge(const std::shared_ptr<ArchiveState> &archive, py::handle subscription,
                             const ReplayMergeOptions &options);
void init_replay_merge(py::module_ &m);

// Segment files and catalog entries of stopped recordings (segments.cpp): each one C call
// through ArchiveState::run. Counts are of segment files.
namespace segments {
void detach(ArchiveState &state, int64_t recording_id, int64_t new_start_position);
int64_t delete_detached(ArchiveState &state, int64_t recording_id);
int64_t purge(ArchiveState &state, int64_t recording_id, int64_t new_start_position);
int64_t attach(ArchiveState &state, int64_t recording_id);
int64_t migrate(ArchiveState &state, int64_t src_recording_id, int64_t dst_recording_id);
void update_channel(ArchiveState &state, int64_t recording_id, const std::string &channel);
// aeron_archive_segment_file_base_position, its arguments checked first (ValueError).
int64_t base_position(int64_t start_position, int64_t position, int32_t term_length, int32_t segment_length);
void init(py::module_ &m);  // _aeron.archive.segment_file_base_position
}  // namespace segments

// The Archive's recording-position counters in this client's counters (recording_pos.cpp),
// read with the GIL held; nullopt when `counter_id` is not a recording counter.
namespace recording_pos {
std::optional<int64_t> recording_id(ArchiveState &state, int32_t counter_id);
std::optional<std::string> source_identity(ArchiveState &state, int32_t counter_id);
bool is_active(ArchiveState &state, int32_t counter_id, int64_t recording_id);
}  // namespace recording_pos

// Called by the C client on the calling thread, inside a call (mutex held, GIL released).
void on_recording_signal(aeron_archive_recording_signal_t *signal, void *clientd);
void on_archive_error(void *clientd, int errcode, const char *message);

}  // namespace aeron_py::archive
