// _aeron.archive.ReplayMerge: aeron_archive_replay_merge_t, a replay of a recording that merges
// into its live stream on one multi-destination subscription. Its work runs with the GIL
// released and the archive's mutex held (it uses the archive connection); the subscription it
// works on is polled by the caller as any other (aeron_py.archive.ReplayMerge.poll).
#include "archive_state.hpp"

#include "../guarded_class.hpp"
#include "../poll.hpp"  // subscription_state

#include <cerrno>

namespace aeron_py {
namespace archive {

namespace {

class ReplayMerge {
public:
    explicit ReplayMerge(std::shared_ptr<ReplayMergeState> state) : state_(std::move(state)) {}
    ReplayMerge(ReplayMerge &&) = default;

    ~ReplayMerge() {
        if (state_ == nullptr) return;
        Section section(section_lock(*this));
        try {
            close();
        } catch (...) {  // a destructor never throws
        }
    }

    friend PyObject *section_lock(const ReplayMerge &merge) {
        return merge.state_ ? merge.state_->archive->client->lock.get() : nullptr;  // null: moved from
    }

    // aeron_archive_replay_merge_do_work: the work count.
    int do_work() {
        int work = 0;
        const int rc = locked("aeron_archive_replay_merge_do_work", [&](aeron_archive_replay_merge_t *merge) {
            return aeron_archive_replay_merge_do_work(&work, merge);
        });
        if (rc < 0) throw_aeron_error("aeron_archive_replay_merge_do_work");
        return work;
    }

    bool is_merged() { return query([](aeron_archive_replay_merge_t *m) { return aeron_archive_replay_merge_is_merged(m); }); }
    bool has_failed() { return query([](aeron_archive_replay_merge_t *m) { return aeron_archive_replay_merge_has_failed(m); }); }
    bool is_live_added() {
        return query([](aeron_archive_replay_merge_t *m) { return aeron_archive_replay_merge_is_live_added(m); });
    }

    bool is_closed() {
        ReleasedGil released;
        std::lock_guard<std::mutex> lock(state_->archive->mutex);
        return state_->merge == nullptr;
    }

    // aeron_archive_replay_merge_close (stops the replay, removes its destinations), then lets
    // go of the subscription. Idempotent.
    void close() {
        {
            ReleasedGil released;
            std::lock_guard<std::mutex> lock(state_->archive->mutex);
            state_->close_locked();
        }
        state_->subscription = py::object();  // GIL held
    }

private:
    // Runs `call(merge)` with the GIL released and the archive's mutex held; raises once closed.
    template <typename Call>
    int locked(const char *name, Call &&call) {
        state_->archive->client->check_open();
        bool was_closed = false;
        int rc = 0;
        {
            ReleasedGil released;
            std::lock_guard<std::mutex> lock(state_->archive->mutex);
            // `closed` is atomic: written under the GIL, which this thread does not hold now.
            // (No deterministic test: a data race, benign on x86, only a thread sanitizer sees.)
            if (state_->merge == nullptr || state_->sub->closed.load(std::memory_order_acquire)) {
                was_closed = true;
            } else {
                rc = call(state_->merge);
            }
        }
        if (was_closed) throw AeronCallError(std::string(name) + ": the replay merge is closed", EPIPE);
        return rc;
    }

    template <typename Query>
    bool query(Query &&query) {
        bool value = false;
        locked("replay merge", [&](aeron_archive_replay_merge_t *merge) {
            value = query(merge);
            return 0;
        });
        return value;
    }

    std::shared_ptr<ReplayMergeState> state_;
};

}  // namespace

py::object make_replay_merge(const std::shared_ptr<ArchiveState> &archive, py::handle subscription,
                             const ReplayMergeOptions &options) {
    auto state = std::make_shared<ReplayMergeState>();
    state->archive = archive;
    if (!subscription_state(subscription.ptr(), state->sub))
        throw py::type_error("replay_merge needs an aeron_py Subscription");
    state->sub->check_open();
    state->subscription = py::reinterpret_borrow<py::object>(subscription);
    if (state->sub->client != archive->client)
        throw py::value_error("the subscription must belong to the archive connection's Aeron client");
    int rc = 0;
    bool was_closed = false;
    {
        ReleasedGil released;
        std::lock_guard<std::mutex> lock(archive->mutex);
        if (archive->archive == nullptr) {
            was_closed = true;
        } else {
            rc = aeron_archive_replay_merge_init(
                &state->merge, state->sub->subscription, archive->archive, options.replay_channel.c_str(),
                options.replay_destination.c_str(), options.live_destination.c_str(), options.recording_id,
                options.start_position, aeron_epoch_clock(), options.progress_timeout_ms);
            if (rc == 0) archive->merges.push_back(state);
        }
    }
    if (was_closed) throw AeronCallError("the archive connection is closed", EPIPE);
    if (rc < 0) throw_aeron_error("aeron_archive_replay_merge_init");
    return py::cast(ReplayMerge(state));
}

void init_replay_merge(py::module_ &m) {
    guarded_class<ReplayMerge>(m, "ReplayMerge",
                            "aeron_archive_replay_merge_t: a replay merging into a live stream on one MDS subscription.")
        .def("do_work", &ReplayMerge::do_work, "aeron_archive_replay_merge_do_work: the work count.")
        .def_property_readonly("is_merged", &ReplayMerge::is_merged, "aeron_archive_replay_merge_is_merged")
        .def_property_readonly("has_failed", &ReplayMerge::has_failed, "aeron_archive_replay_merge_has_failed")
        .def_property_readonly("is_live_added", &ReplayMerge::is_live_added,
                               "aeron_archive_replay_merge_is_live_added")
        .def_property_readonly("is_closed", &ReplayMerge::is_closed)
        .def("close", &ReplayMerge::close, "aeron_archive_replay_merge_close (idempotent; also done with the archive).");
}

}  // namespace archive
}  // namespace aeron_py
