// The hot publication calls as raw METH_FASTCALL methods (fastcall.hpp): offer, offer_batch
// and try_claim. Zero-copy: bytes are read in place (PyBytes_AS_STRING), any other object
// through the buffer protocol (C-contiguous, checked). Terminal results raise the typed
// errors aeron_py registered; retryable ones (NOT_CONNECTED, BACK_PRESSURED, ADMIN_ACTION)
// come back as negative ints from offer; try_claim raises for every negative result.
#include "publication.hpp"

#include <memory>
#include <vector>

#include "fastcall.hpp"
#include "recycled_int.hpp"
#include "instance.hpp"

#include <string>

namespace aeron_py {

namespace {

// A borrowed view of a bytes-like argument; `ok` is false with a clear error set.
class Bytes {
public:
    Bytes(PyObject *object, const char *function, const char *what, Py_ssize_t index = -1) {
        if (PyBytes_CheckExact(object)) {
            data_ = reinterpret_cast<const uint8_t *>(PyBytes_AS_STRING(object));
            length_ = static_cast<size_t>(PyBytes_GET_SIZE(object));
            ok_ = true;
            return;
        }
        if (!PyObject_CheckBuffer(object)) {
            if (index >= 0)
                PyErr_Format(PyExc_TypeError, "%s(): item %zd of %s is not a bytes-like object (got %s)", function,
                             index, what, Py_TYPE(object)->tp_name);
            else
                PyErr_Format(PyExc_TypeError, "%s(): %s must be a bytes-like object (bytes, bytearray, memoryview, "
                             "...), not %s", function, what, Py_TYPE(object)->tp_name);
            return;
        }
        if (PyObject_GetBuffer(object, &view_, PyBUF_SIMPLE) != 0) {
            if (!PyErr_ExceptionMatches(PyExc_BufferError)) return;  // e.g. a released memoryview: as raised
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            if (index >= 0)
                PyErr_Format(PyExc_BufferError, "%s(): item %zd of %s must be a C-contiguous buffer (%S)", function,
                             index, what, value != nullptr ? value : Py_None);
            else
                PyErr_Format(PyExc_BufferError, "%s(): %s must be a C-contiguous buffer (%S)", function, what,
                             value != nullptr ? value : Py_None);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            return;
        }
        held_ = true;
        data_ = static_cast<const uint8_t *>(view_.buf);
        length_ = static_cast<size_t>(view_.len);
        ok_ = true;
    }
    ~Bytes() {
        if (held_) PyBuffer_Release(&view_);
    }
    Bytes(const Bytes &) = delete;
    Bytes &operator=(const Bytes &) = delete;

