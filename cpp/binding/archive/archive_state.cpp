// ArchiveState: closing an aeron_archive_t once, and the C client's callbacks (no Python).
#include "archive_state.hpp"

#include "../context_init.hpp"

namespace aeron_py::archive {

namespace {
// Bound on what one call may queue before Python takes it: a flood of signals is counted, not stored.
constexpr size_t MAX_QUEUED = 65536;
}  // namespace

void check_stream_text(const std::string &value, const char *what) {
    if (value.find('\0') != std::string::npos) throw py::value_error(std::string(what) + " contains a NUL character");
}

namespace {
// The context's idle strategy from `options`: true and *idle_state null for Aeron's default.
bool set_idle_strategy(aeron_archive_context_t *ctx, const ConnectOptions &options, void **idle_state) {
    if (options.idle_strategy.empty()) return true;
    aeron_idle_strategy_func_t func = aeron_idle_strategy_load(
        options.idle_strategy.c_str(), idle_state, nullptr, options.idle_args.empty() ? nullptr : options.idle_args.c_str());
    return func != nullptr && aeron_archive_context_set_idle_strategy(ctx, func, *idle_state) >= 0;
}
}  // namespace

aeron_archive_context_t *new_archive_context(const ClientState &client, const ConnectOptions &options,
                                             void **idle_state) {
    *idle_state = nullptr;
    client.check_open();
    if (aeron_context_get_use_conductor_agent_invoker(client.context))
        throw py::value_error("the archive client needs an Aeron client with its own conductor thread "
                              "(use_conductor_agent_invoker=False)");
    for (const auto *text : {&options.control_request_channel, &options.control_response_channel,
                             &options.recording_events_channel, &options.client_name, &options.idle_strategy,
                             &options.idle_args})
        check_stream_text(*text, "a channel or the client name");
    aeron_archive_context_t *ctx = nullptr;
    if (init_context_in_turn([&ctx] { return aeron_archive_context_init(&ctx); }) < 0)
        throw_aeron_error("aeron_archive_context_init");
    const bool events = !options.recording_events_channel.empty();
    if (aeron_archive_context_set_aeron(ctx, client.aeron) < 0 ||
        aeron_archive_context_set_control_request_channel(ctx, options.control_request_channel.c_str()) < 0 ||
        aeron_archive_context_set_control_request_stream_id(ctx, options.control_request_stream_id) < 0 ||
        aeron_archive_context_set_control_response_channel(ctx, options.control_response_channel.c_str()) < 0 ||
        aeron_archive_context_set_control_response_stream_id(ctx, options.control_response_stream_id) < 0 ||
        (events && aeron_archive_context_set_recording_events_channel(
                       ctx, options.recording_events_channel.c_str()) < 0) ||
        (events && aeron_archive_context_set_recording_events_stream_id(ctx, options.recording_events_stream_id) < 0) ||
        aeron_archive_context_set_message_timeout_ns(ctx, options.message_timeout_ns) < 0 ||
        aeron_archive_context_set_client_name(ctx, options.client_name.c_str()) < 0 ||
        (options.control_term_length != 0 &&
         aeron_archive_context_set_control_term_buffer_length(ctx, options.control_term_length) < 0) ||
        (options.control_mtu_length != 0 &&
         aeron_archive_context_set_control_mtu_length(ctx, options.control_mtu_length) < 0) ||
        (options.control_sparse >= 0 &&
         aeron_archive_context_set_control_term_buffer_sparse(ctx, options.control_sparse != 0) < 0) ||
        (options.message_retry_attempts != 0 &&
         aeron_archive_context_set_message_retry_attempts(ctx, options.message_retry_attempts) < 0) ||
        !set_idle_strategy(ctx, options, idle_state)) {
        AeronCallError error(std::string("aeron_archive_context_set: ") + aeron_errmsg(), aeron_errcode());
        aeron_archive_context_close(ctx);
        aeron_free(*idle_state);
        *idle_state = nullptr;
        throw error;
    }
    return ctx;
}

ArchiveState::~ArchiveState() { close(); }

void ArchiveState::close() noexcept {
    std::lock_guard<std::mutex> lock(mutex);
    open.store(false, std::memory_order_release);
    for (auto &weak : merges) {  // they use the archive: first
        if (auto merge = weak.lock()) merge->close_locked();
    }
    merges.clear();
    if (archive != nullptr) aeron_archive_close(archive);
    archive = nullptr;
    if (context != nullptr) aeron_archive_context_close(context);  // after the archive: it borrows from it
    context = nullptr;
    aeron_free(idle_state);  // after the context, which borrows it
    idle_state = nullptr;
}

void ReplayMergeState::close_locked() noexcept {
    if (merge == nullptr) return;
    aeron_archive_replay_merge_close(merge);  // stops its replay, removes its destinations
    merge = nullptr;
}

void on_recording_signal(aeron_archive_recording_signal_t *signal, void *clientd) {
    auto *state = static_cast<ArchiveState *>(clientd);
    if (state->signals.size() >= MAX_QUEUED) {
        state->lost_signals++;
        return;
    }
    try {
        state->signals.push_back(Signal{signal->control_session_id, signal->recording_id, signal->subscription_id,
                                        signal->position, signal->recording_signal_code});
    } catch (...) {  // no C++ exception crosses the C client's frames
        state->lost_signals++;
    }
}

void on_archive_error(void *clientd, int errcode, const char *message) {
    auto *state = static_cast<ArchiveState *>(clientd);
    if (state->errors.size() >= MAX_QUEUED) return;
    try {
        state->errors.emplace_back(errcode, message != nullptr ? message : "");
    } catch (...) {
    }
}

}  // namespace aeron_py::archive
