// BufferClaim and ClaimOwner (claim.hpp): aeron_buffer_claim_commit / _abort behind a
// memoryview that dies with the claim. commit/abort/data are raw fast methods.
#include "claim.hpp"
#include "guarded_class.hpp"

#include "dead_view.hpp"
#include "fastcall.hpp"
#include "instance.hpp"
#include "tricks.hpp"

#include <algorithm>
#include <cstring>

namespace aeron_py {

PublicationRegistry &publication_registry() {
    static PublicationRegistry registry;
    return registry;
}

PyObject *set_offer_error(int64_t code, const std::string &where) {
    std::string text = where;
    if (code == AERON_PUBLICATION_ERROR) {
        const char *message = aeron_errmsg();
        if (message != nullptr && *message) text += std::string(": ") + message;
    }
    PyObject *factory = publication_registry().offer_error;
    if (factory == nullptr) throw AeronCallError(text + " (result " + std::to_string(code) + ")", EINVAL);
    PyObject *exc = PyObject_CallFunction(factory, "Ls", static_cast<long long>(code), text.c_str());
    if (exc == nullptr) return nullptr;
    PyErr_SetObject(reinterpret_cast<PyObject *>(Py_TYPE(exc)), exc);
    Py_DECREF(exc);
    return nullptr;
}

PyObject *set_client_closed(const char *message) {
    PyObject *type = publication_registry().client_closed;
    if (type == nullptr) throw AeronCallError(message, EPIPE);
    PyErr_SetString(type, message);
    return nullptr;
}

// -- ClaimOwner ---------------------------------------------------------------------------

ClaimOwner::~ClaimOwner() {
    end_all(ClaimState::publication_closed);
    if (hook_) hook_->owner = nullptr;
    if (python_alive()) {
        Py_CLEAR(spare_view_);
        for (PyObject *&spare : spare_claims_) Py_CLEAR(spare);
    }
}

void ClaimOwner::keep_claim(PyObject *claim) noexcept {
    if (!tricks::on()) return;  // AERON_PY_NO_TRICKS: no spares, a new claim object per try_claim
    PyObject *&slot = spare_claims_[0] == nullptr ? spare_claims_[0] : spare_claims_[1];
    if (slot != nullptr) {  // both taken: the older one goes
        Py_XSETREF(spare_claims_[0], spare_claims_[1]);
        spare_claims_[1] = Py_NewRef(claim);
        return;
    }
    slot = Py_NewRef(claim);
}

// No spare under AERON_PY_NO_TRICKS (keep_claim keeps none): nullptr, a new claim object.
PyObject *ClaimOwner::reuse_claim(const py::object &publication, const aeron_buffer_claim_t &claim,
                                  int64_t position) {
    for (PyObject *&slot : spare_claims_) {
        PyObject *spare = slot;
        // Only a claim nothing else can reach: no other reference, no weak reference.
        if (spare == nullptr || !tricks::sole_reference(spare) ||
            reinterpret_cast<py::detail::instance *>(spare)->weakrefs != nullptr)
            continue;
        BufferClaim *ended = fast::self_as<BufferClaim>(spare);
        if (ended == nullptr) {
            PyErr_Clear();
            continue;
        }
        ended->restart(publication, claim, position);
        slot = nullptr;
        return spare;  // the owner's reference, now the caller's
    }
    return nullptr;
}

// No spare under AERON_PY_NO_TRICKS (keep_view keeps none): a new view per claim.
PyObject *ClaimOwner::take_view(void *data, size_t length) noexcept {
    if (spare_view_ == nullptr || !dead_view::revive(spare_view_, data, static_cast<Py_ssize_t>(length)))
        return nullptr;
    PyObject *view = spare_view_;
    spare_view_ = nullptr;
    return view;
}

void ClaimOwner::keep_view(PyObject *view) noexcept {
    // AERON_PY_NO_TRICKS (or a CPython whose memoryview layout was not checked): never kept,
    // so never revived.
    if (tricks::layouts_on() && spare_view_ == nullptr && tricks::sole_reference(view)) {
        spare_view_ = view;  // dead (killed by its claim); nobody else can reach it
        return;
    }
    Py_DECREF(view);
}

void ClaimOwner::add(BufferClaim *claim) {
    if (live_.size() == live_.capacity())  // may throw: before anything is registered
        live_.reserve(std::max<size_t>(4, 2 * live_.capacity()));
    if (!hook_) {
        auto hook = std::make_shared<Hook>();
        hook->owner = this;
        client_->add_dependent(hook);
        hook_ = std::move(hook);
    }
    live_.push_back(claim);  // cannot throw after the reserve
}

void ClaimOwner::remove(BufferClaim *claim) noexcept {
    auto it = std::find(live_.begin(), live_.end(), claim);
    if (it != live_.end()) {
        *it = live_.back();
        live_.pop_back();
    }
}

void ClaimOwner::end_all(ClaimState why) noexcept {
    std::vector<BufferClaim *> claims;
    claims.swap(live_);
    for (BufferClaim *claim : claims) claim->end(why);
}

// -- BufferClaim --------------------------------------------------------------------------

BufferClaim::BufferClaim(ClaimOwner *owner, py::object publication, const aeron_buffer_claim_t &claim,
                         int64_t position)
    : owner_(owner), lock_(py::reinterpret_borrow<py::object>(owner->lock())), publication_(std::move(publication)),
      claim_(claim), position_(position) {
    owner_->add(this);
}

BufferClaim::~BufferClaim() {
    Section section(lock_.ptr());
    if (state_ == ClaimState::pending) {
        aeron_buffer_claim_abort(&claim_);  // abandoned: the log must not stay blocked
        state_ = ClaimState::aborted;
        owner_->remove(this);
    }
    kill_view();
    hand_back_view();
}

void BufferClaim::kill_view() noexcept {
    if (view_ == nullptr) return;
    if (staging_ == nullptr) {
        dead_view::kill(view_);
        return;
    }
    // AERON_PY_NO_TRICKS: memoryview.release(); a raw export of it keeps only the staging copy.
    if (!python_alive()) return;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (!dead_view::release(view_)) PyErr_Clear();
    PyErr_Restore(type, value, tb);
}

void BufferClaim::hand_back_view() noexcept {
    if (view_ == nullptr) return;
    if (staging_ != nullptr) {  // a copy-backed view is never kept for reuse
        if (python_alive()) {
            Py_CLEAR(view_);
            Py_CLEAR(staging_);
        }
        view_ = staging_ = nullptr;
        return;
    }
    owner_->keep_view(view_);
    view_ = nullptr;
}

void BufferClaim::copy_in_staging() noexcept {
    if (staging_ == nullptr) return;
    // The bytearray cannot be resized while the view exports it, but its user may have
    // released the view first: never more than it holds, never more than the claim.
    const Py_ssize_t size = PyByteArray_GET_SIZE(staging_);
    const size_t length = std::min(claim_.length, static_cast<size_t>(size < 0 ? 0 : size));
    if (length > 0) std::memcpy(claim_.data, PyByteArray_AS_STRING(staging_), length);
}

void BufferClaim::restart(py::object publication, const aeron_buffer_claim_t &claim, int64_t position) {
    owner_->add(this);  // the only step that can throw
    publication_ = std::move(publication);
    claim_ = claim;
    position_ = position;
    state_ = ClaimState::pending;
}

void BufferClaim::end(ClaimState why) noexcept {
    if (state_ != ClaimState::pending) return;
    aeron_buffer_claim_abort(&claim_);
    state_ = why;
    kill_view();
    hand_back_view();
}

PyObject *BufferClaim::data() {
    if (state_ != ClaimState::pending) {
        PyErr_SetString(PyExc_ValueError, "claim.data: the claim has ended (committed, aborted or closed)");
        return nullptr;
    }
    if (view_ == nullptr) {
        PyObject *view = owner_->take_view(claim_.data, claim_.length);
        if (view != nullptr) {
            view_ = view;
            return Py_NewRef(view_);
        }
        if (!tricks::layouts_on()) {  // AERON_PY_NO_TRICKS: a staging copy, written to the log at commit
            view = dead_view::make_copy(claim_.data, static_cast<Py_ssize_t>(claim_.length), true);
            if (view == nullptr) return nullptr;
            if (state_ != ClaimState::pending) {  // a finalizer run by that allocation closed the client
                if (!dead_view::release(view)) PyErr_Clear();
                Py_DECREF(view);
                PyErr_SetString(PyExc_ValueError, "claim.data: the claim has ended (committed, aborted or closed)");
                return nullptr;
            }
            staging_ = Py_NewRef(PyMemoryView_GET_BASE(view));
            view_ = view;
            return Py_NewRef(view_);
        }
        view = dead_view::make(claim_.data, static_cast<Py_ssize_t>(claim_.length), true);
        if (view == nullptr) return nullptr;
        if (state_ != ClaimState::pending) {  // a finalizer run by that allocation closed the client
            dead_view::kill(view);
            Py_DECREF(view);
            PyErr_SetString(PyExc_ValueError, "claim.data: the claim has ended (committed, aborted or closed)");
            return nullptr;
        }
        view_ = view;
    }
    Py_INCREF(view_);
    return view_;
}

PyObject *BufferClaim::finish(bool commit, PyObject *self) {
    const char *call = commit ? "commit" : "abort";
    switch (state_) {
        case ClaimState::pending:
            break;
        case ClaimState::committed:
        case ClaimState::aborted:
            PyErr_Format(PyExc_RuntimeError, "claim.%s(): the claim was already %s", call,
                         state_ == ClaimState::committed ? "committed" : "aborted");
            return nullptr;
        case ClaimState::publication_closed:
            return set_offer_error(AERON_PUBLICATION_CLOSED,
                                   std::string("claim.") + call + "(): the publication was closed; the claim was aborted");
        case ClaimState::client_closed:
            return set_client_closed(commit ? "claim.commit(): the Aeron client was closed; the claim was aborted"
                                            : "claim.abort(): the Aeron client was closed; the claim was aborted");
    }
    // Kill the views first: no Python code can write into the log after this point (under
    // AERON_PY_NO_TRICKS: the staging copy goes into the log first, then its view is released).
    if (commit) copy_in_staging();
    kill_view();
    hand_back_view();
    state_ = commit ? ClaimState::committed : ClaimState::aborted;
    owner_->remove(this);
    const int rc = commit ? aeron_buffer_claim_commit(&claim_) : aeron_buffer_claim_abort(&claim_);
    owner_->keep_claim(self);
    // Detached: a spare must not keep its publication (and so its owner) alive. Released on
    // return; the owner may go with it, and this claim no longer touches the owner.
    const py::object publication = std::move(publication_);
    if (rc < 0) throw_aeron_error(commit ? "aeron_buffer_claim_commit" : "aeron_buffer_claim_abort");
    Py_RETURN_NONE;
}

namespace {

PyObject *fast_commit(PyObject *self, PyObject *) {
    AERON_PY_FAST_BEGIN
    BufferClaim *claim = fast::self_as<BufferClaim>(self);
    if (claim == nullptr) return nullptr;
    Section section(section_lock(*claim));
    return claim->commit(self);
    AERON_PY_FAST_END
}

PyObject *fast_abort(PyObject *self, PyObject *) {
    AERON_PY_FAST_BEGIN
    BufferClaim *claim = fast::self_as<BufferClaim>(self);
    if (claim == nullptr) return nullptr;
    Section section(section_lock(*claim));
    return claim->abort(self);
    AERON_PY_FAST_END
}

PyObject *get_data(PyObject *self, void *) {
    AERON_PY_FAST_BEGIN
    BufferClaim *claim = fast::self_as<BufferClaim>(self);
    if (claim == nullptr) return nullptr;
    Section section(section_lock(*claim));
    return claim->data();
    AERON_PY_FAST_END
}

PyMethodDef commit_def = {"commit", reinterpret_cast<PyCFunction>(fast_commit), METH_NOARGS,
                          "commit($self, /)\n--\n\naeron_buffer_claim_commit: publish the claimed bytes. "
                          "Raises RuntimeError when already ended, PublicationClosedError / "
                          "ClientClosedError when its publication / client closed first (it was aborted)."};
PyMethodDef abort_def = {"abort", reinterpret_cast<PyCFunction>(fast_abort), METH_NOARGS,
                         "abort($self, /)\n--\n\naeron_buffer_claim_abort: turn the claimed space into padding."};
PyGetSetDef data_def = {"data", get_data, nullptr,
                        "Writable memoryview of the claimed space; it and every slice of it raise ValueError "
                        "once the claim ends.",
                        nullptr};

const char *state_name(ClaimState state) {
    switch (state) {
        case ClaimState::pending: return "pending";
        case ClaimState::committed: return "committed";
        case ClaimState::aborted: return "aborted";
        case ClaimState::publication_closed: return "publication_closed";
        case ClaimState::client_closed: return "client_closed";
    }
    return "unknown";
}

}  // namespace

void init_claim(py::module_ &m) {
    auto cls = guarded_class<BufferClaim>(m, "BufferClaim", "aeron_buffer_claim_t: a writable window of the log.")
                   .def_property_readonly("length", &BufferClaim::length, "Claimed bytes.")
                   .def_property_readonly("position", &BufferClaim::position,
                                          "The stream position after this message (try_claim's result).")
                   .def_property_readonly(
                       "done", [](const BufferClaim &c) { return c.state() != ClaimState::pending; },
                       "True once committed, aborted, or ended by a close.")
                   .def_property_readonly(
                       "state", [](const BufferClaim &c) { return state_name(c.state()); },
                       "'pending', 'committed', 'aborted', 'publication_closed' or 'client_closed'.");
    fast::add_method(cls.unlocked(), &commit_def);
    fast::add_method(cls.unlocked(), &abort_def);
    instance::add_getter(cls.unlocked(), &data_def);
}

}  // namespace aeron_py