    bool ok() const { return ok_; }
    const uint8_t *data() const { return data_; }
    size_t length() const { return length_; }

private:
    Py_buffer view_{};
    const uint8_t *data_ = nullptr;
    size_t length_ = 0;
    bool held_ = false;
    bool ok_ = false;
};

RecycledInts positions;  // the ints offer returns (GIL held by every caller)

// A negative offer result: retryable ones are returned, terminal ones raise.
PyObject *offer_result(const Publication &pub, int64_t result, const char *function) {
    if (result >= AERON_PUBLICATION_ADMIN_ACTION) return positions.make(result);
    return set_offer_error(result, std::string(function) + " on " + pub.channel());
}

PyObject *fast_offer(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    AERON_PY_FAST_BEGIN
    Publication *pub = fast::self_as<Publication>(self);
    if (pub == nullptr) return nullptr;
    Section section(section_lock(*pub));
    PyObject *buffer;
    if (kwnames == nullptr && PyVectorcall_NARGS(nargs) == 1) {
        buffer = args[0];
    } else {
        static const char *const names[] = {"buffer"};
        fast::FastArgs<1> parsed("offer", names);
        if (!parsed.parse(args, nargs, kwnames, 1)) return nullptr;
        buffer = parsed.get(0);
    }
    Bytes bytes(buffer, "offer", "buffer");
    if (!bytes.ok()) return nullptr;
    if (!pub->open()) return set_offer_error(AERON_PUBLICATION_CLOSED, "offer on " + pub->channel());
    return offer_result(*pub, pub->offer(bytes.data(), bytes.length()), "offer");
    AERON_PY_FAST_END
}

PyObject *fast_offer_batch(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    AERON_PY_FAST_BEGIN
    Publication *pub = fast::self_as<Publication>(self);
    if (pub == nullptr) return nullptr;
    Section section(section_lock(*pub));
    static const char *const names[] = {"buffers"};
    fast::FastArgs<1> parsed("offer_batch", names);
    if (!parsed.parse(args, nargs, kwnames, 1)) return nullptr;
    py::object sequence = py::reinterpret_steal<py::object>(
        PySequence_Fast(parsed.get(0), "offer_batch(): buffers must be a sequence of bytes-like objects"));
    if (!sequence) return nullptr;
    if (!pub->open()) return set_offer_error(AERON_PUBLICATION_CLOSED, "offer_batch on " + pub->channel());
    Py_ssize_t offered = 0;
    // Size and item re-read each time and the item held: a Python-level __buffer__ (3.12+)
    // may mutate the list, or close the publication, while its buffer is taken.
    for (; offered < PySequence_Fast_GET_SIZE(sequence.ptr()); offered++) {
        py::object item = py::reinterpret_borrow<py::object>(PySequence_Fast_GET_ITEM(sequence.ptr(), offered));
        Bytes bytes(item.ptr(), "offer_batch", "buffers", offered);
        if (!bytes.ok()) return nullptr;
        if (!pub->open())
            return set_offer_error(AERON_PUBLICATION_CLOSED, "offer_batch on " + pub->channel() + " (after " +
                                                                 std::to_string(offered) + " offered)");
        const int64_t result = pub->offer(bytes.data(), bytes.length());
        if (result >= 0) continue;
        if (result >= AERON_PUBLICATION_ADMIN_ACTION) break;  // retryable: the caller offers the rest later
        return set_offer_error(result, "offer_batch on " + pub->channel() + " (after " + std::to_string(offered) +
                                           " offered)");
    }
    return PyLong_FromSsize_t(offered);
    AERON_PY_FAST_END
}

// The most parts one offerv takes (a message gathered from more is better built in Python).
constexpr Py_ssize_t kMaxOffervParts = 1024;

PyObject *fast_offerv(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    AERON_PY_FAST_BEGIN
    Publication *pub = fast::self_as<Publication>(self);
    if (pub == nullptr) return nullptr;
    Section section(section_lock(*pub));
    static const char *const names[] = {"parts"};
    fast::FastArgs<1> parsed("offerv", names);
    if (!parsed.parse(args, nargs, kwnames, 1)) return nullptr;
    py::object sequence = py::reinterpret_steal<py::object>(
        PySequence_Fast(parsed.get(0), "offerv(): parts must be a sequence of bytes-like objects"));
    if (!sequence) return nullptr;
    // Every part's buffer is taken (and its item held) before the one C call: a Python-level
    // __buffer__ may mutate the list or close the publication meanwhile, which is checked after.
    std::vector<py::object> items;
    std::vector<std::unique_ptr<Bytes>> held;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(sequence.ptr()); i++) {
        if (i >= kMaxOffervParts) {
            PyErr_Format(PyExc_ValueError, "offerv(): at most %zd parts", kMaxOffervParts);
            return nullptr;
        }
        items.push_back(py::reinterpret_borrow<py::object>(PySequence_Fast_GET_ITEM(sequence.ptr(), i)));
        held.push_back(std::make_unique<Bytes>(items.back().ptr(), "offerv", "parts", i));
        if (!held.back()->ok()) return nullptr;
    }
    if (held.empty()) {
        PyErr_SetString(PyExc_ValueError, "offerv(): parts must not be empty");
        return nullptr;
    }
    if (!pub->open()) return set_offer_error(AERON_PUBLICATION_CLOSED, "offerv on " + pub->channel());
    std::vector<aeron_iovec_t> iov(held.size());
    for (size_t i = 0; i < held.size(); i++) {
        iov[i].iov_base = const_cast<uint8_t *>(held[i]->data());
        iov[i].iov_len = held[i]->length();
    }
    return offer_result(*pub, pub->offerv(iov.data(), iov.size()), "offerv");
    AERON_PY_FAST_END
}

// A byte count argument: an int in [0, limit], else TypeError / ValueError naming `bound`
// (the limit the user should know) with the value `shown`; false with the error set.
bool parse_length(PyObject *arg, const char *function, unsigned long long limit, const char *bound, size_t shown,
                  size_t &out) {
    if (!PyLong_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "%s(): length must be an int, not %s", function, Py_TYPE(arg)->tp_name);
        return false;
    }
    int overflow = 0;
    const long long length = PyLong_AsLongLongAndOverflow(arg, &overflow);
    if (length == -1 && PyErr_Occurred()) return false;
    if (overflow != 0 || length < 0 || static_cast<unsigned long long>(length) > limit) {
        PyErr_Format(PyExc_ValueError, "%s(): length must be between 0 and %s (%zu), got %S", function, bound, shown,
                     arg);
        return false;
    }
    out = static_cast<size_t>(length);
    return true;
}

PyObject *fast_append_padding(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    AERON_PY_FAST_BEGIN
    Publication *pub = fast::self_as<Publication>(self);
    if (pub == nullptr) return nullptr;
    Section section(section_lock(*pub));
    static const char *const names[] = {"length"};
    fast::FastArgs<1> parsed("append_padding", names);
    if (!parsed.parse(args, nargs, kwnames, 1)) return nullptr;
    if (!pub->exclusive()) {
        PyErr_SetString(PyExc_TypeError,
                        "append_padding() is for an ExclusivePublication (aeron_exclusive_publication_append_padding)");
        return nullptr;
    }
    const size_t max_message = pub->constants().max_message_length;
    size_t length = 0;
    if (!parse_length(parsed.get(0), "append_padding", max_message, "max_message_length", max_message, length))
        return nullptr;
    if (!pub->open()) return set_offer_error(AERON_PUBLICATION_CLOSED, "append_padding on " + pub->channel());
    return offer_result(*pub, pub->append_padding(length), "append_padding");
    AERON_PY_FAST_END
}

