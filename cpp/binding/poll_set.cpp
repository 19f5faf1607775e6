// PollSet: many subscriptions and images polled by one call. See poll_set.hpp; the Python
// binding is in poll_set_binding.cpp.
//
// A poll runs in three phases, all with the GIL held:
//  A. drop entries whose subscription, image or client was closed (their references are
//     dropped at the end, when nothing iterates the set), and refuse a poll of a
//     subscription that is being polled already (Subscription.poll's contract);
//  B. per entry with something to read (log_peek.hpp), one aeron_subscription_controlled_poll
//     / aeron_image_controlled_poll through the entry's reassembler into `collect`, which
//     copies into C++ storage: no Python object is made and no Python code can run, so
//     nothing can close or change the set under the C client;
//  C. build the list of (key, session_id, bytes). Python may run here (GC, finalizers): the
//     keys are held by strong references, a second poll of the set raises RuntimeError, and
//     add/remove/clear are safe (phase C no longer looks at the entries).
#include "poll_set.hpp"

#include "fastcall.hpp"
#include "image.hpp"
#include "log_peek.hpp"
#include "poll.hpp"

#include <algorithm>

namespace aeron_py {

namespace {

// The C fragment handler (behind each entry's aeron_controlled_fragment_assembler_t).
aeron_controlled_fragment_handler_action_t collect(void *clientd, const uint8_t *buffer, size_t length,
                                                   aeron_header_t *header) noexcept {
    auto *entry = static_cast<PollSetEntry *>(clientd);
    PollSetBatch &batch = *entry->batch;
    if (batch.out_of_memory) return AERON_ACTION_ABORT;
    int32_t session_id = entry->image_session_id;
    if (!entry->image) {
        aeron_header_values_t values;
        if (aeron_header_values(header, &values) == 0) session_id = values.frame.session_id;
    }
    try {
        if (!entry->delivered) {
            batch.keys.push_back(entry->key.ptr());  // borrowed until phase C takes a reference
            entry->key_slot = static_cast<uint32_t>(batch.keys.size() - 1);
            entry->delivered = true;
        }
        const size_t offset = batch.data.size();
        batch.data.insert(batch.data.end(), buffer, buffer + length);
        batch.messages.push_back({offset, length, session_id, entry->key_slot});
    } catch (...) {  // std::bad_alloc: nothing may cross the C frame; poll raises MemoryError
        batch.out_of_memory = true;
        return AERON_ACTION_ABORT;
    }
    return batch.messages.size() >= batch.max_messages ? AERON_ACTION_BREAK : AERON_ACTION_CONTINUE;
}

// Resets a flag when a scope ends (also by exception).
struct FlagGuard {
    explicit FlagGuard(bool &flag) : flag_(&flag) { *flag_ = true; }
    ~FlagGuard() { release(); }
    void release() noexcept {  // the flag down before the guard's end
        if (flag_ != nullptr) *flag_ = false;
        flag_ = nullptr;
    }
    bool *flag_;
};

// Drops the references of each taken entry; runs Python (finalizers) so only once nothing
// iterates the set. Keeps a pending exception intact.
void bury(std::vector<std::unique_ptr<PollSetEntry>> &graveyard) noexcept {
    if (graveyard.empty()) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    graveyard.clear();
    PyErr_Restore(type, value, tb);
}

constexpr size_t kKeepDataCapacity = size_t{1} << 20;  // bytes kept between polls
constexpr size_t kKeepMessageCapacity = 1 << 14;

}  // namespace

PollSetEntry::PollSetEntry(py::object owner_, py::object key_, std::shared_ptr<SubState> sub_,
                           std::shared_ptr<ImageHandle> image_, int32_t image_session_id_)
    : owner(std::move(owner_)), key(std::move(key_)), sub(std::move(sub_)), image(std::move(image_)),
      image_session_id(image_session_id_) {
    if (aeron_controlled_fragment_assembler_create(&assembler, collect, this) < 0)
        throw_aeron_error("aeron_controlled_fragment_assembler_create");
}

PollSetEntry::~PollSetEntry() {
    if (assembler != nullptr) aeron_controlled_fragment_assembler_delete(assembler);
    if (!python_alive()) {  // Python objects must not be touched while the interpreter finalizes
        owner.release();
        key.release();
    }
}

void PollSet::check_not_collecting(const char *call) const {
    if (collecting_)
        throw std::runtime_error(std::string(call) + ": another thread is polling the set; change it between polls");
}

void PollSet::add(py::object owner, py::object key) {
    check_not_collecting("PollSet.add");
    if (index_.count(owner.ptr()) > 0)
        throw py::value_error("PollSet.add: this " + std::string(Py_TYPE(owner.ptr())->tp_name) +
                              " is already in the set");
    std::shared_ptr<SubState> sub;
    std::shared_ptr<ImageHandle> image;
    int32_t session_id = 0;
    if (subscription_state(owner.ptr(), sub)) {
        Section section(sub->client->lock.get());
        sub->check_open();
    } else if (PyObject_TypeCheck(owner.ptr(), fast::type_of<Image>())) {
        auto *live = owner.cast<Image *>();
        Section section(section_lock(*live));
        live->live();  // raises for a callback snapshot, a released image or a closed subscription
        sub = live->sub_state();
        image = live->handle();
        session_id = live->constants().session_id;
    } else {
        throw py::type_error("PollSet.add: expected a Subscription or an Image, got " +
                             std::string(Py_TYPE(owner.ptr())->tp_name));
    }
    // Again: free-threaded, the client's Section above may have suspended the set's while it
    // waited, and another thread's poll or end_of_stream may be walking the entries now.
    check_not_collecting("PollSet.add");
    auto entry = std::make_unique<PollSetEntry>(owner, std::move(key), std::move(sub), std::move(image), session_id);
    entries_.reserve(entries_.size() + 1);
    index_.emplace(owner.ptr(), entries_.size());
    entries_.push_back(std::move(entry));  // cannot throw after the reserve
}

std::unique_ptr<PollSetEntry> PollSet::take_at(size_t index) {
    std::unique_ptr<PollSetEntry> taken = std::move(entries_[index]);
    index_.erase(taken->owner.ptr());
    if (index + 1 != entries_.size()) {
        entries_[index] = std::move(entries_.back());
        index_.find(entries_[index]->owner.ptr())->second = index;
    }
    entries_.pop_back();
    return taken;
}

bool PollSet::remove(py::handle owner) {
    check_not_collecting("PollSet.remove");
    const auto found = index_.find(owner.ptr());
    if (found == index_.end()) return false;
    std::unique_ptr<PollSetEntry> taken = take_at(found->second);
    taken.reset();  // may run finalizers: the set is consistent again
    return true;
}

void PollSet::clear() {
    check_not_collecting("PollSet.clear");
    clear_entries();
}

void PollSet::clear_entries() noexcept {
    std::vector<std::unique_ptr<PollSetEntry>> taken = std::move(entries_);
    entries_.clear();
    index_.clear();
    cursor_ = 0;
}

int PollSet::traverse(visitproc visit, void *arg) const noexcept {
    for (const auto &entry : entries_) {
        Py_VISIT(entry->owner.ptr());
        Py_VISIT(entry->key.ptr());
    }
    return 0;
}

void PollSet::drop_dead(std::vector<std::unique_ptr<PollSetEntry>> &graveyard) {
    for (size_t i = 0; i < entries_.size();) {
        if (entries_[i]->dead()) {
            graveyard.push_back(take_at(i));  // the last entry moved to i: look at i again
        } else {
            i++;
        }
    }
}

namespace {

#ifdef Py_GIL_DISABLED
// Phase A for one entry of `set`, in its client's Section: the entry's subscription counted as
// polling (a close meanwhile, from any thread, is deferred until release_entry), or false when
// another poll of it runs (the set's own claims do not count: a subscription and its image may
// both be entries).
bool claim_entry(PollSetEntry &entry, const void *set) noexcept {
    SubState &sub = *entry.sub;
    Section section(sub.client->lock.get());
    if (sub.polling > 0 && sub.claimed_by != set) return false;
    sub.polling++;
    sub.claimed_by = set;
    sub.client->polling++;
    return true;
}

// After phase B: the claim given back, and any close deferred meanwhile carried out.
void release_entry(PollSetEntry &entry) noexcept {
    SubState &sub = *entry.sub;
    std::shared_ptr<ClientState> client = sub.client;
    Section section(client->lock.get());
    if (--sub.polling == 0) sub.claimed_by = nullptr;
    client->polling--;
    sub.finish_deferred();
    client->finish_deferred();
}
#endif

// One entry's controlled poll into `batch` (phase B); the C call's result.
int poll_entry(PollSetEntry &entry, PollSetBatch &batch, size_t fragment_limit) noexcept {
    SubState &sub = *entry.sub;
    Section section(sub.client->lock.get());
    if (entry.dead()) return 0;  // closed since phase A (free-threaded: the C close waits for release_entry)
    // Nothing to read (log_peek.hpp): no C poll. Under AERON_PY_NO_TRICKS every entry gets
    // Aeron's poll.
    if (tricks::on() && !(entry.image ? log_peek::image_may_have_data(entry.image->image)
                                      : log_peek::subscription_may_have_data(sub.subscription)))
        return 0;
    entry.batch = &batch;
    entry.delivered = false;
#ifndef Py_GIL_DISABLED
    sub.polling++;  // with the GIL, counted around the C poll only (free-threaded: claimed in phase A)
    sub.client->polling++;
#endif
    const int rc = entry.image
                       ? aeron_image_controlled_poll(entry.image->image, aeron_controlled_fragment_assembler_handler,
                                                     entry.assembler, fragment_limit)
                       : aeron_subscription_controlled_poll(
                             sub.subscription, aeron_controlled_fragment_assembler_handler, entry.assembler,
                             fragment_limit);
#ifndef Py_GIL_DISABLED
    sub.polling--;
    sub.client->polling--;
#endif
    entry.batch = nullptr;
    return rc;
}

// Phase C: the list of (key, session_id, bytes), or nullptr with an error set.
PyObject *build_result(const PollSetBatch &batch) noexcept {
    for (PyObject *key : batch.keys) Py_INCREF(key);
    PyObject *result = PyList_New(static_cast<Py_ssize_t>(batch.messages.size()));
    for (size_t j = 0; result != nullptr && j < batch.messages.size(); j++) {
        const PollSetBatch::Message &message = batch.messages[j];
        PyObject *item = PyTuple_New(3);
        PyObject *session = PyLong_FromLong(message.session_id);
        PyObject *data = PyBytes_FromStringAndSize(reinterpret_cast<const char *>(batch.data.data() + message.offset),
                                                   static_cast<Py_ssize_t>(message.length));
        if (item == nullptr || session == nullptr || data == nullptr) {
            Py_XDECREF(item);
            Py_XDECREF(session);
            Py_XDECREF(data);
            Py_CLEAR(result);
            break;
        }
        PyObject *key = batch.keys[message.key_slot];
        Py_INCREF(key);
        PyTuple_SET_ITEM(item, 0, key);
        PyTuple_SET_ITEM(item, 1, session);
        PyTuple_SET_ITEM(item, 2, data);
        PyList_SET_ITEM(result, static_cast<Py_ssize_t>(j), item);
    }
    for (PyObject *key : batch.keys) Py_DECREF(key);
    return result;
}

// Empties the batch after a poll, keeping at most kKeep*Capacity of storage for the next.
void reset_batch(PollSetBatch &batch) noexcept {
    batch.keys.clear();
    batch.messages.clear();
    if (batch.data.capacity() > kKeepDataCapacity) std::vector<uint8_t>().swap(batch.data);
    if (batch.messages.capacity() > kKeepMessageCapacity) std::vector<PollSetBatch::Message>().swap(batch.messages);
    batch.data.clear();
}

}  // namespace

// With the GIL no other thread runs while phases A and B call no Python: no entry's subscription
// may be polling, and each is counted only around its own C poll (poll_entry), at no cost for an
// idle entry. Free-threaded, another thread may start polling one at any time: every entry's
// subscription is claimed first, each in its client's Section, all or none.
bool PollSet::claim_entries() noexcept {
#ifdef Py_GIL_DISABLED
    size_t claimed = 0;
    while (claimed < entries_.size() && claim_entry(*entries_[claimed], this)) claimed++;
    if (claimed == entries_.size()) return true;
    for (size_t i = 0; i < claimed; i++) release_entry(*entries_[i]);
    return false;
#else
    for (const auto &entry : entries_) {
        if (entry->sub->polling > 0) return false;
    }
    return true;
#endif
}

// After phase B, free-threaded: the claims given back, any close deferred meanwhile carried out.
void PollSet::release_entries() noexcept {
#ifdef Py_GIL_DISABLED
    for (const auto &entry : entries_) release_entry(*entry);
#endif
}

const char *PollSet::collect_batch(long fragment_limit, size_t max_messages) {
    PollSetBatch &batch = batch_;
    batch.data.clear();
    batch.messages.clear();
    batch.keys.clear();
    batch.max_messages = max_messages;
    batch.out_of_memory = false;
    const size_t count = entries_.size();
    const size_t limit = static_cast<size_t>(fragment_limit);
    const size_t start = cursor_ < count ? cursor_ : 0;
    for (size_t k = 0; k < count && max_messages > 0; k++) {
        const size_t i = start + k < count ? start + k : start + k - count;
        PollSetEntry &entry = *entries_[i];
        if (poll_entry(entry, batch, limit) < 0)
            return entry.image ? "aeron_image_controlled_poll" : "aeron_subscription_controlled_poll";
        if (batch.out_of_memory) break;
        if (batch.messages.size() >= max_messages) {
            cursor_ = i + 1;  // the next capped poll starts after the entry that filled this one
            break;
        }
    }
    return nullptr;
}

PyObject *PollSet::poll(long fragment_limit, size_t max_messages) {
    if (polling_) {
        PyErr_SetString(PyExc_RuntimeError,
                        "PollSet.poll: this set is already being polled (a poll from another thread, or from a "
                        "finalizer run by the poll)");
        return nullptr;
    }
    check_not_collecting("PollSet.poll");  // another thread's end_of_stream walks the entries
    std::vector<std::unique_ptr<PollSetEntry>> graveyard;
    PyObject *result = nullptr;
    {
        FlagGuard guard(polling_);
        const char *failed_call = nullptr;
        int errcode = 0;
        std::string message;
        {
            // Phases A and B iterate the entries, and let go of the set's critical section while
            // waiting for a client's: the set is not changed meanwhile (check_not_collecting).
            FlagGuard collecting(collecting_);
            // Phase A: the poll refused before anything is read if an entry's subscription is polling.
            drop_dead(graveyard);
            if (!claim_entries()) {
                bury(graveyard);
                throw_reentrant_poll("PollSet.poll");
            }
            // Phase B. No Python runs until the claims are given back.
            failed_call = collect_batch(fragment_limit, max_messages);
            if (failed_call != nullptr) {
                errcode = aeron_errcode();
                message = std::string(failed_call) + ": " + aeron_errmsg();
            }
            release_entries();
        }
        if (failed_call != nullptr) {
            bury(graveyard);
            throw AeronCallError(message, errcode);
        }
        // Phase C.
        if (batch_.out_of_memory) {
            PyErr_NoMemory();
        } else {
            result = build_result(batch_);
        }
        reset_batch(batch_);
    }
    bury(graveyard);
    return result;
}

namespace {

struct EndOfStreamWalk {
    PollSetEntry *entry;
    std::vector<std::pair<PyObject *, int32_t>> *found;
    bool out_of_memory = false;
};

// aeron_subscription_for_each_image visitor (the image is retained during the call).
void visit_image(aeron_image_t *image, void *clientd) noexcept {
    auto *walk = static_cast<EndOfStreamWalk *>(clientd);
    aeron_image_constants_t constants{};
    if (aeron_image_constants(image, &constants) < 0) return;
    auto &reported = walk->entry->eos_reported;
    for (auto &item : reported) {
        if (item.first == constants.correlation_id) {
            item.second = true;  // still listed: keep it so it is not reported again
            return;
        }
    }
    if (!aeron_image_is_end_of_stream(image)) return;
    try {
        reported.emplace_back(constants.correlation_id, true);
        walk->found->emplace_back(walk->entry->key.ptr(), constants.session_id);
    } catch (...) {
        walk->out_of_memory = true;
    }
}

}  // namespace

py::list PollSet::end_of_stream() {
    check_not_collecting("PollSet.end_of_stream");
    std::vector<std::unique_ptr<PollSetEntry>> graveyard;
    std::vector<std::pair<PyObject *, int32_t>> found;  // borrowed keys: no Python runs in the walk
    bool out_of_memory = false;
    // The walk takes each entry's client Section, which may suspend the set's (free-threaded):
    // the entries must not change meanwhile, as during a poll's phases A and B.
    FlagGuard collecting(collecting_);
    drop_dead(graveyard);
    for (const auto &owned : entries_) {
        PollSetEntry &entry = *owned;
        Section section(entry.sub->client->lock.get());
        if (entry.dead()) continue;  // closed since drop_dead
        if (entry.image) {
            if (!entry.image_eos_reported && aeron_image_is_end_of_stream(entry.image->image)) {
                found.emplace_back(entry.key.ptr(), entry.image_session_id);
                entry.image_eos_reported = true;
            }
            continue;
        }
        for (auto &item : entry.eos_reported) item.second = false;
        EndOfStreamWalk walk{&entry, &found};
        aeron_subscription_for_each_image(entry.sub->subscription, visit_image, &walk);
        // Forget images that left the subscription's list.
        auto &reported = entry.eos_reported;
        reported.erase(std::remove_if(reported.begin(), reported.end(),
                                      [](const std::pair<int64_t, bool> &item) { return !item.second; }),
                       reported.end());
        out_of_memory = out_of_memory || walk.out_of_memory;
    }
    collecting.release();
    py::list result;
    {
        std::vector<py::object> keys;  // strong before anything Python can run
        keys.reserve(found.size());
        for (const auto &item : found) keys.push_back(py::reinterpret_borrow<py::object>(item.first));
        for (size_t j = 0; j < found.size(); j++) result.append(py::make_tuple(keys[j], found[j].second));
    }
    bury(graveyard);
    if (out_of_memory) throw std::bad_alloc();
    return result;
}

}  // namespace aeron_py
