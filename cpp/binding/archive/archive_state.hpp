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

extern "C" {
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
};

// ValueError when `value` holds a NUL (C would cut the string there).
void check_stream_text(const std::string &value, const char *what);

// A new aeron_archive_context_t over `client` (open, with its own conductor thread: else
// ValueError) set from `options` (recording events only when its channel is given); the
// caller closes it. Throws AeronError, with nothing left allocated, when a setting is refused.
aeron_archive_context_t *new_archive_context(const ClientState &client, const ConnectOptions &options);

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

// A _aeron.archive.PersistentSubscription over the _aeron.Client `client` (persistent_subscription.cpp).
py::object make_persistent_subscription(py::handle client, const PersistentOptions &options);
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

// Called by the C client on the calling thread, inside a call (mutex held, GIL released).
void on_recording_signal(aeron_archive_recording_signal_t *signal, void *clientd);
void on_archive_error(void *clientd, int errcode, const char *message);

}  // namespace aeron_py::archive
