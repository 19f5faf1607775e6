// aeron_buffer_claim_t as a Python object, and the bookkeeping that keeps it memory-safe.
//
// Contract: a claim holds a strong reference to its publication (hence to its client); its
// `data` memoryview and every view derived from it (slices, casts) are killed (dead_view.hpp)
// when the claim is committed, aborted, abandoned, or when its publication or client closes.
// A claim still pending when its publication or client closes is aborted first, while the
// log is still mapped; commit()/abort() afterwards raise. A claim garbage-collected while
// pending is aborted. Raw pointers taken through the buffer protocol (numpy.frombuffer,
// ctypes) cannot be revoked: they must not be used after the claim ends.
//
// Under AERON_PY_NO_TRICKS (tricks.hpp) `data` is a view over a staging copy of the claimed
// space (a bytearray), copied into the log by commit(); the view is ended with the public
// memoryview.release(), and its slices, which then stay usable, only ever reach the copy.
#pragma once

#include "common.hpp"

namespace aeron_py {

class BufferClaim;

// How a claim ended (or not yet).
enum class ClaimState : uint8_t { pending, committed, aborted, publication_closed, client_closed };

// The live claims of one publication. Registers itself with the client (ClientDependent)
// on its first claim so a client close ends them before aeron_close unmaps the log.
class ClaimOwner {
public:
    explicit ClaimOwner(std::shared_ptr<ClientState> client) : client_(std::move(client)) {}
    ~ClaimOwner();
    ClaimOwner(const ClaimOwner &) = delete;
    ClaimOwner &operator=(const ClaimOwner &) = delete;

    void add(BufferClaim *claim);
    void remove(BufferClaim *claim) noexcept;
    // Aborts every pending claim and kills its views; `why` is what they report afterwards.
    void end_all(ClaimState why) noexcept;
    // The dead view of an ended claim, kept to be revived for the next claim's `data`
    // (dead_view::revive) instead of allocating a new one: take_view() gives it back over
    // [data, data+length) or returns nullptr; keep_view() takes ownership of a dead view.
    PyObject *take_view(void *data, size_t length) noexcept;
    void keep_view(PyObject *view) noexcept;
    // The Python objects of the last claims that ended by commit() or abort(), kept to be
    // restarted by a later try_claim instead of making new ones. Two, because the natural
    // loop (`claim = pub.try_claim(n)`) still holds the previous claim while it asks for
    // the next. A spare holds no reference to its publication (no cycle). reuse_claim()
    // restarts one that nothing else references over `claim` and returns it (a new
    // reference), else nullptr. Throws (nothing changed) only when out of memory.
    void keep_claim(PyObject *claim) noexcept;
    PyObject *reuse_claim(const py::object &publication, const aeron_buffer_claim_t &claim, int64_t position);
    PyObject *lock() const { return client_->lock.get(); }  // the client's Section lock

private:
    struct Hook : ClientDependent {
        ClaimOwner *owner = nullptr;
        void on_client_close() noexcept override {
            if (owner != nullptr) owner->end_all(ClaimState::client_closed);
        }
    };
    std::shared_ptr<ClientState> client_;
    std::shared_ptr<Hook> hook_;
    std::vector<BufferClaim *> live_;
    PyObject *spare_view_ = nullptr;   // owned, dead until revived
    PyObject *spare_claims_[2] = {nullptr, nullptr};  // owned, ended, detached from their publication
};

class BufferClaim {
public:
    // `publication` is the Python object owning `owner`; kept alive by this claim.
    BufferClaim(ClaimOwner *owner, py::object publication, const aeron_buffer_claim_t &claim, int64_t position);
    ~BufferClaim();  // a claim still pending is aborted; never throws
    BufferClaim(const BufferClaim &) = delete;
    BufferClaim &operator=(const BufferClaim &) = delete;

    // A new reference to the writable view, or nullptr with ValueError once ended.
    PyObject *data();
    // aeron_buffer_claim_commit / _abort; nullptr with an error set on misuse, else None.
    // `self` is this claim's Python object: it becomes its owner's spare (keep_claim).
    PyObject *commit(PyObject *self) { return finish(true, self); }
    PyObject *abort(PyObject *self) { return finish(false, self); }
    // Pending again over a new claim (ClaimOwner::reuse_claim); throws before any change.
    void restart(py::object publication, const aeron_buffer_claim_t &claim, int64_t position);
    // Told by the owner: abort if pending, kill the views, remember why.
    void end(ClaimState why) noexcept;

    ClaimState state() const { return state_; }
    size_t length() const { return claim_.length; }
    int64_t position() const { return position_; }
    friend PyObject *section_lock(const BufferClaim &claim) { return claim.lock_.ptr(); }

private:
    PyObject *finish(bool commit, PyObject *self);
    void kill_view() noexcept;
    void hand_back_view() noexcept;  // the killed view to the owner (ended claims keep none)
    void copy_in_staging() noexcept;  // AERON_PY_NO_TRICKS: the staging copy into the log

    ClaimOwner *owner_;
    py::object lock_;  // the client's Section lock, kept alive past the client by a detached claim
    py::object publication_;
    aeron_buffer_claim_t claim_;
    int64_t position_;
    PyObject *view_ = nullptr;  // owned; made on first access to `data`
    PyObject *staging_ = nullptr;  // owned; AERON_PY_NO_TRICKS: the bytearray behind view_
    ClaimState state_ = ClaimState::pending;
};

// Claim types and errors aeron_py registers at import (_aeron._register_publication).
struct PublicationRegistry {
    PyObject *offer_error = nullptr;      // offer_error(code, where) -> an OfferError instance
    PyObject *client_closed = nullptr;    // aeron_py.errors.ClientClosedError
    PyTypeObject *publication = nullptr;  // aeron_py.Publication
    PyTypeObject *exclusive = nullptr;    // aeron_py.ExclusivePublication
    PyTypeObject *claim = nullptr;        // aeron_py.Claim
};
PublicationRegistry &publication_registry();

// Set the Python error for a negative offer/claim `code` (the registered offer_error, else
// AeronError), naming `where`; appends aeron_errmsg() for AERON_PUBLICATION_ERROR. Returns nullptr.
PyObject *set_offer_error(int64_t code, const std::string &where);
// Set ClientClosedError (AeronError before registration). Returns nullptr.
PyObject *set_client_closed(const char *message);

void init_claim(py::module_ &m);
void init_destination(py::module_ &m);

}  // namespace aeron_py
