// ArchiveState: closing an aeron_archive_t once, and the C client's callbacks (no Python).
#include "archive_state.hpp"

namespace aeron_py::archive {

namespace {
// Bound on what one call may queue before Python takes it: a flood of signals is counted, not stored.
constexpr size_t MAX_QUEUED = 65536;
}  // namespace

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
