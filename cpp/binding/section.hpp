// One client's calls, one at a time, on free-threaded CPython.
//
// Every guard of docs/safety.md (a poll's owner, a close deferred while a poll runs, a handle
// never freed under another call, dead views) was argued under the GIL: between two points
// where a thread may let go of the GIL (a wait in ReleasedGil, Python code that blocks), no
// other thread touches the client's state. On a free-threaded build (Py_GIL_DISABLED) each
// client has a lock object (ClientState::lock), and every call on the client or on anything
// it made (publications, claims, subscriptions, images, counters, views) runs in a critical
// section on it. CPython suspends a critical section exactly where a GIL would be let go: when
// the thread detaches (PyEval_SaveThread, so every ReleasedGil) or blocks on another lock. So
// each guard's argument holds per client, and threads on different clients run in parallel.
// Critical sections cannot deadlock: a thread that would wait suspends the sections it holds.
//
// On builds with the GIL, Section compiles to nothing.
#pragma once

#include <Python.h>

namespace aeron_py {

class Section {
public:
#ifdef Py_GIL_DISABLED
    // `lock` null: nothing to guard (an object of no client, such as an image snapshot).
    explicit Section(PyObject *lock) noexcept : held_(lock != nullptr) {
        if (held_) PyCriticalSection_Begin(&section_, lock);
    }
    ~Section() {
        if (held_) PyCriticalSection_End(&section_);
    }
#else
    explicit Section(PyObject *) noexcept {}
#endif
    Section(const Section &) = delete;
    Section &operator=(const Section &) = delete;

private:
#ifdef Py_GIL_DISABLED
    PyCriticalSection section_;
    bool held_;
#endif
};

// A new lock object (a bare `object()`: only its per-object mutex is used). New reference.
inline PyObject *new_lock_object() { return PyObject_CallNoArgs(reinterpret_cast<PyObject *>(&PyBaseObject_Type)); }

}  // namespace aeron_py