PyObject *fast_try_claim(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    AERON_PY_FAST_BEGIN
    Publication *pub = fast::self_as<Publication>(self);
    if (pub == nullptr) return nullptr;
    Section section(section_lock(*pub));
    PyObject *length_arg;
    if (kwnames == nullptr && PyVectorcall_NARGS(nargs) == 1) {
        length_arg = args[0];
    } else {
        static const char *const names[] = {"length"};
        fast::FastArgs<1> parsed("try_claim", names);
        if (!parsed.parse(args, nargs, kwnames, 1)) return nullptr;
        length_arg = parsed.get(0);
    }
    size_t length = 0;
    if (!parse_length(length_arg, "try_claim", SIZE_MAX, "max_payload_length", pub->constants().max_payload_length,
                      length))
        return nullptr;
    auto where = [&] { return "try_claim(" + std::to_string(length) + ") on " + pub->channel(); };  // errors only
    if (!pub->open()) return set_offer_error(AERON_PUBLICATION_CLOSED, where());
    aeron_buffer_claim_t claim{};
    const int64_t result = pub->try_claim(length, &claim);
    if (result < 0) return set_offer_error(result, where());
    const auto publication = py::reinterpret_borrow<py::object>(self);
    std::unique_ptr<BufferClaim> owned;
    try {
        if (PyObject *reused = pub->claims().reuse_claim(publication, claim, result)) return reused;
        owned = std::make_unique<BufferClaim>(&pub->claims(), publication, claim, result);
    } catch (...) {
        aeron_buffer_claim_abort(&claim);  // out of memory: never leave the log blocked
        throw;
    }
    // From here the BufferClaim owns the claim: its destructor aborts it if adopt fails.
    return instance::adopt(publication_registry().claim, std::move(owned)).release().ptr();
    AERON_PY_FAST_END
}

PyMethodDef offer_def = {
    "offer", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_offer)), METH_FASTCALL | METH_KEYWORDS,
    "offer($self, buffer, /)\n--\n\naeron_publication_offer (or aeron_exclusive_publication_offer): offer one "
    "message, zero-copy from bytes or any C-contiguous buffer. Returns the new position (> 0), or NOT_CONNECTED / "
    "BACK_PRESSURED / ADMIN_ACTION (negative) to retry later; raises PublicationClosedError, "
    "MaxPositionExceededError or PublicationError."};
PyMethodDef offer_batch_def = {
    "offer_batch", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_offer_batch)),
    METH_FASTCALL | METH_KEYWORDS,
    "offer_batch($self, buffers, /)\n--\n\naeron_publication_offer for each buffer in order until one is not "
    "accepted. Returns how many were offered (a retryable result stopped the rest); raises the terminal "
    "OfferError subclasses, TypeError naming the index of an item that is not bytes-like."};
PyMethodDef offerv_def = {
    "offerv", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_offerv)), METH_FASTCALL | METH_KEYWORDS,
    "offerv($self, parts, /)\n--\n\naeron_publication_offerv: offer ONE message gathered from the parts in order "
    "(e.g. a header and a body, no concatenation in Python), zero-copy. Returns and raises as offer(); "
    "ValueError for no parts or more than 1024."};
PyMethodDef append_padding_def = {
    "append_padding", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_append_padding)),
    METH_FASTCALL | METH_KEYWORDS,
    "append_padding($self, length, /)\n--\n\naeron_exclusive_publication_append_padding: append a padding frame of "
    "`length` bytes (subscribers skip it), e.g. to align the next message; returns and raises as offer(). "
    "ExclusivePublication only (TypeError otherwise)."};
PyMethodDef try_claim_def = {
    "try_claim", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fast_try_claim)),
    METH_FASTCALL | METH_KEYWORDS,
    "try_claim($self, length, /)\n--\n\naeron_publication_try_claim: claim `length` bytes of the log to write in "
    "place. Returns a Claim (commit() or abort() it, or use it as a context manager); raises the typed OfferError "
    "for every negative result (`.retryable` tells which to retry)."};

}  // namespace

void init_publication_fast(py::handle publication_type) {
    fast::add_method(publication_type, &offer_def);
    fast::add_method(publication_type, &offer_batch_def);
    fast::add_method(publication_type, &try_claim_def);
    fast::add_method(publication_type, &offerv_def);
    fast::add_method(publication_type, &append_padding_def);
}

}  // namespace aeron_py
