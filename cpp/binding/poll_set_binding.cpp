// The Python face of PollSet (poll_set.cpp): the raw fast-call poll, argument checks, the
// cycle-collector slots and the pybind11 class.
#include "poll_set.hpp"

#include "fastcall.hpp"

namespace aeron_py {

namespace {

// Reads an optional count argument: `fallback` when absent (or None with `none_ok`), else an
// int in [0, maximum]; false with an error set otherwise.
bool read_count(PyObject *value, const char *name, long fallback, long maximum, bool none_ok, long &out) {
    if (value == nullptr || (none_ok && value == Py_None)) {
        out = fallback;
        return true;
    }
    if (!PyLong_Check(value)) {
        PyErr_Format(PyExc_TypeError, "PollSet.poll(): %s must be an int, not %s", name, Py_TYPE(value)->tp_name);
        return false;
    }
    int overflow = 0;
    const long parsed = PyLong_AsLongAndOverflow(value, &overflow);
    if (parsed == -1 && PyErr_Occurred()) return false;
    if (overflow != 0 || parsed < 0 || parsed > maximum) {
        PyErr_Format(PyExc_ValueError, "PollSet.poll(): %s must be between 0 and %ld, got %R", name, maximum, value);
        return false;
    }
    out = parsed;
    return true;
}

// A raw METH_FASTCALL method (fastcall.hpp): poll is called once per loop pass of a server
// holding thousands of subscriptions, and pybind11's dispatch would cost more than polling
// an idle set of a few entries.
PyObject *fast_poll(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    AERON_PY_FAST_BEGIN
    PollSet *set = fast::self_as<PollSet>(self);
    if (set == nullptr) return nullptr;
    static const char *const names[] = {"fragment_limit", "max_messages"};
    fast::FastArgs<2> parsed("PollSet.poll", names);
    if (!parsed.parse(args, nargs, kwnames, 0)) return nullptr;
    long limit = 0, max_messages = 0;
    if (!read_count(parsed.get(0), "fragment_limit", 10, INT32_MAX, false, limit) ||
        !read_count(parsed.get(1), "max_messages", -1, INT32_MAX, true, max_messages))
        return nullptr;
    py::object keep = py::reinterpret_borrow<py::object>(self);
    Section section(self);
    return set->poll(limit, max_messages < 0 ? SIZE_MAX : static_cast<size_t>(max_messages));
    AERON_PY_FAST_END
}

PyMethodDef poll_def = {
    "poll", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&fast_poll)), METH_FASTCALL | METH_KEYWORDS,
    "poll($self, /, fragment_limit=10, max_messages=None)\n--\n\n"
    "Polls every entry once (aeron_subscription_controlled_poll / aeron_image_controlled_poll through an "
    "aeron_controlled_fragment_assembler_t each: messages are reassembled), up to fragment_limit fragments per "
    "entry, and returns the messages as a list of (key, session_id, bytes) in delivery order ([] when nothing "
    "arrived). With max_messages, stops once that many were collected; the next poll then starts after the entry "
    "that filled it. Entries whose subscription, image or client was closed are dropped first."};

}  // namespace

// A set holds arbitrary keys, which may refer back to it: the set takes part in the cycle
// collector (tp_traverse visits every owner and key; tp_clear empties the set).
// The PollSet behind `self`, or nullptr if `self` is not an initialised PollSet.
PollSet *poll_set_of(PyObject *self) noexcept {
    if (!PyObject_TypeCheck(self, fast::type_of<PollSet>()) || !py::detail::is_holder_constructed(self))
        return nullptr;
    try {
        return py::handle(self).cast<PollSet *>();
    } catch (...) {
        return nullptr;
    }
}

int traverse(PyObject *self, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(self));  // instances of a heap type own a reference to it
    PollSet *set = poll_set_of(self);
    return set == nullptr ? 0 : set->traverse(visit, arg);
}

int clear_references(PyObject *self) {
    if (PollSet *set = poll_set_of(self)) set->clear_entries();
    return 0;
}

// pybind11 calls a method of an instance made by __new__ without __init__ on an unconstructed
// value: refuse it (self is taken as a handle and checked).
PollSet &initialised(py::handle self) {
    PollSet *set = poll_set_of(self.ptr());
    if (set != nullptr) return *set;
    if (!PyObject_TypeCheck(self.ptr(), fast::type_of<PollSet>()))
        throw py::type_error("expected a PollSet, got " + std::string(Py_TYPE(self.ptr())->tp_name));
    throw py::type_error("PollSet object is not initialised (call PollSet())");
}

void init_poll_set(py::module_ &m) {
    py::class_<PollSet> cls(m, "PollSet",
                            "Many subscriptions and images polled by one call (not thread-safe; see aeron_py.PollSet).",
                            py::custom_type_setup([](PyHeapTypeObject *heap_type) {
                                auto *type = &heap_type->ht_type;
                                type->tp_flags |= Py_TPFLAGS_HAVE_GC;
                                type->tp_traverse = traverse;
                                type->tp_clear = clear_references;
                            }));
    cls.def(py::init<>())
        .def(
            "add",
            [](py::handle self, py::object owner, py::object key) {
                Section section(self.ptr());
                initialised(self).add(owner, key);
            },
            py::arg("owner"), py::arg("key"),
            "Adds a Subscription or a live Image with its key (both held by strong references). ValueError if "
            "already in the set, TypeError for anything else, AeronError if closed.")
        .def(
            "remove",
            [](py::handle self, py::handle owner) {
                Section section(self.ptr());
                return initialised(self).remove(owner);
            },
            py::arg("owner"), "Removes an entry; False if it is not in the set.")
        .def(
            "clear",
            [](py::handle self) {
                Section section(self.ptr());
                initialised(self).clear();
            },
            "Removes every entry.")
        .def(
            "end_of_stream",
            [](py::handle self) {
                Section section(self.ptr());
                return initialised(self).end_of_stream();
            },
            "(key, session_id) of each image that reached its end of stream since the last call "
            "(aeron_image_is_end_of_stream; a subscription's images are walked with "
            "aeron_subscription_for_each_image), each reported once.")
        .def("__len__",
             [](py::handle self) {
                 Section section(self.ptr());
                 return initialised(self).size();
             })
        .def(
            "__contains__",
            [](py::handle self, py::handle owner) {
                Section section(self.ptr());
                return initialised(self).contains(owner);
            },
            py::arg("owner"));
    fast::add_method(cls, &poll_def);
}

}  // namespace aeron_py
