// PollSet: one call polls many subscriptions and images (aeron_subscription_controlled_poll /
// aeron_image_controlled_poll per entry, reassembling) and returns only the messages, each
// with its entry's key. No Python runs while the C client delivers: fragments are copied
// into C++ storage and the Python objects are built after the last C call returned.
#pragma once

#include "common.hpp"

namespace aeron_py {

// One poll's output, in C++ only (filled by the C fragment handler).
struct PollSetBatch {
    struct Message {
        size_t offset;
        size_t length;
        int32_t session_id;
        uint32_t key_slot;  // index into `keys`
    };
    std::vector<uint8_t> data;
    std::vector<Message> messages;
    std::vector<PyObject *> keys;  // strong: one per entry that delivered in this poll
    size_t max_messages = SIZE_MAX;
    bool out_of_memory = false;
};

// One member of the set: a Subscription or a live Image (strong references to it and to its
// key), its reassembler, and what end_of_stream already reported.
struct PollSetEntry {
    PollSetEntry(py::object owner, py::object key, std::shared_ptr<SubState> sub, std::shared_ptr<ImageHandle> image,
                 int32_t image_session_id);
    ~PollSetEntry();
    PollSetEntry(const PollSetEntry &) = delete;
    PollSetEntry &operator=(const PollSetEntry &) = delete;

    // Closed subscription or client, or released image: never touched again.
    bool dead() const noexcept {
        return sub->closed || sub->client->closed || (image && image->released);
    }

    py::object owner;
    py::object key;
    std::shared_ptr<SubState> sub;
    std::shared_ptr<ImageHandle> image;  // set for an Image entry
    int32_t image_session_id = 0;
    aeron_controlled_fragment_assembler_t *assembler = nullptr;
    PollSetBatch *batch = nullptr;  // the poll in progress
    uint32_t key_slot = 0;
    bool delivered = false;  // has a key slot in the poll in progress
    // end_of_stream bookkeeping: correlation ids of images reported (Subscription entry),
    // with a mark for "still in the image list"; or one flag (Image entry).
    std::vector<std::pair<int64_t, bool>> eos_reported;
    bool image_eos_reported = false;
};

class PollSet {
public:
    PollSet() = default;
    ~PollSet() = default;
    PollSet(const PollSet &) = delete;
    PollSet &operator=(const PollSet &) = delete;

    void add(py::object owner, py::object key);
    bool remove(py::handle owner);
    bool contains(py::handle owner) const { return index_.count(owner.ptr()) > 0; }
    size_t size() const { return entries_.size(); }
    void clear();  // RuntimeError while another thread polls the set, as add, remove and end_of_stream
    void clear_entries() noexcept;  // tp_clear of the cycle collector
    py::list end_of_stream();
    // tp_traverse of the cycle collector: visits every owner and key.
    int traverse(visitproc visit, void *arg) const noexcept;
    // The fast poll (fragment_limit, max_messages): a new list, or nullptr with an error set.
    PyObject *poll(long fragment_limit, size_t max_messages);

private:
    void check_not_collecting(const char *call) const;
    bool claim_entries() noexcept;     // phase A: false when an entry's subscription is polling
    void release_entries() noexcept;   // after phase B
    // Moves dead entries out of the set into `graveyard` (their Python references are dropped
    // by the caller once nothing iterates the set).
    void drop_dead(std::vector<std::unique_ptr<PollSetEntry>> &graveyard);
    std::unique_ptr<PollSetEntry> take_at(size_t index);
    // Phase B of poll: one controlled poll per entry into batch_, round robin from cursor_;
    // the name of the C call that failed (aeron_errmsg tells why), or nullptr.
    const char *collect_batch(long fragment_limit, size_t max_messages);

    std::vector<std::unique_ptr<PollSetEntry>> entries_;
    std::unordered_map<PyObject *, size_t> index_;  // owner -> position in entries_
    PollSetBatch batch_;                            // reused: its capacity survives polls
    size_t cursor_ = 0;                             // first entry of the next poll (max_messages)
    bool polling_ = false;
    bool collecting_ = false;  // phases A and B of a poll: the entries must not change
};

void init_poll_set(py::module_ &m);

}  // namespace aeron_py
